// berth's benchmarks (spec section 10; docs/performance.md says how to read them).
//
//   npm run bench                 # the full run (~20 min on 2 cores), results in bench/results.json
//   npm run bench:quick           # smaller fleets, 3 runs (~5 min): checks the benchmark, not the budget
//   node bench/run.mjs --runs 7 --out /tmp/results.json   # after npm run build
//   node bench/run.mjs --only tiny,large                  # some sections (see SECTIONS), to the temp folder
//
// Every comparison is measured side by side in one run, in interleaved rounds
// (A B C, B C A, C A B, ...) after a warm-up round, so a machine shared with
// other work loads every contender alike; figures are medians, and the ratios
// are what the budget is stated in. The machine's own scaling (does starting
// processes on every core buy anything here?) is measured first, and the load
// average is recorded with every row. Fleets are built without a network:
// history by `git fast-import`, checkouts by `git worktree add`.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readArgs } from "./args.mjs";
import { benchEnv, buildFleet, NODE_START_SETTINGS } from "./fleet.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BERTH = join(here, "..", "dist", "cli.cjs");
const CLASSIFY = join(here, "classify.mjs");
const LANES_ALONE = join(here, "lanes-alone.mjs");
const CONTAINMENT = join(here, "containment.mjs");
const args = readArgs(process.argv.slice(2), {
  usage: [
    "Usage: node bench/run.mjs [--quick] [--runs 5] [--only <sections>] [--out <file>]",
    "  (after npm run build; a whole run writes bench/results.json, a quick or partial one the temp folder)",
  ].join("\n"),
  options: ["runs", "only", "out"],
  switches: ["quick"],
});
const QUICK = args.has("quick");
const runs = args.number("runs", QUICK ? 3 : 5);
// Only a whole run replaces the committed figures: a quick or partial one goes to the temp folder.
const PARTIAL = QUICK || args.text("only", null) !== null;
const outFile = args.text(
  "out",
  PARTIAL
    ? join(tmpdir(), QUICK ? "berth-bench-quick.json" : "berth-bench-only.json")
    : join(here, "results.json"),
);
const cores = availableParallelism();
const NODE = process.execPath;

/**
 * What is measured. Each fleet row races `berth status --json` against
 * `git status` in every worktree; `target` is the status/floor budget.
 */
const PLAN = QUICK
  ? {
      spawns: 200,
      fleets: [
        { key: "tiny", worktrees: 60, files: 10, trunkCommits: 300, target: 1.25, classify: true },
        { key: "large", worktrees: 30, files: 3000, trunkCommits: 1000, target: 1.1, settle: true },
      ],
      deep: { trunkCommits: 20_000, worktrees: 20 },
      containmentWorktrees: 1000,
    }
  : {
      spawns: 500,
      fleets: [
        { key: "tiny", worktrees: 200, files: 10, trunkCommits: 300, target: 1.25, classify: true },
        { key: "bench-100", worktrees: 100, files: 300, trunkCommits: 3000, target: 1.25 },
        {
          key: "bench-500",
          worktrees: 500,
          files: 300,
          trunkCommits: 3000,
          target: 1.25,
          classify: true,
          prune: true,
        },
        {
          key: "large",
          worktrees: 150,
          files: 3000,
          trunkCommits: 3000,
          target: 1.1,
          settle: true,
        },
        { key: "huge", worktrees: 50, files: 10_000, trunkCommits: 2000, target: 1.1 },
      ],
      deep: { trunkCommits: 55_000, worktrees: 50 },
      containmentWorktrees: 1000,
    };
const SECTIONS = ["machine", ...PLAN.fleets.map((f) => f.key), "deep", "containment", "startup"];
const only = args.text("only", null)?.split(",") ?? SECTIONS;
const unknownSections = only.filter((section) => !SECTIONS.includes(section));
if (unknownSections.length > 0) {
  args.refuse(
    `--only: no section ${unknownSections.join(", ")} (sections: ${SECTIONS.join(", ")})`,
  );
}
const wanted = (section) => only.includes(section);

// The same environment berth gives its own git processes, so the baselines
// read exactly what berth reads (read-only: no index refresh written back).
const GIT_SAFE = { GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", GIT_TERMINAL_PROMPT: "0" };
// Exactly the arguments src/git/status.ts gives git (keep the two in step).
const STATUS_ARGS = "status --porcelain=v2 -z --untracked-files=normal --ignore-submodules=none";

const log = (text) => process.stderr.write(`${text}\n`);
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);
const round = (v) => Math.round(v * 10) / 10;
const ratio = (a, b) => (a && b ? +(a / b).toFixed(2) : null);

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

