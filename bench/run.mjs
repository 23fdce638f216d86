// berth's benchmarks (spec section 10; docs/performance.md says how to read them).
//
//   npm run bench                     # fleets of 100 and 500, 5 runs each
//   npm run bench:quick               # a fleet of 100, 3 runs
//   node bench/run.mjs --sizes 500 --runs 7 --out bench/results.json
//
// Every comparison is measured side by side in one run, in interleaved rounds
// (A B C, B C A, C A B, ...) after a warm-up round, so a machine shared with
// other work loads every contender alike; figures are medians, and the ratios
// are what the budget is stated in. The load average is recorded with them.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildFleet } from "./fleet.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BERTH = join(here, "..", "dist", "cli.js");
const CLASSIFY = join(here, "classify.mjs");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : args[i + 1];
};
const sizes = opt("sizes", "100,500").split(",").map(Number);
const runs = Number(opt("runs", "5"));
const outFile = opt("out", join(here, "results.json"));
const cores = availableParallelism();
const NODE = process.execPath;

// The same environment berth gives its own git processes, so the baselines
// read exactly what berth reads (read-only: no index refresh written back).
const GIT_SAFE = { GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", GIT_TERMINAL_PROMPT: "0" };
const STATUS_ARGS = "status --porcelain=v2 -z --untracked-files=normal --ignore-submodules=dirty";

const log = (text) => process.stderr.write(`${text}\n`);
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);
const round = (v) => Math.round(v * 10) / 10;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time (user + system) of every child this process has waited for, which
 * includes their own waited-for children (berth's git processes, xargs's):
 * the work a contender did, less sensitive to other load than wall time.
 * Linux only; null elsewhere.
 */
function childrenCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

/**
 * Times each contender `count` times in interleaved, rotating rounds after one
 * warm-up round. A contender is { label, cmd, argv, options, check? }.
 */
function race(contenders, count) {
  const samples = contenders.map(() => []);
  const cpu = contenders.map(() => []);
  let lastCpu = null;
  const once = (c) => {
    const cpuBefore = childrenCpuMs();
    const start = process.hrtime.bigint();
    const result = spawnSync(c.cmd, c.argv, { ...c.options, maxBuffer: 1 << 28 });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const cpuAfter = childrenCpuMs();
    lastCpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    if (result.status !== 0) {
      throw new Error(
        `${c.label} failed (${result.status}): ${String(result.stderr).slice(0, 500)}`,
      );
    }
    c.check?.(result.stdout.toString("utf8"));
    return ms;
  };
  for (const c of contenders) once(c); // warm-up: page cache, git's own caches
  const loadBefore = load();
  for (let round_ = 0; round_ < count; round_++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (round_ + k) % contenders.length;
      samples[i].push(once(contenders[i]));
      if (lastCpu !== null) cpu[i].push(lastCpu);
    }
  }
  return contenders.map((c, i) => ({
    label: c.label,
    median_ms: round(median(samples[i])),
    samples: samples[i].map(Math.round),
    cpu_median_ms: cpu[i].length > 0 ? round(median(cpu[i])) : null,
    load_before: loadBefore,
    load_after: load(),
  }));
}

/** A `git` first on PATH that logs each call's arguments, then runs the real one. */
function gitCounter(dir) {
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const bin = join(dir, "count-bin");
  const file = join(dir, "git-calls.log");
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${file}'\nexec '${realGit}' "$@"\n`,
  );
  chmodSync(join(bin, "git"), 0o755);
  return {
    count(cmd, argv, options) {
      writeFileSync(file, "");
      const env = { ...options.env, PATH: `${bin}:${options.env.PATH}` };
      const result = spawnSync(cmd, argv, { ...options, env, maxBuffer: 1 << 28 });
      if (result.status !== 0) throw new Error(`counting ${argv.join(" ")} failed`);
      const calls = readFileSync(file, "utf8").split("\n").filter(Boolean);
      const sub = (line) => {
        const words = line.split(" ");
        return words[0] === "-C" ? words[2] : words[0];
      };
      const bySub = {};
      for (const line of calls) bySub[sub(line)] = (bySub[sub(line)] ?? 0) + 1;
      return { total: calls.length, by_subcommand: bySub };
    },
  };
}

