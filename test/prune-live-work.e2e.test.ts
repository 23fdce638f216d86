import { execFileSync } from "node:child_process";
import { existsSync, renameSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { berthBranches, worktreePaths } from "./helpers/fleet.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * `berth worktree prune` around work git still holds, end to end through the
 * built binary on real repositories: a stale registration's detached commit,
 * a branch a checkout is rebasing, a git operation in progress, and a
 * detached berth's own branch.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

interface Berth {
  id: string;
  branch: string;
  path: string;
}

function setUp(): TestRepo {
  repo = makeRepo({ config: "[logbook]\nenabled = false\n" });
  return repo;
}

const berth = (r: TestRepo, args: string[], cwd = r.path) => runBerth(args, { cwd, env: r.env });

async function start(r: TestRepo, name: string): Promise<Berth> {
  const run = await berth(r, ["start", name, "--json"]);
  if (run.code !== 0) throw new Error(`start ${name}: ${run.stdout}${run.stderr}`);
  return run.json.data as Berth;
}

/** A git command expected to stop (a rebase that halts): its exit code, not a throw. */
function gitStops(r: TestRepo, args: string[], cwd: string): number {
  try {
    execFileSync("git", args, { cwd, env: r.env, stdio: "ignore" });
    return 0;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe("a stale registration whose detached HEAD is on no ref", () => {
  it("gets a recovery ref before its registration goes; the plan and the --json step name it", async () => {
    const r = setUp();
    const a = await start(r, "mv");
    r.git(["checkout", "-q", "--detach"], a.path);
    r.write("x.txt", "x\n", a.path);
    const lone = r.commit("detached work", a.path);
    renameSync(a.path, `${a.path}-moved`); // moved by hand, not with git worktree move
    const onBranch = await start(r, "kept");
    r.write("k.txt", "k\n", onBranch.path);
    r.commit("branch work", onBranch.path);
    renameSync(onBranch.path, `${onBranch.path}-moved`);

    const dry = await berth(r, ["worktree", "prune", "--dry-run", "--json"]);
    const stale = dry.json.data.sections.stale;
    expect(stale).toHaveLength(2);
    expect(stale).toContainEqual(
      expect.objectContaining({ id: a.id, head: lone, head_on_no_ref: true }),
    );
    // Its branch holds its HEAD: nothing to recover.
    expect(stale).toContainEqual(
      expect.objectContaining({ id: onBranch.id, head_on_no_ref: false }),
    );
    const steps = dry.json.plan.steps.map((s: { step: string; target: string }) => [
      s.step,
      s.target,
    ]);
    const removal = steps.findIndex((s: string[]) => s[1] === a.path);
    expect(steps[removal]).toEqual(["remove stale registration", a.path]);
    expect(steps[removal - 1]).toEqual(["write recovery ref", lone]);
    expect(steps.filter((s: string[]) => s[0] === "write recovery ref")).toHaveLength(1);
    const human = await berth(r, ["worktree", "prune"]);
    expect(human.stdout + human.stderr).toContain("recovery ref");

    const apply = await berth(r, ["worktree", "prune", "--yes", "--json"]);
    expect(apply.code).toBe(0);
    const recovery = r.git(["for-each-ref", "--format=%(refname)", "--contains", lone]);
    expect(recovery).toMatch(new RegExp(`^refs/berth/recovery/[0-9TZ.]+-${a.id}$`));
    expect(r.git(["rev-parse", recovery])).toBe(lone);
    const applied = apply.json.data.applied.filter(
      (x: { section: string }) => x.section === "stale",
    );
    const removed = applied.findIndex((x: { target: string }) => x.target === a.path);
    expect(applied[removed]).toEqual({
      section: "stale",
      target: a.path,
      action: "removed stale registration",
    });
    expect(applied[removed - 1]).toEqual({
      section: "stale",
      target: recovery,
      action: "wrote recovery ref",
    });
    expect(apply.json.steps).toContainEqual({
      step: "wrote recovery ref",
      target: recovery,
      outcome: "done",
    });
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(r.git(["for-each-ref", "--format=%(refname)", "refs/berth/recovery"])).toBe(recovery);
  });
});

describe("a live checkout holds what it is working on", () => {
  it("keeps the branch a berth is in the middle of rebasing (git would refuse too)", async () => {
    const r = setUp();
    const a = await start(r, "rb");
    r.write("c1.txt", "1\n", a.path);
    r.commit("c1", a.path);
    r.git(["merge", "-q", "--ff-only", a.branch]); // c1 is on the trunk
    expect(gitStops(r, ["rebase", "--exec", "false", "HEAD~1"], a.path)).not.toBe(0);
    r.git(["commit", "-q", "--amend", "-m", "c1, reworded"], a.path);
    const tip = r.git(["rev-parse", a.branch]);

    const run = await berth(r, ["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([]);
    expect(r.git(["rev-parse", a.branch])).toBe(tip);
    r.git(["rebase", "--continue"], a.path);
    expect(r.git(["log", "-1", "--format=%s", a.branch])).toBe("c1, reworded");
  });

  it("keeps the own branch of a live detached berth that has no commits of its own", async () => {
    const r = setUp();
    const a = await start(r, "det");
    r.git(["checkout", "-q", "--detach"], a.path);
    r.write("d.txt", "d\n", a.path);
    r.commit("detached work", a.path);

    const run = await berth(r, ["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([]);
    expect(berthBranches(r)).toEqual([a.branch]);
    expect(worktreePaths(r)).toEqual([r.path, a.path]);
  });
});

describe("a berth with a git operation in progress", () => {
  it("is never torn down as landed mid-bisect; the hint says how to end the bisect", async () => {
    const r = setUp();
    for (const n of [1, 2, 3, 4, 5, 6]) {
      r.write("n.txt", `${n}\n`);
      r.commit(`n${n}`);
    }
    const a = await start(r, "bis");
    r.write("w.txt", "w\n", a.path);
    r.commit("my unlanded work", a.path);
    r.git(["bisect", "start", "main", "main~5"], a.path); // detached on a trunk commit

    const dry = await berth(r, ["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.json.data.sections.landed).toEqual([]);
    const run = await berth(r, ["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([]);
    expect(worktreePaths(r)).toEqual([r.path, a.path]);
    expect(existsSync(a.path)).toBe(true);
    expect(run.json.hints).toContainEqual(
      `${a.id} has landed but is kept: a bisect is in progress; end it with git -C ${a.path} bisect reset`,
    );
  });

  it("is never torn down as landed mid-rebase; the hint names the rebase and how to finish or abort it", async () => {
    const r = setUp();
    const a = await start(r, "reb");
    r.write("c1.txt", "1\n", a.path);
    r.commit("c1", a.path);
    r.git(["merge", "-q", "--ff-only", a.branch]);
    // Stopped after picking c1: detached at a trunk commit.
    expect(gitStops(r, ["rebase", "--exec", "false", "HEAD~1"], a.path)).not.toBe(0);

    const run = await berth(r, ["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([]);
    expect(worktreePaths(r)).toEqual([r.path, a.path]);
    expect(berthBranches(r)).toEqual([a.branch]);
    expect(run.json.hints).toContainEqual(
      `${a.id} has landed but is kept: a rebase of ${a.branch} is in progress; continue it with git -C ${a.path} rebase --continue, or abort it with git -C ${a.path} rebase --abort`,
    );
  });
});