function expectStatusJson(rows) {
  return (stdout) => {
    const doc = JSON.parse(stdout); // a cut-short document throws here
    if (!doc.ok || doc.data.worktrees.length !== rows) {
      throw new Error(`status --json saw ${doc.data?.worktrees?.length} rows, expected ${rows}`);
    }
  };
}

const statusContender = (label, opts, rows) => ({
  label,
  cmd: NODE,
  argv: [BERTH, "status", "--json"],
  options: opts,
  ...(rows === undefined ? {} : { check: expectStatusJson(rows) }),
});

/** `berth status --json` against git status in every worktree: sequential, the floor, sh per item. */
function statusRace(fleet, listFile) {
  const opts = { cwd: fleet.repo, env: fleet.env };
  const gitOpts = { cwd: fleet.repo, env: { ...fleet.env, ...GIT_SAFE } };
  return race(
    [
      statusContender("berth status --json", opts, fleet.worktreePaths.length),
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
        label: "berth's status lanes alone (bench/lanes-alone.mjs)",
        cmd: NODE,
        argv: [LANES_ALONE, listFile],
        options: opts,
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
}

const results = {
  machine: machine(),
  quick: QUICK,
  runs,
  load_at_start: load(),
  scaling: null,
  fleets: {},
  deep: null,
  containment: null,
  startup: null,
};

// 0. What parallelism can buy on this machine at all: the same work in one
// lane and split over every core, once for starting processes (what a
// survey's per-worktree git processes are) and once for plain computation. A
// floor that beats the sequential loop needs the first to scale.
if (wanted("machine")) {
  log("machine: process start-up and computation, one lane vs every core...");
  const spawns = PLAN.spawns;
  const loop = (n) => `i=0; while [ $i -lt ${n} ]; do git --version >/dev/null; i=$((i+1)); done`;
  const split = (body) => `${Array.from({ length: cores }, () => `(${body}) &`).join(" ")} wait`;
  const work = QUICK ? 1e8 : 2e8;
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
  // What this environment's settings of Node's start-up cost every Node process
  // (fleet.mjs: the benchmark runs without them).
  const settings = NODE_START_SETTINGS.filter((name) => process.env[name] !== undefined);
  const nodeStart = race(
    [
      { label: "node -e 0, the environment as given", cmd: NODE, argv: ["-e", "0"] },
      {
        label: "node -e 0, as the benchmark runs it",
        cmd: NODE,
        argv: ["-e", "0"],
        options: { env: benchEnv(process.env.HOME ?? "") },
      },
    ],
    runs * 4,
  );
  results.scaling = {
    rows,
    ratios: {
      spawn_split_vs_one_lane: ratio(spawnSplit, spawnOne),
      compute_split_vs_one: ratio(computeSplit, computeOne),
    },
    node_start: { rows: nodeStart, settings_dropped: settings },
  };
}

// 1-3. Fleets: status against git's floor, classification, prune, and (in the
// large fleet) what a freshly started berth's first survey costs.
for (const spec of PLAN.fleets) {
  if (!wanted(spec.key)) continue;
  log(`fleet "${spec.key}": ${spec.worktrees} berths of a ${spec.files}-file repository...`);
  const built = Date.now();
  const fleet = await buildFleet(spec);
  log(`  built in ${Math.round((Date.now() - built) / 1000)} s: ${JSON.stringify(fleet.summary)}`);
  const listFile = join(fleet.root, "worktrees.txt");
  writeFileSync(listFile, `${fleet.worktreePaths.join("\n")}\n`);
  const opts = { cwd: fleet.repo, env: fleet.env };

  log("  status vs git status in every worktree...");
  const status = statusRace(fleet, listFile);
  const [berthStatus, sequential, floor, lanesAlone, shPerItem] = status.map((r) => r.median_ms);
  const row = {
    spec,
    fleet: fleet.summary,
    status: {
      rows: status,
      ratios: {
        status_vs_floor: ratio(berthStatus, floor),
        status_vs_sequential: ratio(berthStatus, sequential),
        status_vs_sh_per_item: ratio(berthStatus, shPerItem),
        lanes_alone_vs_floor: ratio(lanesAlone, floor),
        status_vs_lanes_alone: ratio(berthStatus, lanesAlone),
        floor_vs_sequential: ratio(floor, sequential),
        status_cpu_vs_floor_cpu: ratio(status[0].cpu_median_ms, status[2].cpu_median_ms),
        lanes_alone_cpu_vs_floor_cpu: ratio(status[3].cpu_median_ms, status[2].cpu_median_ms),
      },
      target: spec.target,
    },
  };

  if (spec.classify) {
    log("  classification alone vs per-candidate...");
    row.classification = JSON.parse(
      execFileSync(
        NODE,
        [CLASSIFY, fleet.repo, "--runs", String(Math.min(runs, 3)), "--lanes", String(cores)],
        { ...opts, encoding: "utf8", maxBuffer: 1 << 26 },
      ),
    );
  }
  if (spec.prune) {
    log("  prune --dry-run...");
    const pruneRows = race(
      [
        {
          label: "berth worktree prune --dry-run --json",
          cmd: NODE,
          argv: [BERTH, "worktree", "prune", "--dry-run", "--json"],
          options: opts,
          check: (stdout) => JSON.parse(stdout),
        },
        statusContender("berth status --json", opts),
      ],
      runs,
    );
    row.prune = {
      rows: pruneRows,
      ratios: {
        prune_vs_status: ratio(pruneRows[0].median_ms, pruneRows[1].median_ms),
        prune_vs_floor: ratio(pruneRows[0].median_ms, floor),
      },
    };
  }
  const counter = gitCounter(fleet.root);
  const statusGit = counter.count(NODE, [BERTH, "status", "--json"], opts);
  row.git_processes = {
    status: {
      ...statusGit,
      worktrees: fleet.worktreePaths.length,
      beyond_worktrees: statusGit.total - fleet.worktreePaths.length,
    },
  };
  // Last: it adds two checkouts to the fleet.
  if (spec.settle) row.settle = settleRace(fleet);
  results.fleets[spec.key] = row;
  rmSync(fleet.root, { recursive: true, force: true });
}

/**
 * A freshly started berth's first survey against its second: `berth start`
 * settles its checkout's index, so a read-only `git status` there (what every
 * survey runs) re-hashes nothing, first time or any time; a checkout made by
 * `git worktree add` alone stays "racily clean" and is re-hashed by every one.
 */
function settleRace(fleet) {
  log("  freshly started berths: their first survey vs their second...");
  const opts = { cwd: fleet.repo, env: fleet.env };
  const gitOpts = { env: { ...fleet.env, ...GIT_SAFE } };
  // Several fresh berths: a first read happens once per berth, so one berth gives one sample.
  const count = Math.max(runs, 5);
  const started = Array.from(
    { length: count },
    (_, i) =>
      JSON.parse(
        execFileSync(NODE, [BERTH, "start", `fresh-${i}`, "--json"], { ...opts, encoding: "utf8" }),
      ).data.path,
  );
  const plain = join(fleet.root, "plain-checkout");
  execFileSync("git", ["worktree", "add", "-q", "-b", "plain-checkout", plain], opts);
  const time = (cwd) => {
    const start = process.hrtime.bigint();
    execFileSync("git", ["-C", cwd, ...STATUS_ARGS.split(" ")], { ...gitOpts, stdio: "ignore" });
    return round(Number(process.hrtime.bigint() - start) / 1e6);
  };
  // Each berth's very first read and then at once its second, before the race warms anything
  // up: pairs, so that a machine still settling from the starts slows both reads alike.
  const firsts = [];
  const seconds = [];
  for (const path of started) {
    firsts.push(time(path));
    seconds.push(time(path));
  }
  const first = { started: median(firsts), plain: time(plain) };
  const contenders = [
    { label: "git status in a berth start made", cwd: started[0] },
    { label: "git status in a plain git worktree add", cwd: plain },
  ].map((c) => ({
    label: c.label,
    cmd: "git",
    argv: ["-C", c.cwd, ...STATUS_ARGS.split(" ")],
    options: gitOpts,
  }));
  const rows = race(contenders, Math.max(runs, 5));
  return {
    fresh_berths: count,
    first_ms: first,
    second_ms: median(seconds),
    samples: { first: firsts, second: seconds },
    rows,
    ratios: {
      started_first_vs_second: ratio(first.started, median(seconds)),
      plain_vs_started: ratio(rows[1].median_ms, rows[0].median_ms),
    },
  };
}

// 4. Deep history: one berth far behind the trunk adds one walk — the one its
// behind count needs — and nothing for the rest of the fleet.
if (wanted("deep")) {
  const { trunkCommits, worktrees } = PLAN.deep;
  const farBehind = trunkCommits - 200;
  log(
    `deep history: ${trunkCommits} trunk commits, ${worktrees} berths, one ${farBehind} behind...`,
  );
  const without = await buildFleet({ worktrees, trunkCommits, files: 300 });
  const withFar = await buildFleet({ worktrees, trunkCommits, files: 300, farBehind });
  const range = `${withFar.farBranch}..main`;
  const behind = Number(
    execFileSync("git", ["rev-list", "--count", range], { cwd: withFar.repo, env: withFar.env }),
  );
  const contenders = () => [
    statusContender("berth status --json, one berth far behind", {
      cwd: withFar.repo,
      env: withFar.env,
    }),
    statusContender("berth status --json, the same fleet without it", {
      cwd: without.repo,
      env: without.env,
    }),
    {
      label: `git rev-list --count <far>..<trunk> (${behind} commits)`,
      cmd: "git",
      argv: ["rev-list", "--count", range],
      options: { cwd: withFar.repo, env: { ...withFar.env, ...GIT_SAFE } },
    },
  ];
  const measure = () => {
    const rows = race(contenders(), runs);
    const [withMs, withoutMs, walkMs] = rows.map((r) => r.median_ms);
    return {
      rows,
      added_ms: round(withMs - withoutMs),
      added_vs_walk: ratio(withMs - withoutMs, walkMs),
    };
  };
  log("  without a commit-graph...");
  const plain = measure();
  const hint = JSON.parse(
    execFileSync(NODE, [BERTH, "status", "--json"], {
      cwd: withFar.repo,
      env: withFar.env,
      encoding: "utf8",
      maxBuffer: 1 << 26,
    }),
  ).hints.some((h) => h.includes("commit-graph"));
  log("  with a commit-graph in both repositories...");
  for (const f of [without, withFar]) {
    execFileSync("git", ["commit-graph", "write", "--reachable"], { cwd: f.repo, env: f.env });
  }
  const graphed = measure();
  results.deep = {
    fleet: withFar.summary,
    behind,
    without_commit_graph: plain,
    hint_given_without_commit_graph: hint,
    with_commit_graph: graphed,
    commit_graph_speedup: ratio(plain.rows[0].median_ms, graphed.rows[0].median_ms),
    target_added_vs_walk: 1.5,
  };
  rmSync(without.root, { recursive: true, force: true });
  rmSync(withFar.root, { recursive: true, force: true });
}

// 5. Containment of a large fleet, in memory (bench/containment.mjs).
if (wanted("containment")) {
  log(`containment of ${PLAN.containmentWorktrees} worktrees, in memory...`);
  results.containment = JSON.parse(
    execFileSync(
      NODE,
      [CONTAINMENT, "--worktrees", String(PLAN.containmentWorktrees), "--runs", String(runs * 4)],
      { encoding: "utf8", maxBuffer: 1 << 26 },
    ),
  );
}

// 6. Start-up: a repository with only its main checkout.
if (wanted("startup")) {
  log("start-up on a 1-worktree repository...");
  const fleet = await buildFleet({ worktrees: 0, trunkCommits: 10, files: 10 });
  const opts = { cwd: fleet.repo, env: fleet.env };
  const rows = race(
    [
      { label: "node -e 0", cmd: NODE, argv: ["-e", "0"], options: opts },
      { label: "berth --version", cmd: NODE, argv: [BERTH, "--version"], options: opts },
      { label: "berth --help", cmd: NODE, argv: [BERTH, "--help"], options: opts },
      { label: "berth status (1 worktree)", cmd: NODE, argv: [BERTH, "status"], options: opts },
      statusContender("berth status --json (1 worktree)", opts, 1),
    ],
    runs * 4,
  );
  const [node, version, help, status, statusJson] = rows.map((r) => r.median_ms);
  results.startup = {
    rows,
    overhead_ms: {
      version: round(version - node),
      help: round(help - node),
      status: round(status - node),
      status_json: round(statusJson - node),
    },
    targets_ms: { version: 30, status: 60 },
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
log(`results: ${outFile}`);

function print(r) {
  const m = r.machine;
  const line = (row) =>
    console.log(
      `  ${row.label.padEnd(56)} ${String(row.median_ms).padStart(9)} ms   cpu ${row.cpu_median_ms} ms`,
    );
  const verdict = (value, target, lowerIsBetter = true) =>
    value === null || value === undefined
      ? "n/a"
      : (lowerIsBetter ? value <= target : value >= target)
        ? "met"
        : "NOT met";
  console.log(
    `${m.date}  ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, node ${m.node}, ${m.git}${r.quick ? "  [--quick]" : ""}`,
  );
  console.log(
    `load average at start ${r.load_at_start.join(" ")}, at end ${r.load_at_end.join(" ")}`,
  );
  if (r.scaling) {
    console.log("\nmachine: what running on every core buys (ideal: 1/cores)");
    for (const row of r.scaling.rows) line(row);
    const q = r.scaling.ratios;
    console.log(
      `  starting processes: ${q.spawn_split_vs_one_lane}x one lane; computation: ${q.compute_split_vs_one}x one process`,
    );
    for (const row of r.scaling.node_start.rows) line(row);
    const dropped = r.scaling.node_start.settings_dropped;
    console.log(
      `  Node start-up settings left out of every run: ${dropped.length === 0 ? "none were set" : dropped.join(", ")}`,
    );
  }
  for (const [key, s] of Object.entries(r.fleets)) {
    const f = s.fleet;
    console.log(
      `\n${key}: ${f.worktrees} worktrees of a ${s.spec.files}-file repository, ${f.branches} branches, ${f.trunk_commits} trunk commits` +
        ` (${f.train_stages} train stages, ${f.kept_refs} kept refs, ${f.landed} landed, ${f.dirty} dirty, ${f.receipts} receipts)`,
    );
    for (const row of s.status.rows) line(row);
    const q = s.status.ratios;
    console.log(
      `  status/floor ${q.status_vs_floor} (target <= ${s.status.target}: ${verdict(q.status_vs_floor, s.status.target)})   status/sequential ${q.status_vs_sequential}   floor/sequential ${q.floor_vs_sequential}   cpu status/floor ${q.status_cpu_vs_floor_cpu}   lanes alone/floor ${q.lanes_alone_vs_floor}   status/lanes alone ${q.status_vs_lanes_alone}`,
    );
    if (s.classification) {
      const c = s.classification;
      console.log(
        `  classification: berth ${c.berth.median_ms} ms (${c.berth.git_processes} git), per-candidate ${c.per_candidate.median_ms} ms (${c.per_candidate.git_processes} git): ${c.speedup}x faster, results agree: ${c.agree}`,
      );
    }
    if (s.prune) {
      for (const row of s.prune.rows) line(row);
      console.log(
        `  prune/status ${s.prune.ratios.prune_vs_status}, prune/floor ${s.prune.ratios.prune_vs_floor}`,
      );
    }
    if (s.settle) {
      for (const row of s.settle.rows) line(row);
      console.log(
        `  ${s.settle.fresh_berths} berths start made: first read ${s.settle.first_ms.started} ms vs second ${s.settle.second_ms} ms, medians (${s.settle.ratios.started_first_vs_second}x); a plain checkout costs ${s.settle.ratios.plain_vs_started}x as much per read`,
      );
    }
    const g = s.git_processes.status;
    console.log(
      `  git processes for status: ${g.total} = ${g.worktrees} worktrees + ${g.beyond_worktrees} (target <= 8) ${JSON.stringify(g.by_subcommand)}`,
    );
  }
  if (r.deep) {
    const d = r.deep;
    console.log(
      `\ndeep history: ${d.fleet.trunk_commits} trunk commits, ${d.fleet.worktrees} worktrees, one berth ${d.behind} commits behind`,
    );
    for (const [name, part] of [
      ["no commit-graph", d.without_commit_graph],
      ["with a commit-graph", d.with_commit_graph],
    ]) {
      console.log(`  ${name}:`);
      for (const row of part.rows) line(row);
      console.log(
        `  the far berth adds ${part.added_ms} ms = ${part.added_vs_walk}x the walk its count needs (target <= ${d.target_added_vs_walk}: ${verdict(part.added_vs_walk, d.target_added_vs_walk)})`,
      );
    }
    console.log(
      `  hint given without a commit-graph: ${d.hint_given_without_commit_graph}; a commit-graph makes status ${d.commit_graph_speedup}x faster here`,
    );
  }
  if (r.containment) {
    const c = r.containment;
    console.log(
      `\ncontainment of ${c.worktrees} worktrees (${c.branches} branches, in memory): ${c.cpu_ms.containment} ms CPU (target <= ${c.containment_target_ms}: ${verdict(c.cpu_ms.containment, c.containment_target_ms)}); commit graph ${c.cpu_ms.commit_graph} ms, survey counts ${c.cpu_ms.survey_counts} ms; agrees with the pairwise search: ${c.agree}`,
    );
  }
  if (r.startup) {
    console.log("\nstart-up (1-worktree repository)");
    for (const row of r.startup.rows) line(row);
    const o = r.startup.overhead_ms;
    const t = r.startup.targets_ms;
    console.log(
      `  over node -e 0: --version +${o.version} ms (target <= ${t.version}: ${verdict(o.version, t.version)}), --help +${o.help} ms, status +${o.status} ms (target <= ${t.status}: ${verdict(o.status, t.status)}), status --json +${o.status_json} ms; status spawns ${r.startup.git_processes.status.total} git`,
    );
  }
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