/** Whether this build has `berth worktree prune` (it lands with its own issue). */
function pruneAvailable(options) {
  const help = spawnSync(NODE, [BERTH, "worktree", "--help"], { ...options, encoding: "utf8" });
  return /^\s+prune\b/m.test(help.stdout ?? "");
}

function expectStatusJson(rows) {
  return (stdout) => {
    const doc = JSON.parse(stdout); // a cut-short document throws here
    if (!doc.ok || doc.data.worktrees.length !== rows) {
      throw new Error(`status --json saw ${doc.data?.worktrees?.length} rows, expected ${rows}`);
    }
  };
}

const results = {
  machine: machine(),
  runs,
  load_at_start: load(),
  scaling: null,
  sizes: {},
  startup: null,
};

// What parallelism can buy on this machine at all: the same work in one lane
// and split over every core, once for starting processes (what a survey's
// per-worktree git processes are) and once for plain computation. A floor
// that beats the sequential loop needs the first to scale.
{
  log("machine: process start-up and computation, one lane vs every core...");
  const spawns = 500;
  const loop = (n) => `i=0; while [ $i -lt ${n} ]; do git --version >/dev/null; i=$((i+1)); done`;
  const split = (body) => `${Array.from({ length: cores }, () => `(${body}) &`).join(" ")} wait`;
  const work = 2e8;
  const compute = (n) => `let s = 0; for (let i = 0; i < ${n}; i++) s += i;`;
  const rows = race(
    [
      { label: `${spawns} x git --version, one lane`, cmd: "sh", argv: ["-c", loop(spawns)] },
      {
        label: `${spawns} x git --version, ${cores} lanes`,
        cmd: "sh",
        argv: ["-c", split(loop(Math.ceil(spawns / cores)))],
      },
      { label: "computation, one process", cmd: NODE, argv: ["-e", compute(work)] },
      {
        label: `computation split over ${cores} processes`,
        cmd: "sh",
        argv: ["-c", split(`'${NODE}' -e '${compute(work / cores)}'`)],
      },
    ],
    runs,
  );
  const [spawnOne, spawnSplit, computeOne, computeSplit] = rows.map((r) => r.median_ms);
  results.scaling = {
    rows,
    ratios: {
      spawn_split_vs_one_lane: +(spawnSplit / spawnOne).toFixed(2),
      compute_split_vs_one: +(computeSplit / computeOne).toFixed(2),
    },
  };
}

