// Containment at fleet scale, in memory (no git): a synthetic fleet of
// `--worktrees` berths (trains of stages, kept refs, landed, dirty and active
// berths over a long trunk) is painted into berth's commit graph
// (src/core/fleet/commit-graph.ts) from a commit list, then
// `classifyContainment` is timed on it — the CPU of the whole classification
// of every worktree and kept ref (target: 1,000 worktrees in <= 10 ms).
// Its answers are checked against the pairwise search the predicate is
// defined by (every branch tried as a container of every candidate).
//
// Usage: node bench/containment.mjs [--worktrees 1000] [--runs 20]
// Prints one JSON document. Needs `npm run build` (imports dist/).
import { readArgs } from "./args.mjs";

const args = readArgs(process.argv.slice(2), {
  usage: "Usage: node bench/containment.mjs [--worktrees 1000] [--runs 20]  (after npm run build)",
  options: ["worktrees", "runs"],
});
const size = args.number("worktrees", 1000);
const runs = args.number("runs", 20);

const dist = new URL("../dist/", import.meta.url);
const { AncestryBuilder } = await import(new URL("core/fleet/commit-graph.js", dist).href);
const { classifyContainment } = await import(new URL("core/fleet/containment.js", dist).href);
const { isLanded } = await import(new URL("core/fleet/landed.js", dist).href);

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The fleet as commits (newest last), branches, and the worktrees checked out on them. */
function syntheticFleet(worktrees, seed = 7) {
  const random = rng(seed);
  const commits = []; // { commit, parents, time }
  let time = 1_700_000_000;
  const commit = (parents) => {
    time += 60;
    const id = (commits.length + 1).toString(16).padStart(40, "0");
    commits.push({ commit: id, parents, time });
    return id;
  };
  let trunk = null;
  for (let i = 0; i < 3000; i++) trunk = commit(trunk ? [trunk] : []);
  const branches = new Map([["main", trunk]]);
  const rows = []; // { branch, head, dirty, marker from_tip }
  let n = 0;
  const berth = (from, tip, checkout, dirty = false) => {
    const branch = `berth/b${String(n++).padStart(4, "0")}`;
    branches.set(branch, tip);
    if (checkout) rows.push({ branch, head: tip, from, dirty });
    return branch;
  };
  let keptRefs = 0;
  while (rows.length < worktrees) {
    if (random() < 0.15) trunk = commit([trunk]);
    const kind = random();
    if (kind < 0.5) {
      const depth = 3 + Math.floor(random() * 3);
      const reclaimFirst = random() < 0.3;
      let tip = trunk;
      for (let s = 0; s < depth && rows.length < worktrees; s++) {
        const from = tip;
        tip = commit([tip]);
        const checkout = !(s === 0 && reclaimFirst);
        if (!checkout) keptRefs++;
        berth(from, tip, checkout);
      }
    } else if (kind < 0.65) {
      const from = trunk;
      trunk = commit([trunk]); // landed: fast-forwarded onto the trunk
      berth(from, trunk, true);
    } else if (kind < 0.8) {
      const from = trunk;
      berth(from, random() < 0.5 ? commit([trunk]) : trunk, true, true);
    } else {
      const from = trunk;
      berth(from, commit([trunk]), true);
    }
  }
  branches.set("main", trunk);
  return { commits, branches, rows, trunk, keptRefs };
}

const fleet = syntheticFleet(size);
const roots = [fleet.trunk, ...fleet.branches.values(), ...fleet.rows.map((r) => r.head)];

function buildAncestry() {
  const builder = new AncestryBuilder(roots);
  for (let i = fleet.commits.length - 1; i >= 0; i--) {
    if (builder.add(fleet.commits[i])) break;
  }
  return builder.finish();
}

const cpuMs = (fn) => {
  const before = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(before);
  return { value, ms: (used.user + used.system) / 1000 };
};

const trunk = { name: "main", tip: fleet.trunk, source: "default" };
// No remote in a synthetic fleet: the trunk's own tip is the only one (fleet/landed.ts).
const trunkTips = [fleet.trunk];
const clean = { changedFiles: 0, untrackedFiles: 0, trackedChanges: 0, paths: [] };
const dirty = { changedFiles: 1, untrackedFiles: 1, trackedChanges: 0, paths: ["scratch.txt"] };

