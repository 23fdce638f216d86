import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, makeTempDir, runBerth, type TempDir, type TestRepo } from "./helpers/repo.js";

/**
 * git sets GIT_DIR and GIT_INDEX_FILE for its hooks, and `git --git-dir=...`
 * exports them: berth, which runs git in every checkout of the fleet, works on
 * its own folder's repository whatever they say (decision 0067).
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function repository(): TestRepo {
  const r = makeRepo();
  cleanups.push(() => r.cleanup());
  return r;
}

function pointedAt(r: TestRepo, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...base, GIT_DIR: `${r.path}/.git`, GIT_INDEX_FILE: `${r.path}/.git/index` };
}

describe("an inherited GIT_DIR", () => {
  it("berth tour leaves the repository it names untouched and finishes", async () => {
    const victim = repository();
    const before = victim.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
    const dir: TempDir = makeTempDir();
    cleanups.push(() => dir.cleanup());
    const run = await runBerth(["tour", "--json"], {
      cwd: dir.path,
      env: pointedAt(victim, dir.env),
    });
    expect(run.code).toBe(0);
    expect(victim.git(["for-each-ref", "--format=%(refname) %(objectname)"])).toBe(before);
    expect(victim.git(["status", "--porcelain"])).toBe("");
    expect(victim.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });

  it("status and start work on the folder's repository, each berth read as itself", async () => {
    const other = repository();
    const r = repository();
    const env = pointedAt(other, r.env);
    const started = await runBerth(["start", "mine", "--json"], { cwd: r.path, env });
    expect(started.code).toBe(0);
    const path = started.json.data.path as string;
    r.write("scratch.txt", "uncommitted\n", path);
    const status = await runBerth(["status", "--json"], { cwd: r.path, env });
    expect(status.code).toBe(0);
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === path);
    expect(row).toMatchObject({ clean: false, changed_files: 1 });
    expect(other.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
    expect(other.git(["branch", "--list"])).not.toContain("mine");
  });
});
