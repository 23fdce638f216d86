import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  commitIn,
  commitsNow,
  expectClean,
  expectConsistentAfterCrash,
  type Fleet,
  killAfter,
  killAt,
  makeFleet,
  readFleetFacts,
  type Started,
  start,
  train,
} from "./crash.js";
import { Prng } from "./model/prng.js";

/**
 * Fault injection, end to end through the built binary: resource destroys
 * that fail, are killed, or hang until the caller gives up (invariant 5), and
 * SIGKILL of berth at chosen and at random points of start, drop, prune
 * --contained and accept, each followed by status and prune (invariant 7).
 *
 * The hook points are exact. The timed kills land wherever the process is
 * after a delay drawn from BERTH_FUZZ_KILL_SEED (random unless set; printed
 * on failure), so a seed replays the delays, not the machine's timing.
 */

const killSeed = Number(process.env.BERTH_FUZZ_KILL_SEED ?? Math.floor(Math.random() * 2 ** 32));

let fleet: Fleet | undefined;
afterEach(() => fleet?.cleanup());

/** Two resources, so a teardown can stop between them; a setup step to crash in. */
function twoResourceFleet(): Fleet {
  fleet = makeFleet({ resources: ["db", "cache"], setupStep: true });
  return fleet;
}

/** Switches a fault file that the resource commands test (fail-destroy, kill-destroy). */
function flag(f: Fleet, name: string, on: boolean): void {
  const file = join(f.dir, name);
  if (on) writeFileSync(file, "");
  else rmSync(file, { force: true });
}

describe("a resource destroy that fails or is killed (invariant 5)", () => {
  it.each([
    ["fails", "fail-destroy"],
    ["is killed by a signal", "kill-destroy"],
  ])(
    "when it %s, drop, landed prune, reclaim and teardown keep the checkout and what it owns",
    async (_how, fault) => {
      const f = twoResourceFleet();
      const { a, b } = await train(f);
      const landed = await start(f, "landed");
      commitIn(f, landed.path, "landed.txt");
      f.repo.git(["merge", "-q", "--ff-only", landed.branch]);
      flag(f, fault, true);
      const before = readFleetFacts(f);

      const runs = [
        await f.berth(["worktree", "drop", b.id, "--force", "--yes", "--json"]),
        await f.berth(["worktree", "prune", "--contained", "--yes", "--json"]),
        await f.berth(["worktree", "teardown", "--yes", "--json"], b.path),
      ];
      for (const run of runs) {
        expectClean(run, [1]);
        expect(run.json.error.code).toBe("teardown_failed");
      }
      const after = readFleetFacts(f);
      // Every checkout is still there, and every resource is still alive and recorded.
      expect(after.worktrees.map((w) => w.path).sort()).toEqual(
        before.worktrees.map((w) => w.path).sort(),
      );
      expect(after.resources).toEqual(before.resources);
      expect(after.ledger).toEqual(before.ledger);

      // Fixed, the same verbs finish the job.
      flag(f, fault, false);
      expectClean(await f.berth(["worktree", "prune", "--contained", "--yes", "--json"]), [0]);
      expectClean(await f.berth(["worktree", "drop", b.id, "--force", "--yes", "--json"]), [0]);
      const end = readFleetFacts(f);
      expect(end.worktrees.map((w) => w.path)).toEqual([f.repo.path]);
      expect(end.resources).toEqual([]);
      expect(end.ledger).toEqual([]);
      // The reclaimed stage's ref is kept; the forced drop wrote a recovery ref for b.
      expect(f.repo.git(["rev-parse", a.branch])).toMatch(/^[0-9a-f]{40}$/);
      expect(f.repo.git(["for-each-ref", "refs/berth/recovery"])).toContain("commit");
    },
  );

  it("a destroy that hangs until the caller's timeout kills berth leaves a fleet the next prune completes", async () => {
    const f = twoResourceFleet();
    const b = await start(f, "hangs");
    const commits = commitsNow(f);
    const killed = await killAt(f, ["worktree", "drop", b.id, "--yes", "--json"], "destroy-cache");
    expect(killed.code).not.toBe(0);
    // The checkout still owns what it had when berth died.
    const facts = readFleetFacts(f);
    expect(facts.worktrees.map((w) => w.path)).toContain(b.path);
    await expectConsistentAfterCrash(f, commits);
    expectClean(await f.berth(["worktree", "drop", b.id, "--yes", "--json"]), [0]);
    expect(readFleetFacts(f).resources).toEqual([]);
  });
});

