import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  commitIn,
  commitsNow,
  expectClean,
  type Fleet,
  hold,
  makeFleet,
  reached,
  readFleetFacts,
  release,
  spawnBerth,
  start,
  train,
  waitFor,
} from "./crash.js";

/**
 * Several berth processes at once (spec section 9, invariant 6): the fleet
 * lock serialises mutations, ids and ports stay unique, and a reclaim or a
 * landed prune racing a person's commit or edit loses nothing.
 */

let fleet: Fleet | undefined;
afterEach(() => fleet?.cleanup());

function resourceLog(f: Fleet): string[] {
  const file = join(f.dir, "resource.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

describe("eight berth start at once", () => {
  it("all succeed with distinct ids, branches, folders and ports, each resource created once", async () => {
    // A band of 12 ports for 8 berths: without serialised id choice, ports collide.
    fleet = makeFleet({ resources: ["db"], portSpan: 12 });
    const f = fleet;
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => spawnBerth(f, ["start", "same name", "--json"]).done),
    );
    for (const run of runs) expectClean(run, [0]);
    const data = runs.map(
      (r) => r.json.data as { id: string; branch: string; path: string; port: number },
    );
    expect(new Set(data.map((d) => d.id)).size).toBe(8);
    expect(new Set(data.map((d) => d.branch)).size).toBe(8);
    expect(new Set(data.map((d) => d.path)).size).toBe(8);
    expect(
      new Set(data.map((d) => d.port)).size,
      JSON.stringify(data.map((d) => [d.id, d.port])),
    ).toBe(8);
    const facts = readFleetFacts(f);
    expect(facts.worktrees).toHaveLength(9);
    expect(facts.ledger).toHaveLength(8);
    expect(facts.resources).toHaveLength(8);
    expect(resourceLog(f).filter((l) => l.startsWith("create"))).toHaveLength(8);
    expect(facts.lock).toBe(false);
  });
});

describe("parallel prunes", () => {
  it("tear each landed berth down once, destroy each resource once, and agree on the result", async () => {
    fleet = makeFleet({ resources: ["db", "cache"] });
    const f = fleet;
    const berths = [];
    for (const name of ["one", "two", "three"]) {
      const b = await start(f, name);
      commitIn(f, b.path, `${name}.txt`);
      f.repo.git(["merge", "-q", "--ff-only", b.branch]);
      berths.push(b);
    }
    const runs = await Promise.all(
      Array.from({ length: 3 }, () => spawnBerth(f, ["worktree", "prune", "--yes", "--json"]).done),
    );
    for (const run of runs) expectClean(run, [0]);
    const facts = readFleetFacts(f);
    expect(facts.worktrees).toHaveLength(1);
    expect(facts.ledger).toEqual([]);
    expect(facts.resources).toEqual([]);
    const destroyed = resourceLog(f).filter((l) => l.startsWith("destroy"));
    expect(destroyed.sort()).toEqual(
      berths.flatMap((b) => [`destroy cache ${b.id}`, `destroy db ${b.id}`]).sort(),
    );
    const applied = runs.flatMap(
      (r) => r.json.data.applied as { target: string; action: string }[],
    );
    for (const b of berths) {
      expect(
        applied.filter((a) => a.target === b.path && a.action === "tore down landed berth"),
      ).toHaveLength(1);
    }
    expect(f.repo.git(["for-each-ref", "refs/heads/berth"])).toBe("");
  });
});