/** A survey as surveyFleet builds it: the ancestry read, ahead/behind and landed set per row. */
function survey(ancestry) {
  const main = {
    entry: entry("/fleet/main", fleet.trunk, "main"),
    isMain: true,
    isCurrent: true,
    adminKey: null,
    adminDir: "/fleet/main/.git",
    marker: null,
    status: clean,
    readable: true,
    ahead: 0,
    behind: 0,
    landed: false,
    integrated: false,
  };
  const worktrees = [main];
  fleet.rows.forEach((row, i) => {
    const marker = {
      id: row.branch.slice(6),
      branch: row.branch,
      created_at: "2026-01-01T00:00:00Z",
      berth_version: "bench",
      from: null,
      from_tip: row.from,
    };
    worktrees.push({
      entry: entry(`/fleet/wt${i}`, row.head, row.branch),
      isMain: false,
      isCurrent: false,
      adminKey: `wt${i}`,
      adminDir: `/fleet/main/.git/worktrees/wt${i}`,
      marker,
      status: row.dirty ? dirty : clean,
      readable: true,
      ahead: ancestry.countExclusive(row.head, fleet.trunk),
      behind: ancestry.countExclusive(fleet.trunk, row.head),
      landed: isLanded(row.head, marker, row.branch, trunk, trunkTips, ancestry),
      integrated: false,
    });
  });
  const repo = { config: { repository: { branch_prefix: "berth/" } } };
  return {
    repo,
    trunk,
    trunkTips,
    branches: fleet.branches,
    worktrees,
    ancestry,
    // No remote and no squash merges in a synthetic fleet (issue 19).
    integration: null,
    integratedBranches: new Set(),
    remoteBranches: new Map(),
  };
}

function entry(path, head, branch) {
  return {
    path,
    head,
    branch,
    detached: false,
    bare: false,
    locked: false,
    lockReason: null,
    prunable: false,
    prunableReason: null,
  };
}

const idle = {
  running: null,
  lastAction: null,
  gitActivity: null,
  lastActivity: null,
  signal: "logbook",
};
const now = new Date("2026-06-01T12:00:00Z");
// In memory: no checkout has a git operation stopped half-way.
const classify = (s) =>
  classifyContainment({ survey: s, activityOf: () => idle, operationOf: () => null, now });

/** The predicate's nearest-container clause as defined: every branch tried against every candidate. */
function pairwise(s) {
  const checkedOut = new Set(s.worktrees.map((w) => w.entry.branch));
  const nearest = (branch, tip, checkoutRequired) => {
    let best = null;
    for (const [other, otherTip] of s.branches) {
      if (other === branch || other === "main" || otherTip === tip) continue;
      const has = checkedOut.has(other);
      if (checkoutRequired && !has) continue;
      if (!s.ancestry.isAncestor(tip, otherTip)) continue;
      const c = { other, ahead: s.ancestry.countExclusive(otherTip, tip), has };
      const nearer =
        best === null ||
        (c.has !== best.has
          ? c.has
          : c.ahead !== best.ahead
            ? c.ahead < best.ahead
            : c.other < best.other);
      if (nearer) best = c;
    }
    return best === null ? null : `${best.other}+${best.ahead}`;
  };
  const contained = {};
  for (const w of s.worktrees) {
    if (w.isMain || w.status.changedFiles > 0) continue;
    if (s.ancestry.isAncestor(w.entry.head, fleet.trunk)) continue;
    const found = nearest(w.entry.branch, w.entry.head, false);
    if (found) contained[w.entry.path] = found;
  }
  const kept = {};
  for (const [branch, tip] of s.branches) {
    if (!branch.startsWith("berth/") || checkedOut.has(branch)) continue;
    if (s.ancestry.isAncestor(tip, fleet.trunk)) continue;
    kept[branch] = `${nearest(branch, tip, true)}/${s.ancestry.countExclusive(tip, fleet.trunk)}`;
  }
  return { contained, kept };
}

function summarise(result) {
  const contained = {};
  for (const [path, v] of result.worktrees) {
    if (v.contained) contained[path] = `${v.evidence.container}+${v.evidence.container_ahead}`;
  }
  const kept = {};
  for (const ref of result.refs) {
    kept[ref.branch] =
      `${ref.contained_by === null ? null : `${ref.contained_by}+${ref.container_ahead}`}/${ref.ahead}`;
  }
  return { contained, kept };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (v) => Math.round(v * 100) / 100;

const graphMs = [];
const surveyMs = [];
const containmentMs = [];
let last = null;
for (let i = 0; i <= runs; i++) {
  const built = cpuMs(buildAncestry);
  const surveyed = cpuMs(() => survey(built.value));
  const classified = cpuMs(() => classify(surveyed.value));
  if (i === 0) continue; // warm-up
  graphMs.push(built.ms);
  surveyMs.push(surveyed.ms);
  containmentMs.push(classified.ms);
  last = { survey: surveyed.value, result: classified.value, walked: built.value.walked };
}
const ours = summarise(last.result);
const theirs = pairwise(last.survey);
const agree = JSON.stringify(ours) === JSON.stringify(theirs);
console.log(
  JSON.stringify({
    worktrees: last.survey.worktrees.length,
    branches: fleet.branches.size,
    kept_refs: fleet.keptRefs,
    commits: fleet.commits.length,
    commits_walked: last.walked,
    runs,
    cpu_ms: {
      commit_graph: round(median(graphMs)),
      survey_counts: round(median(surveyMs)),
      containment: round(median(containmentMs)),
    },
    containment_target_ms: 10,
    classified: {
      contained: Object.keys(ours.contained).length,
      kept_refs: Object.keys(ours.kept).length,
    },
    agree,
    ...(agree ? {} : { ours, theirs }),
  }),
);
if (!agree) process.exitCode = 1;
