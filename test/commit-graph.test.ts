import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AncestryBuilder,
  HAND_OFF_MIN_WALK,
  LONG_WALK_COMMITS,
  readAncestry,
} from "../src/core/fleet/commit-graph.js";
import { readStatus } from "../src/core/fleet/status.js";
import type { WalkedCommit } from "../src/git/ancestry.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

/** A seeded generator, so a failing case can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Dag {
  parents: Map<string, string[]>;
  times: Map<string, number>;
}

/** A random history: commits in creation order, parents older, times never decreasing (ties common). */
function randomDag(random: () => number, size: number): Dag {
  const parents = new Map<string, string[]>();
  const times = new Map<string, number>();
  const ids: string[] = [];
  let time = 1000;
  for (let i = 0; i < size; i++) {
    const id = `c${i}`;
    if (random() < 0.6) time += Math.floor(random() * 3);
    const list: string[] = [];
    if (i > 0) {
      // Mostly near the newest commits (branches), sometimes far back (a berth forked long ago).
      const far = random() < 0.1;
      const pick = () =>
        ids[
          far
            ? Math.floor(random() * ids.length)
            : Math.max(0, ids.length - 1 - Math.floor(random() * 6))
        ] as string;
      list.push(pick());
      if (random() < 0.15) {
        const second = ids[Math.floor(random() * ids.length)] as string;
        if (!list.includes(second)) list.push(second);
      }
    }
    parents.set(id, list);
    times.set(id, time);
    ids.push(id);
  }
  return { parents, times };
}

/** What `git rev-list <tips>` prints: newest first, ties in the order git queued them. */
function gitOrder(dag: Dag, tips: readonly string[]): WalkedCommit[] {
  const seen = new Set<string>();
  const queue: { commit: string; time: number; order: number }[] = [];
  let order = 0;
  const push = (commit: string) => {
    if (seen.has(commit)) return;
    seen.add(commit);
    queue.push({ commit, time: dag.times.get(commit) as number, order: order++ });
  };
  for (const tip of tips) push(tip);
  const out: WalkedCommit[] = [];
  while (queue.length > 0) {
    let best = 0;
    for (let i = 1; i < queue.length; i++) {
      const q = queue[i] as (typeof queue)[number];
      const b = queue[best] as (typeof queue)[number];
      if (q.time > b.time || (q.time === b.time && q.order < b.order)) best = i;
    }
    const [next] = queue.splice(best, 1);
    if (next === undefined) break;
    const parents = dag.parents.get(next.commit) as string[];
    out.push({ commit: next.commit, parents, time: next.time });
    for (const p of parents) push(p);
  }
  return out;
}

function reachOf(dag: Dag, commit: string): Set<string> {
  const seen = new Set<string>();
  const stack = [commit];
  while (stack.length > 0) {
    const c = stack.pop() as string;
    if (seen.has(c)) continue;
    seen.add(c);
    stack.push(...(dag.parents.get(c) as string[]));
  }
  return seen;
}

/** A random history and 2-11 roots near its tips (duplicates dropped, so sometimes fewer). */
function randomFleet(seed: number): { dag: Dag; roots: string[] } {
  const random = rng(seed);
  const dag = randomDag(random, 20 + Math.floor(random() * 120));
  const all = [...dag.parents.keys()];
  const roots = [
    ...new Set(
      Array.from(
        { length: 2 + Math.floor(random() * 10) },
        () => all[all.length - 1 - Math.floor(random() * Math.min(all.length, 40))] as string,
      ),
    ),
  ];
  return { dag, roots };
}

/** The best common ancestors of two commits (what `git merge-base --all` prints). */
function bestCommonAncestors(dag: Dag, a: string, b: string): string[] {
  const inB = reachOf(dag, b);
  const common = [...reachOf(dag, a)].filter((c) => inB.has(c));
  const below = new Set(common.flatMap((c) => [...reachOf(dag, c)].filter((x) => x !== c)));
  return common.filter((c) => !below.has(c));
}

