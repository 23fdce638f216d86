// The landing queue's benchmark (issue 17; docs/performance.md, "Landing a fleet").
//
//   npm run build && node bench/queue.mjs [--submissions 10] [--gate-s 2] [--batches 1,5] [--out bench/queue-results.json]
//
// For each batch size: a fresh repository whose gate is one check sleeping
// --gate-s seconds, --submissions berths forked from the same trunk tip, each
// touching its own file, submitted with `berth accept --no-wait --yes`; then
// one `berth queue run`, timed. Reported per batch size: wall time of the run,
// the gate runs it reports, entries landed and rejected, and the load average
// before and after (the figures mean little on a busy machine).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readArgs } from "./args.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BERTH = join(here, "..", "dist", "cli.cjs");
const args = readArgs(process.argv.slice(2), {
  usage:
    "Usage: node bench/queue.mjs [--submissions 10] [--gate-s 2] [--batches 1,5] [--out bench/queue-results.json]  (after npm run build)",
  options: ["submissions", "gate-s", "batches", "out"],
});
const submissions = args.number("submissions", 10);
const gateSeconds = args.number("gate-s", 2, { min: 0, fraction: true });
const batches = args.text("batches", "1,5").split(",").map(Number);
if (batches.some((size) => !Number.isInteger(size) || size < 1)) {
  args.refuse(
    `--batches must be whole numbers from 1, separated by commas, not ${args.text("batches")}`,
  );
}
const outFile = args.text("out", join(here, "queue-results.json"));
const log = (text) => process.stderr.write(`${text}\n`);
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);

function isolatedEnv(home) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("GIT_") && !key.startsWith("BERTH_")) env[key] = value;
  }
  return {
    ...env,
    HOME: home,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    NO_COLOR: "1",
  };
}

function berth(cwd, env, berthArgs) {
  const run = spawnSync(process.execPath, [BERTH, ...berthArgs, "--json"], {
    cwd,
    env,
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`berth ${berthArgs.join(" ")}: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** One fleet of `submissions` queued entries; returns the timed `queue run`. */
function measure(batch) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "berth-queue-bench-")));
  try {
    const home = join(root, "home");
    execFileSync("mkdir", ["-p", home]);
    const env = isolatedEnv(home);
    const repo = join(root, "repo");
    const git = (gitArgs, cwd = repo) =>
      execFileSync("git", gitArgs, { cwd, env, encoding: "utf8" });
    execFileSync("git", ["init", "-q", "-b", "main", repo], { env });
    git(["config", "gc.auto", "0"]);
    writeFileSync(
      join(repo, "berth.toml"),
      `[gate]\nchecks = [{ name = "slow", run = "sleep ${gateSeconds}" }]\n\n[acceptance]\nbatch = ${batch}\n`,
    );
    writeFileSync(join(repo, "README.md"), "# bench\n");
    git(["add", "-A"]);
    git(["commit", "-q", "-m", "initial"]);
    for (let i = 0; i < submissions; i++) {
      const started = berth(repo, env, ["start", `s${i}`]);
      writeFileSync(join(started.data.path, `s${i}.txt`), `${i}\n`);
      git(["add", "-A"], started.data.path);
      git(["commit", "-q", "-m", `s${i}`], started.data.path);
      berth(repo, env, ["accept", started.data.id, "--no-wait", "--yes"]);
    }
    const loadBefore = load();
    const t0 = performance.now();
    const run = berth(repo, env, ["queue", "run"]);
    const wallMs = Math.round(performance.now() - t0);
    const decided = run.data.decided;
    return {
      batch,
      submissions,
      gate_s: gateSeconds,
      wall_ms: wallMs,
      gate_runs: run.data.gate_runs,
      landed: decided.filter((e) => e.state === "landed").length,
      rejected: decided.filter((e) => e.state === "rejected").length,
      load_before: loadBefore,
      load_after: load(),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const results = [];
for (const batch of batches) {
  log(`batch = ${batch}: ${submissions} submissions, a ${gateSeconds} s gate ...`);
  const row = measure(batch);
  results.push(row);
  log(
    `  wall ${(row.wall_ms / 1000).toFixed(1)} s, ${row.gate_runs} gate run(s), ${row.landed} landed, ${row.rejected} rejected (load ${row.load_before.join(" ")} -> ${row.load_after.join(" ")})`,
  );
}
const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? "?", node: process.version };
writeFileSync(
  outFile,
  `${JSON.stringify({ machine, at: new Date().toISOString(), results }, null, 2)}\n`,
);
log(`written to ${outFile}`);
