import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readStatus } from "../src/core/fleet/status.js";
import { runUpdate } from "../src/core/landing/update.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { refusal } from "./helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** A repository with one berth; `ensure` commands go in an uncommitted berth.toml. */
async function setup(ensure: string[] = []) {
  repo = makeRepo();
  const { ctx } = testContext(repo.path, repo.env);
  const started = await startBerth(ctx, { name: "work" });
  // Declared after the start, so only `update` runs them.
  repo.write("berth.toml", `[worktree.setup]\nensure = ${JSON.stringify(ensure)}\n`);
  return started.data?.path as string;
}

function trunkCommit(file: string, content: string): string {
  repo.write(file, content);
  repo.git(["add", file]);
  repo.git(["commit", "-q", "-m", `trunk: ${file}`]);
  return repo.git(["rev-parse", "HEAD"]);
}

function updateIn(path: string, options: { from?: string; dryRun?: boolean } = {}) {
  const { ctx } = testContext(path, { ...repo.env, MARKS: repo.dir.path });
  return runUpdate(ctx, options);
}

function snapshot(path: string) {
  return {
    head: repo.git(["rev-parse", "HEAD"], path),
    status: repo.git(["status", "--porcelain"], path),
    readme: readFileSync(join(path, "README.md"), "utf8"),
  };
}

