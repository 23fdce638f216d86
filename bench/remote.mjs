// `berth status --remote` against a bare remote (docs/performance.md, "The remote's berths").
//
//   npm run build && node bench/remote.mjs [--branches 30] [--runs 7] [--out /tmp/remote.json]
//   node bench/remote.mjs --berth /elsewhere/dist/cli.cjs       # another build, on the same fleet shape
//
// A bare remote and two clones, as two machines. In clone one: --branches
// berths with a commit each, every third gated (its receipt note published),
// each pushed; a fifth of them squash-merged into the trunk and a fifth
// fast-forwarded, the trunk pushed. Clone two, where none of them is checked
// out, then runs `berth status --remote --json`: a warm-up, --runs timed runs
// (median, min, max), and one run under GIT_TRACE counting the git processes.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readArgs } from "./args.mjs";
import { benchEnv } from "./fleet.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = readArgs(process.argv.slice(2), {
  usage:
    "Usage: node bench/remote.mjs [--branches 30] [--runs 7] [--out <file>] [--berth <dist/cli.cjs>]  (after npm run build)",
  options: ["berth", "branches", "runs", "out"],
});
const BERTH = args.text("berth", join(here, "..", "dist", "cli.cjs"));
const branches = args.number("branches", 30);
const runs = args.number("runs", 7);
const outFile = args.text("out", null);
const log = (text) => process.stderr.write(`${text}\n`);
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);

const root = realpathSync(mkdtempSync(join(tmpdir(), "berth-bench-remote-")));
const env = benchEnv(join(root, "home"));
execFileSync("mkdir", ["-p", env.HOME]);
const git = (cwd, gitArgs) =>
  execFileSync("git", gitArgs, {
    cwd,
    env,
    encoding: "utf8",
    stdio: "pipe",
    maxBuffer: 1 << 26,
  }).trim();
function berth(cwd, berthArgs, extraEnv = {}) {
  const run = spawnSync(process.execPath, [BERTH, ...berthArgs, "--json"], {
    cwd,
    env: { ...env, ...extraEnv },
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  if (run.status !== 0) throw new Error(`berth ${berthArgs.join(" ")}: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout);
}

try {
  const origin = join(root, "origin.git");
  git(root, ["init", "-q", "--bare", "-b", "main", origin]);
  const one = join(root, "one");
  git(root, ["clone", "-q", origin, one]);
  writeFileSync(
    join(one, "berth.toml"),
    '[gate]\nchecks = [{ name = "ok", run = "true" }]\n[remote]\nname = "origin"\npublish_receipts = true\n',
  );
  git(one, ["add", "berth.toml"]);
  git(one, ["commit", "-q", "-m", "berth.toml"]);
  git(one, ["push", "-q", "origin", "main"]);
  log(`${branches} berths in clone one, every third gated, each pushed...`);
  const started = [];
  for (let i = 1; i <= branches; i++) {
    const { data } = berth(one, ["start", `r${i}`]);
    writeFileSync(join(data.path, `r${i}.txt`), `${i}\n`);
    git(data.path, ["add", "."]);
    git(data.path, ["commit", "-q", "-m", `r${i}`]);
    if (i % 3 === 0) berth(data.path, ["gate"]);
    git(data.path, ["push", "-q", "origin", data.branch]);
    started.push(data);
  }
  // A fifth squash-merged (a forge's squash), a fifth fast-forwarded: landed both ways.
  for (const [i, b] of started.entries()) {
    if (i % 5 === 1) {
      git(one, ["merge", "-q", "--squash", b.branch]);
      git(one, ["commit", "-q", "-m", `squash ${b.branch}`]);
    } else if (i % 5 === 3) git(one, ["merge", "-q", "--no-edit", b.branch]);
  }
  git(one, ["push", "-q", "origin", "main"]);
  const two = join(root, "two");
  git(root, ["clone", "-q", origin, two]);

  const first = berth(two, ["status", "--remote"]).data.remote_refs;
  const times = [];
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    berth(two, ["status", "--remote"]);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const trace = join(root, "trace");
  berth(two, ["status", "--remote"], { GIT_TRACE: trace });
  const processes = readFileSync(trace, "utf8")
    .split("\n")
    .filter((line) => /trace: (built-in|exec):/.test(line)).length;
  times.sort((a, b) => a - b);
  const result = {
    branches: first.length,
    landed: first.filter((r) => r.landed).length,
    green: first.filter((r) => r.green).length,
    runs,
    median_ms: Math.round(times[Math.floor(times.length / 2)] * 10) / 10,
    min_ms: Math.round(times[0] * 10) / 10,
    max_ms: Math.round(times[times.length - 1] * 10) / 10,
    git_processes: processes,
    load: load(),
  };
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (outFile) writeFileSync(outFile, text);
  process.stdout.write(text);
} finally {
  rmSync(root, { recursive: true, force: true });
}
