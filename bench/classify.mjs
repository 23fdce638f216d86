// The landed/contained classification alone, on a fleet already surveyed:
// berth's way (one history walk, `git rev-list --parents --timestamp --stdin`,
// stopped where every root's history meets, then src/core/fleet/containment.ts
// in memory) against the per-candidate
// way (one `git for-each-ref --contains <tip>` per candidate branch, plus one
// `git rev-list --count` per candidate container and per kept ref), run from
// `sh` lanes so the baseline pays no Node spawn cost. Both must agree.
//
// Usage: node bench/classify.mjs <repo> [--runs 5] [--lanes <cores>]
// Prints one JSON document. Needs `npm run build` (imports dist/).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { readArgs } from "./args.mjs";

const args = readArgs(process.argv.slice(2), {
  usage:
    "Usage: node bench/classify.mjs <repo> [--runs 5] [--lanes <cores>]  (after npm run build)",
  options: ["runs", "lanes"],
  positionals: 1,
});
const [repoPath] = args.positionals;
if (repoPath === undefined) args.refuse("name the repository whose fleet to classify");
const runs = args.number("runs", 5);
const lanes = args.number("lanes", availableParallelism());

const dist = new URL("../dist/", import.meta.url);
const { processContext } = await import(new URL("context.js", dist).href);
const { openRepository } = await import(new URL("core/repo/repository.js", dist).href);
const { surveyFleet } = await import(new URL("core/fleet/survey.js", dist).href);
const { isLanded } = await import(new URL("core/fleet/landed.js", dist).href);
const { readAncestry } = await import(new URL("core/fleet/commit-graph.js", dist).href);
const { classifyContainment } = await import(new URL("core/fleet/containment.js", dist).href);
const { readFleetActivity } = await import(new URL("core/fleet/activity.js", dist).href);
const { checkoutStates } = await import(new URL("core/fleet/checkout-states.js", dist).href);
const { readOperationInProgress } = await import(new URL("io/in-progress.js", dist).href);
const { gitEnv } = await import(new URL("git/run.js", dist).href);

const ctx = { ...processContext(false), cwd: repoPath };
const repo = await openRepository(ctx);
const cwd = repo.location.cwd;
const now = new Date();
// The survey (worktree list, refs, per-worktree status) and the activity files
// are read once: both approaches need them equally.
const survey = await surveyFleet(repo);
const activity = await readFleetActivity(repo, survey.worktrees, now);
// Works with either shape of the containment input (ActivityView or WorktreeActivity).
const activityOf = (w) => activity.worktrees.get(w.entry.path);
const trunk = survey.trunk;
const prefix = repo.config.repository.branch_prefix;

/** berth's classification: ancestry in one git process, the rest in memory. */
async function classifyOurs() {
  const roots = [
    ...survey.trunkTips,
    ...survey.branches.values(),
    ...survey.worktrees.flatMap((w) => (w.entry.head ? [w.entry.head] : [])),
  ];
  const ancestry = await readAncestry(cwd, roots);
  const fresh = { ...survey, ancestry };
  const landed = new Set(
    survey.worktrees
      .filter((w) =>
        isLanded(w.entry.head, w.marker, w.entry.branch, trunk, survey.trunkTips, ancestry),
      )
      .map((w) => w.entry.path),
  );
  const operationOf = checkoutStates().operation;
  const containment = classifyContainment({ survey: fresh, activityOf, operationOf, now });
  return summarise(landed, containment.worktrees, containment.refs);
}

function summarise(landed, worktrees, refs) {
  const contained = {};
  for (const [path, verdict] of worktrees) {
    if (verdict.contained) {
      contained[path] = `${verdict.evidence.container}+${verdict.evidence.container_ahead}`;
    }
  }
  const kept = {};
  for (const ref of refs)
    kept[ref.branch] = `${ref.contained_by}+${ref.container_ahead}/${ref.ahead}`;
  return { landed: [...landed].sort(), contained, kept };
}

// ---- the per-candidate way, literally ------------------------------------

