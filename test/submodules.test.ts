import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startBerth } from "../src/core/lifecycle/start.js";
import { applyTeardown } from "../src/core/lifecycle/teardown.js";
import { openRepository } from "../src/core/repo/repository.js";
import { removeWorktree } from "../src/git/worktrees.js";
import { readGitFile } from "../src/io/admin-dirs.js";
import { receiptPath } from "../src/io/receipt-file.js";
import { berthBranches } from "./helpers/fleet.js";
import {
  makeRepo,
  makeSubmoduleOrigin,
  runBerth,
  submodule,
  type TestRepo,
  testContext,
} from "./helpers/repo.js";

/**
 * Berths with a submodule (spec section 7; issue 15 item 6), through the
 * built binary: work inside a submodule makes the berth dirty for status,
 * the gate and drop; a clean berth with a submodule is torn down for good.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A trunk with a submodule `lib`, and a berth in which it is checked out. */
async function berthWithSubmodule(name = "work") {
  const r = makeRepo();
  repo = r;
  submodule(r, ["add", "-q", makeSubmoduleOrigin(r, "lib-origin", "f.txt", "library\n"), "lib"]);
  r.commit("add the lib submodule");
  const started = await startBerth(testContext(r.path, r.env).ctx, { name });
  const path = started.data?.path as string;
  const id = started.data?.id as string;
  submodule(r, ["update", "-q", "--init"], path);
  expect(readFileSync(join(path, "lib/f.txt"), "utf8")).toBe("library\n");
  expect(r.git(["status", "--porcelain"], path)).toBe("");
  return { r, path, id, adminDir: (await readGitFile(path)) as string };
}

async function row(r: TestRepo, id: string) {
  const run = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
  expect(run.code).toBe(0);
  return (run.json.data.worktrees as { id: string; clean: boolean; changed_files: number }[]).find(
    (w) => w.id === id,
  );
}

describe("changes inside a submodule make the berth dirty", () => {
  it.each([
    ["a modified file", (path: string) => writeFileSync(join(path, "lib/f.txt"), "edited\n")],
    ["an untracked file", (path: string) => writeFileSync(join(path, "lib/new.txt"), "new\n")],
  ])(
    "%s inside the submodule: status is not clean, the gate refuses, drop without --force refuses, nothing changes",
    async (_, change) => {
      const { r, path, id, adminDir } = await berthWithSubmodule();
      change(path);
      expect(await row(r, id)).toMatchObject({ clean: false, changed_files: 1 });

      const gate = await runBerth(["gate", "--json"], { cwd: path, env: r.env });
      expect(gate.code).not.toBe(0);
      expect(gate.json.error.code).toBe("precondition_failed");
      expect(gate.json.error.message).toContain("lib");
      expect(existsSync(receiptPath(adminDir))).toBe(false);

      const plan = await runBerth(["worktree", "drop", id, "--dry-run", "--json"], {
        cwd: r.path,
        env: r.env,
      });
      expect(JSON.stringify(plan.json)).toContain("lib");
      const drop = await runBerth(["worktree", "drop", id, "--yes", "--json"], {
        cwd: r.path,
        env: r.env,
      });
      expect(drop.code).not.toBe(0);
      expect(drop.json.error.code).toBe("precondition_failed");
      expect(drop.json.error.message).toContain("lib");
      expect(drop.json.error.next).toContain("--force");
      // The work inside the submodule is still there, and so is the berth.
      expect(existsSync(path)).toBe(true);
      expect(r.git(["status", "--porcelain", "--ignore-submodules=none"], path)).not.toBe("");
      expect(berthBranches(r)).toHaveLength(1);
    },
  );
});

describe("removing a checkout through git without force (src/git/worktrees.ts)", () => {
  it("checks right before removing and never forces a dirty checkout, submodule or not", async () => {
    const { r, path } = await berthWithSubmodule();
    writeFileSync(join(path, "lib/f.txt"), "edited at the last moment\n");
    await expect(removeWorktree(r.path, path, false)).rejects.toThrow(/1 uncommitted change.*lib/);
    expect(readFileSync(join(path, "lib/f.txt"), "utf8")).toBe("edited at the last moment\n");
    r.git(["checkout", "-q", "--", "f.txt"], join(path, "lib"));
    writeFileSync(join(path, "notes.txt"), "untracked\n");
    await expect(removeWorktree(r.path, path, false)).rejects.toThrow(/notes\.txt/);
    expect(existsSync(join(path, "notes.txt"))).toBe(true);
    rmSync(join(path, "notes.txt"));
    await removeWorktree(r.path, path, false);
    expect(existsSync(path)).toBe(false);
  });
});

