// berth's status lanes alone, in a Node process of their own: the fleet's
// statuses read through berth's own reader (dist/git/status.js) with the lane
// count `berth status` uses, and nothing of the survey around them. The status
// race runs it beside `berth status` and git's floor: the gap between it and
// the floor is what the lanes cost, the gap between it and `berth status` is
// berth's own work (docs/performance.md). It loads its modules as ES modules,
// which costs more than the status's bundled core: an upper bound.
//
//   node bench/lanes-alone.mjs <file of worktree paths, one a line> [lanes]   # after npm run build
//
// The lane count is status's own unless given: other counts show what the default is worth.
import { readFileSync } from "node:fs";

const dist = new URL("../dist/", import.meta.url);
const { readWorktreeStatuses } = await import(new URL("git/status.js", dist).href);
const { DEFAULT_POOL_SIZE } = await import(new URL("core/fleet/pool.js", dist).href);

const paths = readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean);
const lanes = process.argv[3] === undefined ? DEFAULT_POOL_SIZE : Number(process.argv[3]);
if (!Number.isInteger(lanes) || lanes < 1) {
  process.stderr.write(
    `lanes-alone: the lane count must be a whole number from 1, not ${process.argv[3]}\n`,
  );
  process.exit(2);
}
const statuses = await readWorktreeStatuses(paths, lanes);
const unread = statuses.filter((status) => status === null).length;
if (unread > 0) {
  process.stderr.write(`lanes-alone: ${unread} of ${paths.length} statuses unread\n`);
  process.exit(1);
}