describe("SIGKILL at chosen points (invariant 7)", () => {
  it.each(["create-db", "create-cache", "setup"])(
    "start killed in %s: status and prune run, the fleet is consistent, the next start works",
    async (point) => {
      const f = twoResourceFleet();
      const commits = commitsNow(f);
      await killAt(f, ["start", "crashed", "--json"], point);
      await expectConsistentAfterCrash(f, commits);
      const again = await f.berth(["start", "after", "--json"]);
      expectClean(again, [0]);
      // What the crashed start left is a berth berth can drop (or nothing at all).
      for (const w of readFleetFacts(f).worktrees.filter((x) =>
        x.markerId?.startsWith("crashed"),
      )) {
        expectClean(await f.berth(["worktree", "drop", w.path, "--force", "--yes", "--json"]), [0]);
      }
      expect(readFleetFacts(f).ledger.every((e) => e.id.startsWith("after"))).toBe(true);
    },
  );

  it.each(["destroy-cache", "destroy-db"])(
    "drop --force killed in %s: consistent, and dropping again finishes",
    async (point) => {
      const f = twoResourceFleet();
      const { b } = await train(f);
      const commits = commitsNow(f);
      await killAt(f, ["worktree", "drop", b.id, "--force", "--yes", "--json"], point);
      await expectConsistentAfterCrash(f, commits);
      expectClean(await f.berth(["worktree", "drop", b.id, "--force", "--yes", "--json"]), [0]);
      const facts = readFleetFacts(f);
      expect(facts.worktrees.map((w) => w.path)).not.toContain(b.path);
      expect(facts.resources.filter((r) => r.startsWith(b.id))).toEqual([]);
      // b's commits are held by the recovery ref the first (killed) drop wrote.
      for (const commit of commits) expect(facts.commits.has(commit)).toBe(true);
    },
  );

  it("prune --contained killed in a destroy: consistent, the ref is kept, pruning again finishes", async () => {
    const f = twoResourceFleet();
    const { a } = await train(f);
    const commits = commitsNow(f);
    const tip = f.repo.git(["rev-parse", a.branch]);
    await killAt(f, ["worktree", "prune", "--contained", "--yes", "--json"], "destroy-db");
    await expectConsistentAfterCrash(f, commits);
    expectClean(await f.berth(["worktree", "prune", "--contained", "--yes", "--json"]), [0]);
    expect(readFleetFacts(f).worktrees.map((w) => w.path)).not.toContain(a.path);
    expect(f.repo.git(["rev-parse", a.branch])).toBe(tip);
  });
});

describe(`SIGKILL at random moments (BERTH_FUZZ_KILL_SEED=${killSeed})`, () => {
  const rng = new Prng(killSeed);
  const cases = [
    { verb: "start", delays: [rng.int(150, 1200), rng.int(150, 1200)] },
    { verb: "drop --force", delays: [rng.int(150, 1500)] },
    { verb: "prune --contained", delays: [rng.int(150, 2000), rng.int(150, 2000)] },
  ];
  it.each(cases)(
    "$verb killed after $delays ms: every time, the fleet is consistent",
    async ({ verb, delays }) => {
      for (const delay of delays) {
        const f = twoResourceFleet();
        const { b } = await train(f);
        const commits = commitsNow(f);
        const args =
          verb === "start"
            ? ["start", "crashed", "--json"]
            : verb === "drop --force"
              ? ["worktree", "drop", b.id, "--force", "--yes", "--json"]
              : ["worktree", "prune", "--contained", "--yes", "--json"];
        const run = await killAfter(f, args, delay);
        try {
          await expectConsistentAfterCrash(f, commits);
        } catch (error) {
          throw new Error(
            `after killing berth ${verb} at ${delay} ms (exit ${run.code}); replay the delays with BERTH_FUZZ_KILL_SEED=${killSeed}\n${(error as Error).message}`,
          );
        }
        f.cleanup();
        fleet = undefined;
      }
    },
  );
});