describe("the fleet's commit graph (in memory)", () => {
  it("names a merge base only when it is the one best common ancestor, on random histories", () => {
    let named = 0;
    let several = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { dag, roots } = randomFleet(seed);
      if (roots.length < 2) continue;
      const builder = new AncestryBuilder(roots);
      for (const commit of gitOrder(dag, roots)) if (builder.add(commit)) break;
      const ancestry = builder.finish();
      for (const a of roots) {
        for (const b of roots) {
          const best = bestCommonAncestors(dag, a, b);
          const answer = ancestry.mergeBase(a, b);
          if (best.length > 1) several++;
          if (answer === null) continue;
          named++;
          expect(best, `seed ${seed}: ${a} and ${b}`).toEqual([answer]);
        }
      }
      expect(ancestry.mergeBase(roots[0] as string, "not-a-root")).toBeNull();
    }
    // Both kinds of history happened: the answer is usually known, and some pairs have several.
    expect(named).toBeGreaterThan(8000);
    expect(several).toBeGreaterThan(100);
  });

  it("answers every root-to-root question as a full walk would, on random histories", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const { dag, roots } = randomFleet(seed);
      if (roots.length < 2) continue;
      const builder = new AncestryBuilder(roots);
      let read = 0;
      for (const commit of gitOrder(dag, roots)) {
        read++;
        if (builder.add(commit)) break;
      }
      const ancestry = builder.finish();
      expect(ancestry.walked).toBe(read);
      const reach = new Map(roots.map((r) => [r, reachOf(dag, r)]));
      for (const a of roots) {
        const reaching = roots.filter((d) => reach.get(d)?.has(a));
        expect([...ancestry.rootsReaching(a)].sort(), `seed ${seed}`).toEqual(reaching.sort());
        for (const b of roots) {
          const ra = reach.get(a) as Set<string>;
          const rb = reach.get(b) as Set<string>;
          expect(ancestry.isAncestor(a, b), `seed ${seed}: ${a} in ${b}`).toBe(rb.has(a));
          const exclusive = [...ra].filter((c) => !rb.has(c)).length;
          expect(ancestry.countExclusive(a, b), `seed ${seed}: ${a} not ${b}`).toBe(exclusive);
        }
      }
    }
  });

  it("hands a far, old root to git's counts and still answers every root-to-root question", () => {
    let handedOff = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const random = rng(seed);
      // A near fleet over a long history, and one root forked far down (an old, stale berth).
      const dag = randomDag(random, 60 + Math.floor(random() * 60));
      const all = [...dag.parents.keys()];
      const trunk = all.at(-1) as string;
      let tip = trunk;
      // A long chain on top: the far root forks below all of it.
      for (let i = 0; i < 300; i++) {
        const id = `t${i}`;
        dag.parents.set(id, [tip]);
        dag.times.set(id, (dag.times.get(tip) as number) + 1 + Math.floor(random() * 2));
        tip = id;
      }
      const nearRoots = [tip];
      for (let b = 0; b < 2 + Math.floor(random() * 5); b++) {
        const base = `t${299 - Math.floor(random() * 10)}`;
        const id = `n${b}`;
        dag.parents.set(id, [base]);
        dag.times.set(id, (dag.times.get(tip) as number) + 1 + b);
        nearRoots.push(id);
      }
      const forkAt = all[Math.floor(random() * all.length)] as string;
      const far = "far";
      dag.parents.set(far, [forkAt]);
      dag.times.set(far, (dag.times.get(forkAt) as number) + (random() < 0.5 ? 0 : 1));
      // Sometimes the far root is on the trunk already (landed long ago).
      const farRoot = random() < 0.2 ? forkAt : far;
      const roots = [...new Set([tip, ...nearRoots, farRoot])];
      const handOff = { primary: tip, times: dag.times, minWalk: 10 };
      const builder = new AncestryBuilder(roots, handOff);
      for (const commit of gitOrder(dag, roots)) if (builder.add(commit)) break;
      const reach = new Map(roots.map((r) => [r, reachOf(dag, r)]));
      const exclusive = (a: string, b: string) => {
        const rb = reach.get(b) as Set<string>;
        return [...(reach.get(a) as Set<string>)].filter((c) => !rb.has(c)).length;
      };
      const gone = builder.handedOff();
      if (gone !== null) handedOff++;
      const ancestry = builder.finish(
        gone === null ? undefined : { behind: exclusive(tip, gone), ahead: exclusive(gone, tip) },
      );
      for (const a of roots) {
        const reaching = roots.filter((d) => reach.get(d)?.has(a));
        expect([...ancestry.rootsReaching(a)].sort(), `seed ${seed}: ${a}`).toEqual(
          reaching.sort(),
        );
        for (const b of roots) {
          expect(ancestry.isAncestor(a, b), `seed ${seed}: ${a} in ${b}`).toBe(
            (reach.get(b) as Set<string>).has(a),
          );
          expect(ancestry.countExclusive(a, b), `seed ${seed}: ${a} not ${b}`).toBe(
            exclusive(a, b),
          );
        }
      }
    }
    // The case this is for happened, and often.
    expect(handedOff).toBeGreaterThan(50);
  });

  it("stops near the tips when every root meets the others soon", () => {
    // A long trunk with a few branches near its tip: the walk need not go far down.
    const parents = new Map<string, string[]>();
    const times = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      parents.set(`t${i}`, i === 0 ? [] : [`t${i - 1}`]);
      times.set(`t${i}`, i * 60);
    }
    for (let b = 0; b < 5; b++) {
      parents.set(`b${b}`, [`t${4990 + b}`]);
      times.set(`b${b}`, 5000 * 60 + b);
    }
    const dag = { parents, times };
    const roots = ["t4999", "b0", "b1", "b2", "b3", "b4"];
    const builder = new AncestryBuilder(roots);
    for (const commit of gitOrder(dag, roots)) if (builder.add(commit)) break;
    const ancestry = builder.finish();
    expect(ancestry.walked).toBeLessThan(30);
    expect(ancestry.countExclusive("t4999", "b0")).toBe(9);
    expect(ancestry.countExclusive("b0", "t4999")).toBe(1);
  });
});

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/**
 * A history written by one `git fast-import`, a minute between commits: a
 * trunk of `trunk` commits, and branches forked from given trunk commits with
 * `work` commits each (the newest written last, so dates follow the graph).
 */