for (const size of sizes) {
  log(`building a fleet of ${size} worktrees...`);
  const built = Date.now();
  const fleet = await buildFleet({ worktrees: size });
  log(`  built in ${Math.round((Date.now() - built) / 1000)} s: ${JSON.stringify(fleet.summary)}`);
  const { repo, env } = fleet;
  const listFile = join(fleet.root, "worktrees.txt");
  writeFileSync(listFile, `${fleet.worktreePaths.join("\n")}\n`);
  const opts = { cwd: repo, env };
  const gitOpts = { cwd: repo, env: { ...env, ...GIT_SAFE } };
  const rows = fleet.worktreePaths.length;

  log("  status vs git status in every worktree...");
  const status = race(
    [
      {
        label: "berth status --json",
        cmd: NODE,
        argv: [BERTH, "status", "--json"],
        options: opts,
        check: expectStatusJson(rows),
      },
      {
        label: "sequential: while read; git -C <wt> status",
        cmd: "sh",
        argv: [
          "-c",
          `while IFS= read -r wt; do git -C "$wt" ${STATUS_ARGS}; done < "$0" >/dev/null`,
          listFile,
        ],
        options: gitOpts,
      },
      {
        label: `xargs -P ${cores}: git -C <wt> status (the floor)`,
        cmd: "sh",
        argv: [
          "-c",
          `xargs -d '\\n' -P ${cores} -I{} git -C {} ${STATUS_ARGS} < "$0" >/dev/null`,
          listFile,
        ],
        options: gitOpts,
      },
      {
        label: `xargs -P ${cores}: sh -c 'git -C <wt> status' per item`,
        cmd: "sh",
        argv: [
          "-c",
          `xargs -d '\\n' -P ${cores} -I{} sh -c 'git -C "$1" ${STATUS_ARGS}' sh {} < "$0" >/dev/null`,
          listFile,
        ],
        options: gitOpts,
      },
    ],
    runs,
  );
  const [berthStatus, sequential, floor, shPerItem] = status.map((r) => r.median_ms);

  log("  classification alone vs per-candidate...");
  const classify = JSON.parse(
    execFileSync(NODE, [CLASSIFY, repo, "--runs", String(runs), "--lanes", String(cores)], {
      ...opts,
      encoding: "utf8",
      maxBuffer: 1 << 26,
    }),
  );

  // Hook for `berth worktree prune --dry-run --json` (it lands with the prune
  // issue): timed beside status on the same fleet once the verb exists.
  let prune = { available: false, note: "not available: this build has no `berth worktree prune`" };
  if (pruneAvailable(opts)) {
    log("  prune --dry-run...");
    const [pruneRow, statusRow] = race(
      [
        {
          label: "berth worktree prune --dry-run --json",
          cmd: NODE,
          argv: [BERTH, "worktree", "prune", "--dry-run", "--json"],
          options: opts,
          check: (stdout) => JSON.parse(stdout),
        },
        {
          label: "berth status --json",
          cmd: NODE,
          argv: [BERTH, "status", "--json"],
          options: opts,
        },
      ],
      runs,
    );
    prune = {
      available: true,
      rows: [pruneRow, statusRow],
      ratios: {
        prune_vs_status: +(pruneRow.median_ms / statusRow.median_ms).toFixed(2),
        prune_vs_floor: +(pruneRow.median_ms / floor).toFixed(2),
      },
    };
  }

  const counter = gitCounter(fleet.root);
  const statusGit = counter.count(NODE, [BERTH, "status", "--json"], opts);
  const pruneGit = prune.available
    ? counter.count(NODE, [BERTH, "worktree", "prune", "--dry-run", "--json"], opts)
    : null;

  results.sizes[size] = {
    fleet: fleet.summary,
    status: {
      rows: status,
      ratios: {
        status_vs_floor: +(berthStatus / floor).toFixed(2),
        status_vs_sequential: +(berthStatus / sequential).toFixed(2),
        status_vs_sh_per_item: +(berthStatus / shPerItem).toFixed(2),
        floor_vs_sequential: +(floor / sequential).toFixed(2),
        status_cpu_vs_floor_cpu:
          status[0].cpu_median_ms && status[2].cpu_median_ms
            ? +(status[0].cpu_median_ms / status[2].cpu_median_ms).toFixed(2)
            : null,
      },
    },
    classification: classify,
    prune,
    git_processes: {
      status: { ...statusGit, worktrees: rows, beyond_worktrees: statusGit.total - rows },
      classification: {
        berth: classify.berth.git_processes,
        per_candidate: classify.per_candidate.git_processes,
      },
      prune: pruneGit,
    },
  };
  rmSync(fleet.root, { recursive: true, force: true });
}

// Start-up: a repository with only its main checkout.
{
  log("start-up on a 1-worktree repository...");
  const fleet = await buildFleet({ worktrees: 0, trunkCommits: 10, files: 10 });
  const opts = { cwd: fleet.repo, env: fleet.env };
  const rows = race(
    [
      { label: "node -e 0", cmd: NODE, argv: ["-e", "0"], options: opts },
      { label: "berth --version", cmd: NODE, argv: [BERTH, "--version"], options: opts },
      { label: "berth --help", cmd: NODE, argv: [BERTH, "--help"], options: opts },
      { label: "berth status (1 worktree)", cmd: NODE, argv: [BERTH, "status"], options: opts },
    ],
    runs * 4,
  );
  const [node, version, help, status] = rows.map((r) => r.median_ms);
  results.startup = {
    rows,
    overhead_ms: {
      version: round(version - node),
      help: round(help - node),
      status: round(status - node),
    },
    git_processes: { status: gitCounter(fleet.root).count(NODE, [BERTH, "status"], opts) },
  };
  rmSync(fleet.root, { recursive: true, force: true });
}
results.load_at_end = load();

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
// The committed results file follows the project's formatting (npm run lint checks it).
spawnSync(join(here, "..", "node_modules", ".bin", "biome"), ["format", "--write", outFile], {
  stdio: "ignore",
});
print(results);

