import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { berthBranches, worktreePaths } from "./helpers/fleet.js";
import {
  berthWith,
  checkedCommits,
  isAncestor,
  landedBranches,
  onlyFastForwards,
  queueFixture,
  tip,
  trunkHistory,
} from "./helpers/queue.js";
import { runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Invariant 7 for the landing queue: a lander SIGKILLed at a recorded step
 * leaves a state the next `queue run` completes, and the trunk is never at a
 * commit the gate did not prove; two landers racing land each entry once.
 * The kills are real: a project command kills the berth process running it
 * (its parent), once, guarded by a flag file.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const RECORD = `echo "check $(git rev-parse HEAD)" >> "$MARKER"`;
/** Kills the lander (the parent of this shell) the first time only. */
const KILL_ONCE = `if [ ! -e "$MARKER.killed" ]; then touch "$MARKER.killed"; kill -9 $PPID; fi`;
/** Only inside the throwaway integration checkouts. */
const inIntegration = (command: string) => `case "$BERTH_ID" in integrate-*) ${command} ;; esac`;

const KILL_POINTS: Record<string, string> = {
  // Creating the integration checkout: its setup step.
  checkout: `[gate]
checks = [{ name = "record", run = '${RECORD}' }]
[worktree.setup]
steps = ['${inIntegration(KILL_ONCE)}']
`,
  // Gating the integration commit.
  gate: `[gate]
checks = [{ name = "record", run = '${RECORD}; ${inIntegration(KILL_ONCE)}' }]
`,
  // After the trunk moved: tearing the integration checkout down.
  finish: `[gate]
checks = [{ name = "record", run = '${RECORD}' }]
[worktree.resources.scratch]
create = "true"
destroy = '${inIntegration(KILL_ONCE)}'
`,
};

describe("a lander killed at each recorded step", () => {
  for (const [point, config] of Object.entries(KILL_POINTS)) {
    it(`killed while ${point}: queue run completes it, and the trunk only ever held proved commits`, async () => {
      const fx = queueFixture(config);
      repo = fx.repo;
      const { env, marker } = fx;
      const first = await berthWith(repo, env, "first", { "first.txt": "1\n" });
      const second = await berthWith(repo, env, "second", { "second.txt": "2\n" });
      expect((await runBerth(["accept", first.id, "--yes"], { cwd: repo.path, env })).code).toBe(0);
      const secondTip = tip(repo, second.branch);

      const killed = await runBerth(["accept", second.id, "--yes", "--json"], {
        cwd: repo.path,
        env,
      });
      expect(killed.code).not.toBe(0);
      expect(existsSync(`${marker}.killed`)).toBe(true);

      const queueAfterKill = await runBerth(["queue", "--json"], { cwd: repo.path, env });
      const entry = queueAfterKill.json.data.entries.at(-1);
      expect(["integrating", "gating"]).toContain(entry.state);

      const resumed = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      const after = await runBerth(["queue", "--json"], { cwd: repo.path, env });
      expect(after.json.data.entries.at(-1).state).toBe("landed");
      expect(isAncestor(repo, secondTip, "main")).toBe(true);
      expect(onlyFastForwards(repo)).toBe(true);
      // Every trunk value after the start was gated by the trunk's checks.
      const [, ...moves] = trunkHistory(repo);
      expect(moves).toHaveLength(2);
      for (const oid of moves) expect(checkedCommits(marker)).toContain(oid);
      // No integration checkout or branch is left behind, and the berth is finished.
      expect(worktreePaths(repo).filter((p) => p.includes("integrate-"))).toEqual([]);
      expect(berthBranches(repo)).toEqual([]);
      expect((await landedBranches(repo)).filter((b) => b === second.branch)).toHaveLength(1);
    });
  }
});

describe("a lander killed outside the integration steps", () => {
  it("killed while gating a fast-forward landing: queue run lands it, proved", async () => {
    const fx = queueFixture(`[gate]
checks = [{ name = "record", run = '${RECORD}; ${KILL_ONCE}' }]
`);
    repo = fx.repo;
    const { env, marker } = fx;
    const solo = await berthWith(repo, env, "solo", { "solo.txt": "s\n" });
    const before = tip(repo, "main");
    const killed = await runBerth(["accept", solo.id, "--yes"], { cwd: repo.path, env });
    expect(killed.code).not.toBe(0);
    expect(tip(repo, "main")).toBe(before);
    const resumed = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json.data.decided.map((e: { state: string }) => e.state)).toEqual(["landed"]);
    expect(checkedCommits(marker)).toContain(tip(repo, "main"));
    expect(trunkHistory(repo)).toHaveLength(2);
  });

  it("killed after a fast-forward landing moved the trunk (in its teardown): queue run records the entry landed, with the move", async () => {
    const fx = queueFixture(`[gate]
checks = [{ name = "record", run = '${RECORD}' }]
[worktree.resources.scratch]
create = "true"
destroy = '${KILL_ONCE}'
`);
    repo = fx.repo;
    const { env, marker } = fx;
    const solo = await berthWith(repo, env, "solo", { "solo.txt": "s\n" });
    const before = tip(repo, "main");
    const killed = await runBerth(["accept", solo.id, "--yes"], { cwd: repo.path, env });
    expect(killed.code).not.toBe(0);
    expect(existsSync(`${marker}.killed`)).toBe(true);
    const landed = tip(repo, solo.branch);
    expect(tip(repo, "main")).toBe(landed);
    const resumed = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json.data.decided).toEqual([
      expect.objectContaining({
        state: "landed",
        landed: { old_trunk: before, new_trunk: landed, via: "fast_forward" },
      }),
    ]);
  });

  it("killed after a fast-forward landing moved the trunk: accept run again finishes the berth and records its entry landed", async () => {
    const fx = queueFixture(`[gate]
checks = [{ name = "record", run = '${RECORD}' }]
[worktree.resources.scratch]
create = "true"
destroy = '${KILL_ONCE}'
`);
    repo = fx.repo;
    const { env, marker } = fx;
    const solo = await berthWith(repo, env, "solo", { "solo.txt": "s\n" });
    const before = tip(repo, "main");
    const killed = await runBerth(["accept", solo.id, "--yes"], { cwd: repo.path, env });
    expect(existsSync(`${marker}.killed`)).toBe(true);
    const landed = tip(repo, solo.branch);
    expect(tip(repo, "main")).toBe(landed);
    expect(killed.code).not.toBe(0);

    const again = await runBerth(["accept", solo.branch, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(berthBranches(repo)).toEqual([]);
    // Before, the entry stayed `gating` under the killed lander until a `queue run`.
    const queue = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    expect(queue.json.data.entries).toEqual([
      expect.objectContaining({
        id: solo.id,
        state: "landed",
        landed: { old_trunk: before, new_trunk: landed, via: "fast_forward" },
      }),
    ]);
  });

  it("killed right after the integration merge (a post-merge hook kills git's parent): queue run completes it", async () => {
    const fx = queueFixture(`[gate]\nchecks = [{ name = "record", run = '${RECORD}' }]\n`);
    repo = fx.repo;
    const { env, marker } = fx;
    const first = await berthWith(repo, env, "first", { "first.txt": "1\n" });
    const second = await berthWith(repo, env, "second", { "second.txt": "2\n" });
    expect((await runBerth(["accept", first.id, "--yes"], { cwd: repo.path, env })).code).toBe(0);
    const hook = join(repo.path, ".git", "hooks", "post-merge");
    writeFileSync(
      hook,
      `#!/bin/sh\nif [ ! -e "$MARKER.killed" ]; then touch "$MARKER.killed"; kill -9 $(ps -o ppid= -p $PPID); fi\n`,
    );
    chmodSync(hook, 0o755);
    const killed = await runBerth(["accept", second.id, "--yes"], { cwd: repo.path, env });
    expect(killed.code).not.toBe(0);
    expect(existsSync(`${marker}.killed`)).toBe(true);
    const resumed = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json.data.decided.map((e: { state: string }) => e.state)).toEqual(["landed"]);
    const [, ...moves] = trunkHistory(repo);
    for (const oid of moves) expect(checkedCommits(marker)).toContain(oid);
    expect(worktreePaths(repo).filter((p) => p.includes("integrate-"))).toEqual([]);
  });
});