describe("a mutating verb waits for the lock, then refuses with locked", () => {
  it("while a prune holds the lock, a drop waits, refuses with locked and changes nothing", async () => {
    fleet = makeFleet({ resources: ["db"] });
    const f = fleet;
    const landed = await start(f, "landed");
    commitIn(f, landed.path, "landed.txt");
    f.repo.git(["merge", "-q", "--ff-only", landed.branch]);
    const other = await start(f, "other");
    hold(f, "destroy-db");
    const prune = spawnBerth(f, ["worktree", "prune", "--yes", "--json"]);
    await waitFor(() => reached(f, "destroy-db"), "the prune to hold the lock in a destroy");
    const before = f.repo.git(["worktree", "list", "--porcelain"]);
    const drop = await f.berth(["worktree", "drop", other.id, "--yes", "--json"]);
    expectClean(drop, [1]);
    expect(drop.json.error.code).toBe("locked");
    expect(f.repo.git(["worktree", "list", "--porcelain"])).toBe(before);
    release(f, "destroy-db");
    expectClean(await prune.done, [0]);
    expectClean(await f.berth(["worktree", "drop", other.id, "--yes", "--json"]), [0]);
  }, 90_000);
});

describe("a reclaim racing the person working in its candidate", () => {
  it("a commit that lands between the re-check and the removal stays reachable: the ref is kept", async () => {
    fleet = makeFleet({ resources: ["db"] });
    const f = fleet;
    const { a } = await train(f);
    hold(f, "destroy-db");
    const prune = spawnBerth(f, ["worktree", "prune", "--contained", "--yes", "--json"]);
    await waitFor(() => reached(f, "destroy-db"), "the reclaim to reach the destroy");
    const late = commitIn(f, a.path, "late.txt");
    release(f, "destroy-db");
    const run = await prune.done;
    expectClean(run, [0, 1]);
    expect(commitsNow(f).has(late)).toBe(true);
    expect(f.repo.git(["rev-parse", a.branch])).toBe(late);
  });

  it("an untracked file written during the reclaim keeps the checkout", async () => {
    fleet = makeFleet({ resources: ["db"] });
    const f = fleet;
    const { a } = await train(f);
    hold(f, "destroy-db");
    const prune = spawnBerth(f, ["worktree", "prune", "--contained", "--yes", "--json"]);
    await waitFor(() => reached(f, "destroy-db"), "the reclaim to reach the destroy");
    writeFileSync(join(a.path, "notes.txt"), "do not lose me\n");
    release(f, "destroy-db");
    const run = await prune.done;
    expectClean(run, [0, 1]);
    expect(readFileSync(join(a.path, "notes.txt"), "utf8")).toBe("do not lose me\n");
    expect(readFleetFacts(f).worktrees.map((w) => w.path)).toContain(a.path);
  });

  it("commits made in a loop while reclaims run are never lost", async () => {
    fleet = makeFleet({ resources: ["db"] });
    const f = fleet;
    const { a } = await train(f);
    const made: string[] = [];
    let stop = false;
    const committing = (async () => {
      for (let i = 0; !stop && i < 40; i++) {
        try {
          made.push(commitIn(f, a.path, `loop-${i}.txt`));
        } catch {
          break; // the checkout was reclaimed: git refuses, nothing was made
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const runs = await Promise.all(
      Array.from(
        { length: 3 },
        () => spawnBerth(f, ["worktree", "prune", "--contained", "--yes", "--json"]).done,
      ),
    );
    stop = true;
    await committing;
    for (const run of runs) expectClean(run, [0, 1]);
    const all = commitsNow(f);
    for (const commit of made) expect(all.has(commit)).toBe(true);
  });

  it("a commit racing a landed prune keeps the branch (compare-and-swap)", async () => {
    fleet = makeFleet({ resources: ["db"] });
    const f = fleet;
    const b = await start(f, "landed");
    commitIn(f, b.path, "landed.txt");
    f.repo.git(["merge", "-q", "--ff-only", b.branch]);
    hold(f, "destroy-db");
    const prune = spawnBerth(f, ["worktree", "prune", "--yes", "--json"]);
    await waitFor(() => reached(f, "destroy-db"), "the prune to reach the destroy");
    const late = commitIn(f, b.path, "late.txt");
    release(f, "destroy-db");
    expectClean(await prune.done, [0, 1]);
    expect(commitsNow(f).has(late)).toBe(true);
  });
});