const CONTAINS_SCRIPT = `nonce=$1; shift
for tip do
  git for-each-ref --contains "$tip" --format='%(refname)' refs/heads
  printf '\\000%s\\000' "$nonce"
done`;
const COUNT_SCRIPT = `for range do git rev-list --count "$range" || echo x; done`;

/** Runs a fixed script over `items` in `lanes` sh processes; outputs in item order. */
async function inLanes(script, items, extra = []) {
  const size = Math.ceil(items.length / lanes);
  const chunks = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  const outputs = await Promise.all(
    chunks.map(
      (chunk) =>
        new Promise((resolve, reject) => {
          const child = spawn("sh", ["-c", script, "sh", ...extra, ...chunk], {
            cwd,
            env: gitEnv(cwd),
            stdio: ["ignore", "pipe", "inherit"],
          });
          let out = "";
          child.stdout.setEncoding("utf8");
          child.stdout.on("data", (d) => {
            out += d;
          });
          child.on("error", reject);
          child.on("close", () => resolve(out));
        }),
    ),
  );
  return outputs;
}

async function classifyPerCandidate() {
  const checkedOut = new Set(
    survey.worktrees.filter((w) => w.entry.branch && !w.entry.prunable).map((w) => w.entry.branch),
  );
  // Candidates: every berth worktree on a branch (landed or contained?) and every kept ref.
  const berthRows = survey.worktrees.filter(
    (w) => !w.isMain && !w.entry.prunable && w.entry.branch && w.entry.head && !w.entry.detached,
  );
  const keptRefs = [...survey.branches].filter(
    ([branch]) => branch.startsWith(prefix) && !checkedOut.has(branch),
  );
  const tips = [...berthRows.map((w) => w.entry.head), ...keptRefs.map(([, tip]) => tip)];
  const nonce = `bench-${randomBytes(8).toString("hex")}`;
  const raw = (await inLanes(CONTAINS_SCRIPT, tips, [nonce])).join("");
  const containersOf = raw
    .split(`\0${nonce}\0`)
    .slice(0, tips.length)
    .map((block) =>
      block
        .split("\n")
        .filter(Boolean)
        .map((ref) => ref.slice("refs/heads/".length)),
    );
  let processes = tips.length;

  const landed = new Set();
  const pairs = []; // [subject key, container, range]
  const candidates = [];
  berthRows.forEach((w, i) => {
    const containers = containersOf[i] ?? [];
    const onTrunk = trunk.name !== null && containers.includes(trunk.name);
    const fresh = w.marker !== null && w.marker.from_tip === w.entry.head;
    if (onTrunk && !fresh && w.entry.branch !== trunk.name) landed.add(w.entry.path);
    // The same cheap clauses as the predicate, before any ancestry.
    if (w.isCurrent || w.entry.locked || w.marker === null) return;
    if (w.readable !== true || w.status === null || w.status.changedFiles > 0) return;
    if (w.entry.branch === trunk.name || onTrunk) return;
    // Clause 4, as src/core/fleet/activity.ts isIdle: the logbook narrows, else git's traces.
    const act = activityOf(w);
    const idle =
      act?.signal === "logbook"
        ? act.running === null
        : act?.gitActivity != null && now.getTime() - act.gitActivity.getTime() >= 3_600_000;
    if (!idle) return;
    // A git operation stopped half-way is work in progress (decision 0071).
    if (w.adminDir !== null && readOperationInProgress(w.adminDir) !== null) return;
    candidates.push({
      key: w.entry.path,
      branch: w.entry.branch,
      tip: w.entry.head,
      requireCheckout: false,
      containers,
    });
  });
  keptRefs.forEach(([branch, tip], j) => {
    const containers = containersOf[berthRows.length + j] ?? [];
    if (trunk.name !== null && containers.includes(trunk.name)) return;
    candidates.push({ key: branch, branch, tip, requireCheckout: true, containers, kept: true });
  });
  for (const c of candidates) {
    for (const other of c.containers) {
      const otherTip = survey.branches.get(other);
      if (other === c.branch || other === trunk.name || otherTip === c.tip) continue;
      if (c.requireCheckout && !checkedOut.has(other)) continue;
      pairs.push([c, other, `${c.tip}..${other}`]);
    }
    if (c.kept && trunk.tip) pairs.push([c, null, `${trunk.tip}..${c.tip}`]);
  }
  const counts = (
    await inLanes(
      COUNT_SCRIPT,
      pairs.map((p) => p[2]),
    )
  )
    .join("")
    .split("\n");
  processes += pairs.length;

  const best = new Map();
  const keptAhead = new Map();
  pairs.forEach(([c, other], i) => {
    const n = Number(counts[i]);
    if (other === null) {
      keptAhead.set(c.key, n);
      return;
    }
    const cand = { container: other, ahead: n, hasCheckout: checkedOut.has(other) };
    const prev = best.get(c.key);
    const nearer =
      prev === undefined ||
      (cand.hasCheckout !== prev.hasCheckout
        ? cand.hasCheckout
        : cand.ahead !== prev.ahead
          ? cand.ahead < prev.ahead
          : cand.container < prev.container);
    if (nearer) best.set(c.key, cand);
  });
  const contained = {};
  const kept = {};
  for (const c of candidates) {
    const b = best.get(c.key);
    if (c.kept)
      kept[c.key] = `${b?.container ?? null}+${b?.ahead ?? null}/${keptAhead.get(c.key) ?? null}`;
    else if (b) contained[c.key] = `${b.container}+${b.ahead}`;
  }
  return { result: { landed: [...landed].sort(), contained, kept }, processes };
}