describe("a clean berth with a submodule can be torn down", () => {
  it("accept lands it and tears it down fully", async () => {
    const { r, path, id } = await berthWithSubmodule();
    r.write("feature.txt", "feature\n", path);
    const commit = r.commit("feature", path);
    const gate = await runBerth(["gate", "--json"], { cwd: path, env: r.env });
    expect(gate.code).toBe(0);
    const run = await runBerth(["accept", id, "--yes", "--json"], { cwd: r.path, env: r.env });
    expect(run.code).toBe(0);
    expect(run.json.data.landing).toEqual({
      trunk_landed: true,
      main_checkout_updated: true,
      resources_destroyed: true,
      worktree_removed: true,
      branch_deleted: true,
    });
    expect(r.git(["rev-parse", "main"])).toBe(commit);
    expect(existsSync(path)).toBe(false);
    expect(r.git(["worktree", "list", "--porcelain"])).not.toContain(path);
    expect(berthBranches(r)).toEqual([]);
  });

  it("drop without --force removes it", async () => {
    const { r, path, id } = await berthWithSubmodule();
    const drop = await runBerth(["worktree", "drop", id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(drop.code).toBe(0);
    expect(drop.json.data).toMatchObject({ worktree_removed: true, branch_deleted: true });
    expect(existsSync(path)).toBe(false);
    expect(r.git(["worktree", "list", "--porcelain"])).not.toContain(path);
    expect(berthBranches(r)).toEqual([]);
  });
});

describe("commits only a berth's nested repositories hold are never deleted with it", () => {
  /** A commit on a branch of the berth's lib repository that its origin never got; lib's HEAD back where the superproject records it. */
  function unpushedLibCommit(r: TestRepo, path: string): string {
    const lib = join(path, "lib");
    r.git(["switch", "-q", "-c", "feature"], lib);
    r.write("work.txt", "only here\n", lib);
    const commit = r.commit("lib work, never pushed", lib);
    r.git(["switch", "-q", "--detach", "HEAD~1"], lib);
    expect(r.git(["status", "--porcelain", "--ignore-submodules=none"], path)).toBe("");
    return commit;
  }

  function exists(gitDir: string, commit: string): boolean {
    try {
      // Its own work tree: the recorded one may be deleted by hand.
      execFileSync("git", [
        "--git-dir",
        gitDir,
        "--work-tree",
        gitDir,
        "cat-file",
        "-e",
        `${commit}^{commit}`,
      ]);
      return true;
    } catch {
      return false;
    }
  }

  it("drop needs --force and names them; park and accept refuse; nothing changes", async () => {
    const { r, path, id, adminDir } = await berthWithSubmodule();
    const libWork = unpushedLibCommit(r, path);
    r.write("feature.txt", "feature\n", path);
    r.commit("feature", path);
    expect((await runBerth(["gate", "--json"], { cwd: path, env: r.env })).code).toBe(0);
    const trunk = r.git(["rev-parse", "main"]);

    const plan = await runBerth(["worktree", "drop", id, "--dry-run", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(plan.json.error.next).toContain("--force");
    expect(plan.json.error.message).toContain("not its nested repositories'");
    expect(plan.json.data.reasons).toContainEqual({
      kind: "nested_commits",
      detail: expect.stringContaining("submodule lib holds 1 commit(s) no remote of it has"),
    });
    for (const args of [
      ["worktree", "drop", id, "--yes", "--json"],
      ["worktree", "park", id, "--yes", "--json"],
      ["accept", id, "--yes", "--json"],
    ]) {
      const run = await runBerth(args, { cwd: r.path, env: r.env });
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.json.error.code).toBe("precondition_failed");
      expect(run.json.error.message).toContain("submodule lib holds 1 commit(s)");
      expect(existsSync(path)).toBe(true);
      expect(exists(join(adminDir, "modules", "lib"), libWork)).toBe(true);
      expect(r.git(["rev-parse", "main"])).toBe(trunk);
    }

    const forced = await runBerth(["worktree", "drop", id, "--force", "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(forced.code).toBe(0);
    expect(forced.json.data.reasons.map((x: { kind: string }) => x.kind)).toContain(
      "nested_commits",
    );
    expect(existsSync(path)).toBe(false);
  });

  it("prune keeps a landed berth whose submodule holds them, and says so; so does the teardown asked directly", async () => {
    const { r, path, id, adminDir } = await berthWithSubmodule();
    const libWork = unpushedLibCommit(r, path);
    r.write("feature.txt", "feature\n", path);
    r.commit("feature", path);
    r.git(["merge", "-q", "--ff-only", r.git(["branch", "--show-current"], path)]);
    expect(await row(r, id)).toMatchObject({ clean: true });
    const run = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(0);
    expect(run.json.hints).toContainEqual(
      expect.stringContaining(`${id} is kept: submodule lib holds 1 commit(s)`),
    );
    expect(existsSync(path)).toBe(true);
    expect(exists(join(adminDir, "modules", "lib"), libWork)).toBe(true);

    // The teardown's own re-check, for a plan made before the commit was.
    const { ctx } = testContext(r.path, r.env);
    const repoHandle = await openRepository(ctx);
    const teardown = await applyTeardown(
      repoHandle,
      ctx,
      { path, adminKey: basename(adminDir), id },
      { force: false, requireClean: true },
    );
    expect(teardown.ok).toBe(false);
    expect(teardown.failure?.reason).toContain("submodule lib holds 1 commit(s)");
    expect(existsSync(path)).toBe(true);
  });

  it("prune keeps a stale registration whose admin dir holds them (its folder deleted by hand)", async () => {
    const { r, path, id, adminDir } = await berthWithSubmodule();
    const libWork = unpushedLibCommit(r, path);
    rmSync(path, { recursive: true, force: true });
    const run = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(0);
    expect(run.json.hints).toContainEqual(expect.stringContaining(`${id} is kept: submodule lib`));
    expect(r.git(["worktree", "list", "--porcelain"])).toContain(path);
    expect(exists(join(adminDir, "modules", "lib"), libWork)).toBe(true);
  });

  it("a checkout folder deleted by hand leaves them in its admin dir: drop still needs --force", async () => {
    const { r, path, id, adminDir } = await berthWithSubmodule();
    const libWork = unpushedLibCommit(r, path);
    rmSync(path, { recursive: true, force: true });
    const drop = await runBerth(["worktree", "drop", id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(drop.code).toBe(1);
    expect(drop.json.error.message).toContain("submodule lib holds 1 commit(s)");
    expect(exists(join(adminDir, "modules", "lib"), libWork)).toBe(true);
  });

  it("accept refuses a berth with an embedded repository (a gitlink, no .gitmodules), which would go with it", async () => {
    const r = makeRepo();
    repo = r;
    const started = await startBerth(testContext(r.path, r.env).ctx, { name: "embed" });
    const path = started.data?.path as string;
    const id = started.data?.id as string;
    const nested = join(path, "nested");
    execFileSync("git", ["init", "-q", "-b", "main", nested], { env: r.env });
    r.write("n.txt", "nested\n", nested);
    const nestedWork = r.commit("nested work, only here", nested);
    r.git(["add", "nested"], path);
    r.git(["commit", "-q", "-m", "embed nested"], path);
    expect((await runBerth(["gate", "--json"], { cwd: path, env: r.env })).code).toBe(0);
    const trunk = r.git(["rev-parse", "main"]);
    const run = await runBerth(["accept", id, "--yes", "--json"], { cwd: r.path, env: r.env });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain(
      "the repository embedded at nested holds 1 commit(s) found in no other repository",
    );
    expect(r.git(["rev-parse", "main"])).toBe(trunk);
    expect(exists(join(nested, ".git"), nestedWork)).toBe(true);
  });
});
