import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { berthBranches, ledgerFiles, worktreePaths } from "./helpers/fleet.js";
import { berthWith, queueFixture, tip } from "./helpers/queue.js";
import { runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * A rejection whose integration checkout cannot be torn down (spec section 11,
 * invariants 5 and 7; found by the reliability model, seed 2122466565): the
 * checkout is kept with the resource it still owns, the rejection says so
 * (teardown_failed, never "nothing changed"), the entry records it, and
 * `berth queue run` removes it once the destroy command works.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

// The resource's destroy fails while .git/fail-destroy exists; the gate is red on bad.txt.
const CONFIG = `[worktree.resources.db]
create = 'true'
destroy = 'test ! -e "$BERTH_REPO/.git/fail-destroy"'

[gate]
checks = [{ name = "no-bad", run = 'test ! -e bad.txt' }]
`;

describe("a rejected entry whose integration checkout's destroy fails", () => {
  it("is reported as teardown_failed with the checkout kept and recorded; queue run removes it later", async () => {
    const fx = queueFixture(CONFIG);
    repo = fx.repo;
    const r = repo;
    const { env } = fx;
    const bad = await berthWith(r, env, "bad", { "bad.txt": "the gate rejects this\n" });
    // The trunk moves on, so bad lands (or not) through an integration checkout.
    r.write("trunk.txt", "trunk\n");
    const trunk = r.commit("trunk moves on");
    const flag = join(r.path, ".git", "fail-destroy");
    writeFileSync(flag, "");
    const worktreesBefore = worktreePaths(r);
    const ledgerBefore = ledgerFiles(r);

    const run = await runBerth(["accept", bad.id, "--yes", "--json"], { cwd: r.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("teardown_failed");
    expect(run.json.error.message).toContain('check "no-bad" failed');
    expect(run.json.error.next).toBe("berth queue run");
    const entry = run.json.data.queue;
    expect(entry).toMatchObject({ state: "rejected", rejection: { kind: "red", check: "no-bad" } });
    expect(entry.leftover.id).toMatch(/^integrate-1-/);
    // The trunk, the berth, its branch and tip are untouched.
    expect(tip(r, "main")).toBe(trunk);
    expect(existsSync(bad.path)).toBe(true);
    expect(tip(r, bad.branch)).not.toBe(trunk);
    // The integration checkout is kept with its resource (invariant 5), and the queue shows it.
    const kept = worktreePaths(r).filter((p) => !worktreesBefore.includes(p));
    expect(kept).toHaveLength(1);
    expect(kept[0]).toContain(entry.leftover.id);
    expect(ledgerFiles(r)).toHaveLength(ledgerBefore.length + 1);
    const listed = await runBerth(["queue", "--json"], { cwd: r.path, env });
    expect(listed.json.data.entries[0].leftover).toEqual(entry.leftover);
    const human = await runBerth(["queue"], { cwd: r.path, env });
    expect(human.stdout).toContain(`integration checkout ${entry.leftover.id} left`);

    // Still failing: queue run tries, keeps it, and says so.
    const tried = await runBerth(["queue", "run", "--json"], { cwd: r.path, env });
    expect(tried.code).toBe(0);
    expect(tried.json.hints.join("\n")).toContain(entry.leftover.id);
    expect(worktreePaths(r)).toContain(kept[0]);

    // The destroy works again: the next queue run removes the checkout and its branch.
    rmSync(flag);
    const done = await runBerth(["queue", "run", "--json"], { cwd: r.path, env });
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.json.hints).toEqual([]);
    expect(done.json.data.entries[0]).toMatchObject({ state: "rejected", leftover: null });
    expect(worktreePaths(r)).toEqual(worktreesBefore);
    expect(ledgerFiles(r)).toEqual(ledgerBefore);
    expect(berthBranches(r)).toEqual([bad.branch]);
    expect(tip(r, "main")).toBe(trunk);
    expect(existsSync(bad.path)).toBe(true);
  });
});
