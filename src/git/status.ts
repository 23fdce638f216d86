import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseStatusPorcelainV2, type StatusSummary } from "./parse.js";
import { gitEnv, runGit } from "./run.js";

const STATUS_ARGS = [
  "status",
  "--porcelain=v2",
  "-z",
  "--untracked-files=normal",
  // Changes inside a submodule are changes (spec section 7), whatever
  // `submodule.<name>.ignore` or `diff.ignoreSubmodules` say; git recurses
  // into populated submodules itself, so this costs no process of berth's.
  "--ignore-submodules=none",
] as const;

/**
 * One worktree's changes, submodules' included. Read-only: with
 * GIT_OPTIONAL_LOCKS=0 git neither takes the index lock nor refreshes the
 * index on disk.
 */
export async function readWorktreeStatus(path: string): Promise<StatusSummary> {
  const { stdout } = await runGit(STATUS_ARGS, { cwd: path });
  return parseStatusPorcelainV2(stdout);
}

/**
 * `git status` for many worktrees: still one git process each, but forked by
 * `lanes` small `sh` loops instead of by Node, whose per-spawn cost (a fork of
 * a large process) is several times git's own run time in a big fleet. The
 * script text is fixed; paths reach it only as arguments, never spliced in.
 * Each result is framed by a random marker that git's -z output cannot forge.
 * A worktree git cannot read yields null.
 */
export async function readWorktreeStatuses(
  paths: readonly string[],
  lanes: number,
): Promise<(StatusSummary | null)[]> {
  const results = new Array<StatusSummary | null>(paths.length).fill(null);
  if (paths.length <= lanes) {
    // A lane of one would spawn `sh` only to spawn git: spawn git directly.
    await Promise.all(
      paths.map(async (path, i) => {
        results[i] = await readWorktreeStatus(path).catch(() => null);
      }),
    );
    return results;
  }
  const laneCount = Math.max(1, Math.min(lanes, paths.length));
  const byLane = Array.from({ length: laneCount }, () => [] as number[]);
  for (let i = 0; i < paths.length; i++) byLane[i % laneCount]?.push(i);
  await Promise.all(
    byLane.map(async (indexes) => {
      const outputs = await runStatusLane(indexes.map((i) => paths[i] as string));
      indexes.forEach((pathIndex, k) => {
        const output = outputs[k];
        results[pathIndex] =
          output === undefined || output === null ? null : parseStatusPorcelainV2(output);
      });
    }),
  );
  return results;
}

const LANE_SCRIPT = `nonce=$1; shift
for wt do
  git -C "$wt" ${STATUS_ARGS.join(" ")} 2>/dev/null
  printf '\\000%s %s\\000' "$nonce" "$?"
done`;

function runStatusLane(paths: readonly string[]): Promise<(string | null)[]> {
  const nonce = `berth-${randomBytes(16).toString("hex")}`;
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", LANE_SCRIPT, "sh", nonce, ...paths], {
      env: gitEnv(),
      stdio: ["ignore", "pipe", "ignore"],
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", () =>
      resolve(splitLaneOutput(Buffer.concat(chunks).toString("utf8"), nonce, paths.length)),
    );
  });
}

/** Splits a lane's stream into one output per worktree (null where git failed). */
export function splitLaneOutput(stream: string, nonce: string, count: number): (string | null)[] {
  const outputs: (string | null)[] = [];
  const marker = new RegExp(`\\0${nonce} (\\d+)\\0`, "g");
  let start = 0;
  for (const match of stream.matchAll(marker)) {
    const body = stream.slice(start, match.index);
    outputs.push(match[1] === "0" ? body : null);
    start = (match.index ?? 0) + match[0].length;
  }
  while (outputs.length < count) outputs.push(null);
  return outputs;
}
