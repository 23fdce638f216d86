import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { type StartedBerth, startWithCommit } from "./helpers/train.js";

/**
 * `berth worktree reclaim <berth>` on the built binary (spec section 12): one
 * contained berth, the same predicate and confirmation as prune --contained,
 * the ref kept.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

async function train(r: TestRepo): Promise<[StartedBerth, StartedBerth, StartedBerth]> {
  const a = await startWithCommit(r, "a");
  const b = await startWithCommit(r, "b", a);
  const c = await startWithCommit(r, "c", b);
  return [a, b, c];
}

const refs = (r: TestRepo) => r.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
const worktrees = (r: TestRepo) => r.git(["worktree", "list", "--porcelain"]);

describe("berth worktree reclaim", () => {
  it("reclaims that berth only; the other contained berth and the container stay; the ref is kept", async () => {
    const r = makeRepo();
    repo = r;
    const [a, b, c] = await train(r);
    const refsBefore = refs(r);
    const run = await runBerth(["worktree", "reclaim", a.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ ok: true, verb: "worktree reclaim" });
    expect(run.json.data.sections.contained.map((row: { id: string }) => row.id)).toEqual([a.id]);
    expect(existsSync(a.path)).toBe(false);
    expect(existsSync(b.path)).toBe(true); // contained too, but not named
    expect(existsSync(c.path)).toBe(true);
    expect(refs(r)).toBe(refsBefore); // a's branch ref included, at the same tip
    expect(worktrees(r)).not.toContain(a.path);
  });

  it("asks for confirmation without a terminal, naming what is kept and destroyed, and changes nothing", async () => {
    const r = makeRepo();
    repo = r;
    const [a] = await train(r);
    const before = [refs(r), worktrees(r)];
    const run = await runBerth(["worktree", "reclaim", a.id], { cwd: r.path, env: r.env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`berth worktree reclaim ${a.id} --yes`);
    expect(run.stderr).toContain(`the branch refs ${a.branch}`);
    expect(run.stderr).toContain("their checkouts and per-berth state, the gate receipt included");
    expect([refs(r), worktrees(r)]).toEqual(before);
  });

  it("refuses a berth that is not contained, changing nothing", async () => {
    const r = makeRepo();
    repo = r;
    const [, , c] = await train(r);
    const before = [refs(r), worktrees(r)];
    const run = await runBerth(["worktree", "reclaim", c.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    // The clause that failed: C is the train's tip, which no other branch contains.
    expect(run.json.error.message).toContain(
      `${c.id} is not contained: no other branch contains its tip`,
    );
    expect([refs(r), worktrees(r)]).toEqual(before);
  });

  it("--dry-run lists the one reclaim and changes nothing", async () => {
    const r = makeRepo();
    repo = r;
    const [, b] = await train(r);
    const before = [refs(r), worktrees(r)];
    const run = await runBerth(["worktree", "reclaim", b.id, "--dry-run", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.plan.steps).toEqual([
      expect.objectContaining({ step: "reclaim contained berth", target: b.path }),
    ]);
    expect(run.json.steps).toBeUndefined();
    expect([refs(r), worktrees(r)]).toEqual(before);
  });
});