describe("accept under faults and SIGKILL (invariant 7)", () => {
  async function ready(f: Fleet): Promise<Started> {
    const b = await start(f, "land");
    commitIn(f, b.path, "land.txt");
    return b;
  }

  it("killed in its gate: nothing landed, the fleet is consistent, accept again lands", async () => {
    const f = twoResourceFleet();
    const b = await ready(f);
    const trunk = f.repo.git(["rev-parse", "main"]);
    const tip = f.repo.git(["rev-parse", b.branch]);
    const commits = commitsNow(f);
    await killAt(f, ["accept", b.id, "--yes", "--json"], "gate");
    expect(f.repo.git(["rev-parse", "main"])).toBe(trunk);
    await expectConsistentAfterCrash(f, commits);
    expectClean(await f.berth(["accept", b.id, "--yes", "--json"]), [0]);
    expect(f.repo.git(["rev-parse", "main"])).toBe(tip);
  });

  it.each(["destroy-cache", "destroy-db"])(
    "killed in %s after the trunk moved: consistent, and accept again finishes the landing",
    async (point) => {
      const f = twoResourceFleet();
      const b = await ready(f);
      const tip = f.repo.git(["rev-parse", b.branch]);
      const commits = commitsNow(f);
      await killAt(f, ["accept", b.id, "--yes", "--json"], point);
      await expectConsistentAfterCrash(f, commits);
      const again = await f.berth(["accept", b.branch, "--yes", "--json"]);
      expectClean(again, [0]);
      expect(f.repo.git(["rev-parse", "main"])).toBe(tip);
      const facts = readFleetFacts(f);
      expect(facts.worktrees.map((w) => w.path)).not.toContain(b.path);
      expect(facts.resources).toEqual([]);
      expect(f.repo.git(["for-each-ref", `refs/heads/${b.branch}`])).toBe("");
    },
  );

  it("a failing destroy after the trunk moved is a partial landing that accept again finishes", async () => {
    const f = twoResourceFleet();
    const b = await ready(f);
    const tip = f.repo.git(["rev-parse", b.branch]);
    flag(f, "fail-destroy", true);
    const partial = await f.berth(["accept", b.id, "--yes", "--json"]);
    expectClean(partial, [1]);
    expect(partial.json.error.code).toBe("partial");
    expect(partial.json.data.landing).toMatchObject({
      trunk_landed: true,
      resources_destroyed: false,
      worktree_removed: false,
      branch_deleted: false,
    });
    expect(f.repo.git(["rev-parse", "main"])).toBe(tip);
    expect(readFleetFacts(f).worktrees.map((w) => w.path)).toContain(b.path);
    flag(f, "fail-destroy", false);
    expectClean(await f.berth(["accept", b.branch, "--yes", "--json"]), [0]);
    expect(readFleetFacts(f).worktrees.map((w) => w.path)).not.toContain(b.path);
  });

  it.each([0, 1, 2].map((i) => ({ delay: new Prng(killSeed + i).int(200, 2500) })))(
    "accept killed after $delay ms: the fleet is consistent and accept again completes or the berth already landed",
    async ({ delay }) => {
      const f = twoResourceFleet();
      const b = await ready(f);
      const trunk = f.repo.git(["rev-parse", "main"]);
      const tip = f.repo.git(["rev-parse", b.branch]);
      const commits = commitsNow(f);
      await killAfter(f, ["accept", b.id, "--yes", "--json"], delay);
      // The trunk is where it was, or at the validated tip: nothing in between.
      expect([trunk, tip]).toContain(f.repo.git(["rev-parse", "main"]));
      await expectConsistentAfterCrash(f, commits);
      const again = await f.berth(["accept", b.branch, "--yes", "--json"]);
      expectClean(again, [0, 1]);
      // 1 only when the killed run had already finished everything (the branch is gone).
      if (again.code === 1) expect(again.json.error.code).toBe("unknown_target");
      expect(f.repo.git(["rev-parse", "main"])).toBe(tip);
    },
  );
});