describe("two landers racing", () => {
  it("two queue run processes at once: each entry lands once, one trunk move per entry", async () => {
    const fx = queueFixture(`[gate]\nchecks = [{ name = "record", run = '${RECORD}' }]\n`);
    repo = fx.repo;
    const { env } = fx;
    const berths = [];
    for (const name of ["r1", "r2", "r3"]) {
      const b = await berthWith(repo, env, name, { [`${name}.txt`]: `${name}\n` });
      await runBerth(["accept", b.id, "--no-wait", "--yes", "--json"], { cwd: repo.path, env });
      berths.push(b);
    }
    const r = repo;
    const [a, b] = await Promise.all([
      runBerth(["queue", "run", "--json"], { cwd: r.path, env }),
      runBerth(["queue", "run", "--json"], { cwd: r.path, env }),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const decided = [...a.json.data.decided, ...b.json.data.decided].map(
      (e: { id: string }) => e.id,
    );
    expect(decided.sort()).toEqual(berths.map((x) => x.id).sort());
    // The start, then exactly one move per entry.
    expect(trunkHistory(repo)).toHaveLength(4);
    expect(onlyFastForwards(repo)).toBe(true);
    const landings = await landedBranches(repo);
    for (const x of berths) expect(landings.filter((l) => l === x.branch)).toHaveLength(1);
  });
});