// ---- measuring -------------------------------------------------------------

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Counts git processes spawned while `fn` runs, with a logging `git` first on PATH. */
async function countGit(fn) {
  const realGit = process.env.PATH.split(":")
    .map((dir) => join(dir, "git"))
    .find((file) => {
      try {
        readFileSync(file, { flag: "r" });
        return true;
      } catch {
        return false;
      }
    });
  const dir = mkdtempSync(join(tmpdir(), "berth-count-"));
  const log = join(dir, "log");
  writeFileSync(log, "");
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, "bin", "git"), `#!/bin/sh\necho x >> '${log}'\nexec '${realGit}' "$@"\n`);
  chmodSync(join(dir, "bin", "git"), 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${join(dir, "bin")}:${saved}`;
  try {
    await fn();
  } finally {
    process.env.PATH = saved;
  }
  const count = readFileSync(log, "utf8").split("\n").filter(Boolean).length;
  rmSync(dir, { recursive: true, force: true });
  return count;
}

const ours = [];
const perCandidate = [];
let oursResult;
let theirs;
await classifyOurs(); // warm-up
await classifyPerCandidate();
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  oursResult = await classifyOurs();
  ours.push(performance.now() - t);
  t = performance.now();
  theirs = await classifyPerCandidate();
  perCandidate.push(performance.now() - t);
}
const oursGit = await countGit(classifyOurs);
const theirsGit = await countGit(classifyPerCandidate);
const agree = JSON.stringify(oursResult) === JSON.stringify(theirs.result);
const round = (v) => Math.round(v * 10) / 10;
console.log(
  JSON.stringify({
    worktrees: survey.worktrees.length,
    branches: survey.branches.size,
    lanes,
    berth: {
      median_ms: round(median(ours)),
      samples: ours.map(Math.round),
      git_processes: oursGit,
    },
    per_candidate: {
      median_ms: round(median(perCandidate)),
      samples: perCandidate.map(Math.round),
      git_processes: theirsGit,
      git_processes_expected: theirs.processes,
    },
    speedup: round(median(perCandidate) / median(ours)),
    agree,
    classified: {
      landed: oursResult.landed.length,
      contained: Object.keys(oursResult.contained).length,
      kept_refs: Object.keys(oursResult.kept).length,
    },
    ...(agree ? {} : { ours: oursResult, theirs: theirs.result }),
  }),
);