function print(r) {
  const m = r.machine;
  console.log(
    `${m.date}  ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, node ${m.node}, ${m.git}`,
  );
  console.log(
    `load average at start ${r.load_at_start.join(" ")}, at end ${r.load_at_end.join(" ")}`,
  );
  const sc = r.scaling;
  console.log("\nmachine: what running on every core buys (ideal: 1/cores)");
  for (const row of sc.rows)
    console.log(
      `  ${row.label.padEnd(52)} ${String(row.median_ms).padStart(9)} ms   cpu ${row.cpu_median_ms} ms`,
    );
  console.log(
    `  starting processes: ${sc.ratios.spawn_split_vs_one_lane}x one lane; computation: ${sc.ratios.compute_split_vs_one}x one process`,
  );
  for (const [size, s] of Object.entries(r.sizes)) {
    const f = s.fleet;
    console.log(
      `\n${size} berths: ${f.worktrees} worktrees, ${f.branches} branches, ${f.trunk_commits} trunk commits` +
        ` (${f.train_stages} train stages, ${f.kept_refs} kept refs, ${f.landed} landed, ${f.dirty} dirty, ${f.receipts} receipts)`,
    );
    for (const row of s.status.rows)
      console.log(
        `  ${row.label.padEnd(52)} ${String(row.median_ms).padStart(9)} ms   cpu ${row.cpu_median_ms} ms`,
      );
    const q = s.status.ratios;
    console.log(
      `  status/floor ${q.status_vs_floor} (target <= 1.25)   status/sequential ${q.status_vs_sequential} (target <= 0.8)   floor/sequential ${q.floor_vs_sequential}   cpu status/floor ${q.status_cpu_vs_floor_cpu}`,
    );
    const c = s.classification;
    console.log(
      `  classification: berth ${c.berth.median_ms} ms (${c.berth.git_processes} git), per-candidate ${c.per_candidate.median_ms} ms (${c.per_candidate.git_processes} git): ${c.speedup}x faster (target >= 10), results agree: ${c.agree}`,
    );
    if (s.prune.available) {
      for (const row of s.prune.rows)
        console.log(
          `  ${row.label.padEnd(52)} ${String(row.median_ms).padStart(9)} ms   cpu ${row.cpu_median_ms} ms`,
        );
      console.log(
        `  prune/status ${s.prune.ratios.prune_vs_status}, prune/floor ${s.prune.ratios.prune_vs_floor}`,
      );
    } else {
      console.log(`  prune --dry-run: ${s.prune.note}`);
    }
    const g = s.git_processes.status;
    console.log(
      `  git processes for status: ${g.total} = ${g.worktrees} worktrees + ${g.beyond_worktrees} (target <= 8) ${JSON.stringify(g.by_subcommand)}`,
    );
    if (s.git_processes.prune)
      console.log(`  git processes for prune --dry-run: ${s.git_processes.prune.total}`);
  }
  console.log("\nstart-up (1-worktree repository)");
  for (const row of r.startup.rows)
    console.log(
      `  ${row.label.padEnd(52)} ${String(row.median_ms).padStart(9)} ms   cpu ${row.cpu_median_ms} ms`,
    );
  const o = r.startup.overhead_ms;
  console.log(
    `  over node -e 0: --version +${o.version} ms (target <= 60), --help +${o.help} ms, status +${o.status} ms (target <= 150); status spawns ${r.startup.git_processes.status.total} git`,
  );
}

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