describe("berth update", () => {
  it("fast-forwards a berth behind the trunk and reports what came in", async () => {
    const path = await setup();
    const tip = trunkCommit("trunk.txt", "new\n");
    const result = await updateIn(path);
    expect(result.ok).toBe(true);
    expect(result.data).toMatchObject({
      merged_from: "main",
      from_tip: tip,
      up_to_date: false,
      fast_forward: true,
      commits: 1,
      files: ["trunk.txt"],
      head: tip,
    });
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(tip);
  });

  it("keeps a fast-forwarded berth without commits of its own fresh, never landed", async () => {
    const path = await setup();
    trunkCommit("trunk.txt", "new\n");
    await updateIn(path);
    const { ctx } = testContext(repo.path, repo.env);
    const status = await readStatus(ctx, {});
    const row = status.data?.worktrees.find((w) => w.path === path);
    expect(row).toMatchObject({ ahead: 0, behind: 0, state: "active" });
  });

  it("merges the trunk into a berth with its own commits", async () => {
    const path = await setup();
    repo.write("mine.txt", "mine\n", path);
    const mine = repo.commit("mine", path);
    trunkCommit("a.txt", "a\n");
    const tip = trunkCommit("b.txt", "b\n");
    const result = await updateIn(path);
    expect(result.data).toMatchObject({ fast_forward: false, commits: 2, head_before: mine });
    expect(result.data?.files.sort()).toEqual(["a.txt", "b.txt"]);
    expect(repo.git(["rev-list", "--parents", "-n1", "HEAD"], path).split(" ")).toEqual([
      result.data?.head,
      mine,
      tip,
    ]);
    expect(repo.git(["log", "-1", "--format=%s"], path)).toMatch(
      /^Merge branch 'main' into berth\//,
    );
    expect(repo.git(["status", "--porcelain"], path)).toBe("");
  });

  it("merges or fast-forwards as its report says, whatever merge.ff the user set", async () => {
    const path = await setup();
    repo.git(["config", "merge.ff", "only"]);
    const mine = repo.commit("mine", path);
    const tip = trunkCommit("a.txt", "a\n");
    const merged = await updateIn(path);
    expect(merged.ok).toBe(true);
    expect(repo.git(["rev-list", "--parents", "-n1", "HEAD"], path).split(" ")).toEqual([
      merged.data?.head,
      mine,
      tip,
    ]);
    repo.git(["config", "merge.ff", "false"]);
    const { ctx } = testContext(repo.path, repo.env);
    const fresh = (await startBerth(ctx, { name: "fresh" })).data?.path as string;
    const after = trunkCommit("c.txt", "c\n");
    const forwarded = await updateIn(fresh);
    expect(forwarded.data).toMatchObject({ fast_forward: true, head: after });
    expect(repo.git(["rev-parse", "HEAD"], fresh)).toBe(after);
  });

  it("on a conflict aborts the merge, leaves the tree clean and lists the conflicted paths", async () => {
    const path = await setup();
    repo.write("README.md", "berth version\n", path);
    repo.write("mine.txt", "mine\n", path);
    repo.commit("berth edits README", path);
    trunkCommit("README.md", "trunk version\n");
    const before = snapshot(path);
    const error = await refusal(updateIn(path));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("conflicts in 1 file(s): README.md");
    expect(error.message).toContain("The merge was aborted");
    expect(error.data).toMatchObject({ conflicts: ["README.md"], merged_from: "main" });
    expect(snapshot(path)).toEqual(before);
    // No merge is left in progress.
    expect(() => repo.git(["rev-parse", "-q", "--verify", "MERGE_HEAD"], path)).toThrow();
  });

  it("refuses tracked changes, and nothing changes", async () => {
    const path = await setup();
    trunkCommit("trunk.txt", "new\n");
    repo.write("README.md", "uncommitted\n", path);
    const before = snapshot(path);
    const error = await refusal(updateIn(path));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("tracked");
    expect(snapshot(path)).toEqual(before);
  });

  it("merges with untracked files present", async () => {
    const path = await setup();
    const tip = trunkCommit("trunk.txt", "new\n");
    repo.write("scratch.txt", "mine\n", path);
    const result = await updateIn(path);
    expect(result.ok).toBe(true);
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(tip);
    expect(readFileSync(join(path, "scratch.txt"), "utf8")).toBe("mine\n");
  });

  it("runs [worktree.setup].ensure even when already up to date", async () => {
    const path = await setup(['echo "$BERTH_ID $PWD" >> "$MARKS/ensured"']);
    const result = await updateIn(path);
    expect(result.ok).toBe(true);
    expect(result.data).toMatchObject({ up_to_date: true, commits: 0, files: [] });
    expect(result.data?.ensure).toEqual([expect.objectContaining({ ok: true, exit_code: 0 })]);
    const [id, pwd] = readFileSync(join(repo.dir.path, "ensured"), "utf8").trim().split(" ");
    expect(path.endsWith(`/${id}`)).toBe(true);
    expect(pwd).toBe(path);
  });

  it("reports a failing ensure command after the merge as partial", async () => {
    const path = await setup(["echo oops; exit 7", 'touch "$MARKS/never"']);
    const tip = trunkCommit("trunk.txt", "new\n");
    const result = await updateIn(path);
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("partial");
    expect(result.data?.ensure).toEqual([
      expect.objectContaining({ ok: false, exit_code: 7, tail: "oops" }),
    ]);
    expect(existsSync(join(repo.dir.path, "never"))).toBe(false);
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(tip);
  });

  it("merges --from another branch", async () => {
    const path = await setup();
    repo.git(["branch", "side"]);
    repo.git(["checkout", "-q", "side"]);
    const side = trunkCommit("side.txt", "side\n");
    repo.git(["checkout", "-q", "main"]);
    const result = await updateIn(path, { from: "side" });
    expect(result.data).toMatchObject({ merged_from: "side", from_tip: side, files: ["side.txt"] });
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(side);
  });

  it("dry run shows what would come in and changes nothing", async () => {
    const path = await setup(['touch "$MARKS/ensured"']);
    trunkCommit("trunk.txt", "new\n");
    const before = snapshot(path);
    const result = await updateIn(path, { dryRun: true });
    expect(result.data).toMatchObject({ commits: 1, files: ["trunk.txt"], ensure: [] });
    expect(result.plan?.steps.map((s) => s.step)).toEqual(["merge", "run ensure"]);
    expect(snapshot(path)).toEqual(before);
    expect(existsSync(join(repo.dir.path, "ensured"))).toBe(false);
  });

  it("refuses a detached HEAD", async () => {
    const path = await setup();
    trunkCommit("trunk.txt", "new\n");
    repo.git(["checkout", "-q", "--detach"], path);
    const before = snapshot(path);
    const error = await refusal(updateIn(path));
    expect(error.message).toContain("detached HEAD");
    expect(snapshot(path)).toEqual(before);
  });
});
