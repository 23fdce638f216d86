// berth's benchmarks (issue: performance budget, spec section 10).
// Usage: npm run bench [-- --sizes 100,500 --runs 5]
// Prints a table and writes the figures to bench/results.json.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildFleet } from "./fleet.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BERTH = join(here, "..", "dist", "cli.js");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : args[i + 1];
};
const sizes = opt("sizes", "100,500").split(",").map(Number);
const runs = Number(opt("runs", "5"));
const cores = availableParallelism();

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function time(label, cmd, argv, options, count = runs) {
  const samples = [];
  spawnSync(cmd, argv, options); // warm-up: page cache, git's own caches
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(cmd, argv, { ...options, maxBuffer: 1 << 28 });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (result.status !== 0) {
      throw new Error(
        `${label} failed (${result.status}): ${result.stderr?.toString().slice(0, 500)}`,
      );
    }
    samples.push(ms);
  }
  return {
    label,
    median_ms: Math.round(median(samples) * 10) / 10,
    samples: samples.map(Math.round),
  };
}

/** Counts git processes a command spawns with a logging wrapper on PATH. */
function countGit(dir, env, cmd, argv, cwd) {
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const bin = join(dir, "count-bin");
  const log = join(dir, "git-count.log");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$1" >> '${log}'\nexec '${realGit}' "$@"\n`);
  chmodSync(join(bin, "git"), 0o755);
  writeFileSync(log, "");
  spawnSync(cmd, argv, { cwd, env: { ...env, PATH: `${bin}:${env.PATH}` }, maxBuffer: 1 << 28 });
  const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { total: lines.length, status: lines.filter((l) => l === "status").length };
}

const results = { machine: machine(), runs, sizes: {}, startup: null };

for (const size of sizes) {
  process.stderr.write(`building a fleet of ${size} worktrees...\n`);
  const fleet = buildFleet({ worktrees: size });
  const { repo, env } = fleet;
  const listFile = join(fleet.root, "worktrees.txt");
  writeFileSync(listFile, `${fleet.worktreePaths.join("\n")}\n`);
  const opts = { cwd: repo, env };
  const statusCmd = `git -C "$0" status --porcelain=v2 -z --untracked-files=normal >/dev/null`;
  const rows = [
    time("berth status --json", process.execPath, [BERTH, "status", "--json"], opts),
    time(
      "loop: git status per worktree (sequential)",
      "sh",
      ["-c", `while read -r wt; do ${statusCmd.replace('"$0"', '"$wt"')}; done < "${listFile}"`],
      opts,
    ),
    time(
      `xargs -P ${cores}: git status per worktree`,
      "sh",
      ["-c", `xargs -P ${cores} -I{} sh -c '${statusCmd.replace('"$0"', '"{}"')}' < "${listFile}"`],
      opts,
    ),
  ];
  const gitCount = countGit(fleet.root, env, process.execPath, [BERTH, "status", "--json"], repo);
  results.sizes[size] = {
    worktrees: fleet.worktreePaths.length,
    rows,
    ratios: {
      status_vs_xargs: +(rows[0].median_ms / rows[2].median_ms).toFixed(2),
      status_vs_sequential: +(rows[0].median_ms / rows[1].median_ms).toFixed(2),
    },
    git_processes: { status: gitCount },
  };
  rmSync(fleet.root, { recursive: true, force: true });
}

// Start-up on a 1-worktree repository.
{
  const fleet = buildFleet({ worktrees: 0, trunkCommits: 10, files: 10 });
  const opts = { cwd: fleet.repo, env: fleet.env };
  const node = time("node -e 0", process.execPath, ["-e", "0"], opts, runs * 4);
  const version = time("berth --version", process.execPath, [BERTH, "--version"], opts, runs * 4);
  const help = time("berth --help", process.execPath, [BERTH, "--help"], opts, runs * 4);
  const status = time(
    "berth status (1 worktree)",
    process.execPath,
    [BERTH, "status"],
    opts,
    runs * 4,
  );
  results.startup = {
    rows: [node, version, help, status],
    overhead_ms: {
      version: +(version.median_ms - node.median_ms).toFixed(1),
      help: +(help.median_ms - node.median_ms).toFixed(1),
      status: +(status.median_ms - node.median_ms).toFixed(1),
    },
  };
  rmSync(fleet.root, { recursive: true, force: true });
}

writeFileSync(join(here, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
for (const [size, r] of Object.entries(results.sizes)) {
  console.log(`\n${size} worktrees (${r.worktrees} registered)`);
  for (const row of r.rows)
    console.log(`  ${row.label.padEnd(48)} ${String(row.median_ms).padStart(9)} ms`);
  console.log(
    `  ratios: status/xargs ${r.ratios.status_vs_xargs}, status/sequential ${r.ratios.status_vs_sequential}`,
  );
  console.log(
    `  git processes for status: ${r.git_processes.status.total} (${r.git_processes.status.status} status)`,
  );
}
console.log("\nstart-up");
for (const row of results.startup.rows)
  console.log(`  ${row.label.padEnd(48)} ${String(row.median_ms).padStart(9)} ms`);
console.log(`  overhead vs node -e 0: ${JSON.stringify(results.startup.overhead_ms)}`);

function machine() {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: availableParallelism(),
    memory_gib: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    git: execFileSync("git", ["--version"], { encoding: "utf8" }).trim(),
    date: new Date().toISOString(),
  };
}