function importHistory(
  r: TestRepo,
  trunk: number,
  branches: { name: string; from: number; work: number; old?: boolean }[],
): void {
  const out: string[] = [];
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let mark = 0;
  let time = 1_700_000_000;
  const timeOf: number[] = [];
  const commit = (ref: string, from: number | null, message: string, at?: number) => {
    mark++;
    time += 60;
    timeOf[mark] = at ?? time;
    out.push(`commit ${ref}\nmark :${mark}\ncommitter T <t@example.com> ${timeOf[mark]} +0000\n`);
    out.push(data(message), from === null ? "" : `from :${from}\n`, "\n");
    return mark;
  };
  const trunkMarks: number[] = [];
  for (let i = 0; i < trunk; i++) {
    trunkMarks.push(commit("refs/heads/main", trunkMarks.at(-1) ?? null, `trunk ${i}`));
  }
  for (const b of branches) {
    let tip = trunkMarks[b.from] as number;
    if (b.work === 0) out.push(`reset refs/heads/${b.name}\nfrom :${tip}\n\n`);
    for (let i = 0; i < b.work; i++) {
      // An old branch's commits are dated just after its fork point (a stale berth).
      const at = b.old ? (timeOf[tip] as number) + 1 : undefined;
      tip = commit(`refs/heads/${b.name}`, tip, `${b.name} ${i}`, at);
    }
  }
  execFileSync("git", ["fast-import", "--quiet", "--force"], {
    cwd: r.path,
    env: r.env,
    input: out.join(""),
  });
  r.git(["reset", "-q", "--hard", "main"]);
}

describe("the fleet's commit graph (real git)", () => {
  it("gives a far-behind branch the ahead/behind counts git rev-list --count gives", async () => {
    repo = makeRepo();
    const r = repo;
    importHistory(r, 3000, [
      { name: "far", from: 10, work: 2 },
      { name: "near", from: 2995, work: 1 },
      { name: "stacked", from: 2990, work: 3 },
      { name: "fresh", from: 2999, work: 0 },
    ]);
    const tip = (ref: string) => r.git(["rev-parse", ref]);
    const count = (range: string) => Number(r.git(["rev-list", "--count", range]));
    const names = ["main", "far", "near", "stacked", "fresh"];
    const ancestry = await readAncestry(r.path, names.map(tip));
    for (const a of names) {
      for (const b of names) {
        expect(ancestry.countExclusive(tip(a), tip(b)), `${b}..${a}`).toBe(count(`${b}..${a}`));
        const merged = r.git(["branch", "--format=%(refname:short)", "--merged", b]).split("\n");
        expect(ancestry.isAncestor(tip(a), tip(b)), `${a} in ${b}`).toBe(merged.includes(a));
      }
    }
    expect(count("far..main")).toBe(2989);
    // The walk went down to where the far branch forked (2,990 trunk commits
    // and the 6 on branches) and stopped a few commits below it, not at the root.
    expect(ancestry.walked).toBeGreaterThanOrEqual(2996);
    expect(ancestry.walked).toBeLessThan(3006);
  });

  it("leaves a far-behind branch to git's own count and gives the same answers, with a commit-graph or not", async () => {
    repo = makeRepo();
    const r = repo;
    importHistory(r, 5000, [
      { name: "far", from: 10, work: 0 },
      { name: "stale", from: 20, work: 2, old: true },
      { name: "near", from: 4995, work: 1 },
    ]);
    const tip = (ref: string) => r.git(["rev-parse", ref]);
    const count = (range: string) => Number(r.git(["rev-list", "--count", range]));
    // The roots' times, as the survey has them from its listing of the refs.
    const times = new Map(
      r
        .git(["for-each-ref", "--format=%(objectname) %(committerdate:unix)", "refs/heads"])
        .split("\n")
        .map((line) => line.split(" "))
        .map(([oid, time]) => [oid as string, Number(time)] as const),
    );
    for (const graph of [false, true]) {
      if (graph) r.git(["commit-graph", "write", "--reachable"]);
      // The stale branch's commits are old too: dated just after its fork point.
      for (const names of [
        ["main", "stale", "near"],
        ["main", "far", "near"],
      ]) {
        const ancestry = await readAncestry(r.path, names.map(tip), {
          primary: tip("main"),
          times,
        });
        for (const a of names) {
          for (const b of names) {
            expect(ancestry.countExclusive(tip(a), tip(b)), `${b}..${a}`).toBe(count(`${b}..${a}`));
            const merged = r
              .git(["branch", "--format=%(refname:short)", "--merged", b])
              .split("\n");
            expect(ancestry.isAncestor(tip(a), tip(b)), `${a} in ${b}`).toBe(merged.includes(a));
          }
        }
        // It did not read down to where the far one forked: git counted it.
        expect(ancestry.walked).toBeLessThan(HAND_OFF_MIN_WALK + 100);
        expect(ancestry.countedByGit).toBeGreaterThan(4900);
      }
    }
  });

  it("reads only the tips' neighbourhood when no branch is far behind", async () => {
    repo = makeRepo();
    const r = repo;
    importHistory(r, 3000, [
      { name: "a", from: 2990, work: 2 },
      { name: "b", from: 2995, work: 1 },
    ]);
    const tip = (ref: string) => r.git(["rev-parse", ref]);
    const ancestry = await readAncestry(r.path, ["main", "a", "b"].map(tip));
    expect(ancestry.walked).toBeLessThan(30);
    expect(ancestry.countExclusive(tip("main"), tip("a"))).toBe(9);
  });
});

describe("the commit-graph hint", () => {
  it("is given when the walk is long and the repository has no commit-graph, and not once it has", async () => {
    repo = makeRepo();
    const r = repo;
    importHistory(r, LONG_WALK_COMMITS + 2000, [{ name: "far", from: 100, work: 1 }]);
    const status = async () => {
      const { ctx } = testContext(r.path, r.env);
      return readStatus(ctx, {});
    };
    const hinted = (await status()).hints.filter((h) => h.includes("commit-graph"));
    expect(hinted).toHaveLength(1);
    expect(hinted[0]).toContain("git commit-graph write --reachable");
    // berth never wrote one itself.
    expect(existsSync(join(r.path, ".git", "objects", "info", "commit-graph"))).toBe(false);

    r.git(["commit-graph", "write", "--reachable"]);
    const after = await status();
    expect(after.hints.filter((h) => h.includes("commit-graph"))).toEqual([]);
    // The same answers either way: the far branch's counts are git's.
    expect(Number(r.git(["rev-list", "--count", "far..main"]))).toBe(LONG_WALK_COMMITS + 1899);
  });

  it("is not given when no branch is far behind", async () => {
    repo = makeRepo();
    const r = repo;
    importHistory(r, LONG_WALK_COMMITS + 2000, [
      { name: "near", from: LONG_WALK_COMMITS + 1990, work: 1 },
    ]);
    const { ctx } = testContext(r.path, r.env);
    const result = await readStatus(ctx, {});
    expect(result.hints.filter((h) => h.includes("commit-graph"))).toEqual([]);
  });
});
