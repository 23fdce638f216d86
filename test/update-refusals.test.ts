import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runGate } from "../src/core/landing/gate.js";
import { runUpdate } from "../src/core/landing/update.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { readGitFile } from "../src/io/admin-dirs.js";
import { readOperationInProgress } from "../src/io/in-progress.js";
import { receiptPath } from "../src/io/receipt-file.js";
import { refusal } from "./helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

/**
 * Refusals of `berth update` (and the gate) that protect work the user has in
 * the berth: ignored files a merge would overwrite, an operation in progress,
 * and a source with unrelated history (issue 15, items 3, 4 and 11).
 */

let repo: TestRepo;
afterEach(() => repo?.cleanup());

async function berth(): Promise<{ path: string; adminDir: string }> {
  repo = makeRepo();
  repo.write(".gitignore", "coverage/\n");
  repo.commit("ignore coverage");
  const { ctx } = testContext(repo.path, repo.env);
  const started = await startBerth(ctx, { name: "work" });
  const path = started.data?.path as string;
  return { path, adminDir: (await readGitFile(path)) as string };
}

function trunkCommit(file: string, content: string, force = false): string {
  mkdirSync(join(repo.path, file, ".."), { recursive: true });
  repo.write(file, content);
  repo.git(["add", ...(force ? ["-f"] : []), file]);
  repo.git(["commit", "-q", "-m", `trunk: ${file}`]);
  return repo.git(["rev-parse", "HEAD"]);
}

function updateIn(path: string, options: { from?: string; dryRun?: boolean } = {}) {
  return runUpdate(testContext(path, repo.env).ctx, options);
}

/** Everything a refusal must leave as it was: HEAD, index, files (ignored ones too), git's state. */
function snapshot(path: string, adminDir: string, files: string[] = []) {
  return {
    head: repo.git(["rev-parse", "HEAD"], path),
    symbolic: repo.git(["rev-parse", "--abbrev-ref", "HEAD"], path),
    status: repo.git(["status", "--porcelain=v2", "--untracked-files=all", "--ignored"], path),
    files: files.map((f) => readFileSync(join(path, f), "utf8")),
    operation: readOperationInProgress(adminDir)?.kind ?? null,
  };
}

describe("berth update never overwrites an ignored file (item 3)", () => {
  it.each([
    ["a fast-forward", false],
    ["a merge", true],
  ])(
    "%s bringing in a force-added path the berth has as an ignored file is refused, naming it, in the dry run too",
    async (_, ownCommit) => {
      const { path, adminDir } = await berth();
      if (ownCommit) {
        repo.write("mine.txt", "mine\n", path);
        repo.commit("berth work", path);
      }
      mkdirSync(join(path, "coverage"));
      writeFileSync(join(path, "coverage/lcov.info"), "the berth's own coverage\n");
      expect(repo.git(["check-ignore", "coverage/lcov.info"], path)).toBe("coverage/lcov.info");
      trunkCommit("coverage/lcov.info", "the trunk's force-added coverage\n", true);
      const before = snapshot(path, adminDir, ["coverage/lcov.info"]);

      for (const dryRun of [true, false]) {
        const error = await refusal(updateIn(path, { dryRun }));
        expect(error.code).toBe("precondition_failed");
        expect(error.message).toContain("coverage/lcov.info");
        expect(error.message).toContain("nothing was merged");
        expect(error.data).toMatchObject({ in_the_way: ["coverage/lcov.info"] });
        expect(snapshot(path, adminDir, ["coverage/lcov.info"])).toEqual(before);
      }
      expect(readFileSync(join(path, "coverage/lcov.info"), "utf8")).toBe(
        "the berth's own coverage\n",
      );
    },
  );

  it("a force-added path with no file of the berth's in the way merges as before", async () => {
    const { path } = await berth();
    const tip = trunkCommit("coverage/lcov.info", "trunk\n", true);
    const result = await updateIn(path);
    expect(result.ok).toBe(true);
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(tip);
  });
});

/** Leaves `kind` in progress in the berth at `path`. */
function startOperation(kind: "merge" | "rebase" | "cherry-pick" | "revert", path: string) {
  repo.git(["switch", "-q", "-c", "side"]);
  repo.write("README.md", "side version\n");
  repo.commit("side edits README");
  repo.git(["switch", "-q", "main"]);
  repo.write("README.md", "berth version\n", path);
  repo.commit("berth edits README", path);
  const stopOnConflict = (args: string[]) => {
    // git exits non-zero when it stops on the conflict, which is the state wanted here.
    expect(() => repo.git(args, path)).toThrow();
  };
  switch (kind) {
    case "merge":
      // A merge with nothing left to stage: the tracked tree is clean, MERGE_HEAD waits.
      repo.git(["merge", "-q", "--no-commit", "-s", "ours", "side"], path);
      break;
    case "rebase":
      // Stops at the berth's own commit for editing: clean tree, detached HEAD.
      repo.git(
        ["-c", "sequence.editor=sed -i -e s/^pick/edit/", "rebase", "-q", "-i", "HEAD~1"],
        path,
      );
      break;
    case "cherry-pick":
      stopOnConflict(["cherry-pick", "side"]);
      break;
    case "revert":
      repo.write("README.md", "berth again\n", path);
      repo.commit("berth edits README again", path);
      stopOnConflict(["revert", "--no-edit", "HEAD~1"]);
      break;
  }
}

describe("an operation in progress in the berth is never aborted nor built on (item 4)", () => {
  it.each([
    ["merge", "MERGE_HEAD"],
    ["rebase", "rebase-merge"],
    ["cherry-pick", "CHERRY_PICK_HEAD"],
    ["revert", "REVERT_HEAD"],
  ] as const)(
    "a %s in progress: update (dry run or not) and gate refuse, naming it and how to continue or abort it",
    async (kind, evidence) => {
      const { path, adminDir } = await berth();
      trunkCommit("trunk.txt", "new on the trunk\n");
      startOperation(kind, path);
      expect(existsSync(join(adminDir, evidence))).toBe(true);
      const before = snapshot(path, adminDir, ["README.md"]);
      expect(before.operation).toBe(kind);

      const refusals = [
        await refusal(updateIn(path, { dryRun: true })),
        await refusal(updateIn(path)),
        await refusal(runGate(testContext(path, repo.env).ctx)),
      ];
      for (const error of refusals) {
        expect(error.code).toBe("precondition_failed");
        expect(error.message).toContain(`${kind} in progress`);
        expect(error.message).toContain(`git ${kind} --continue`);
        expect(error.message).toContain(`git ${kind} --abort`);
        expect(error.next).toContain(`git ${kind} --continue`);
        expect(snapshot(path, adminDir, ["README.md"])).toEqual(before);
      }
      expect(existsSync(join(adminDir, evidence))).toBe(true);
      expect(existsSync(receiptPath(adminDir))).toBe(false);
    },
  );
});

describe("update --from a branch with unrelated history (item 11)", () => {
  it("the dry run refuses exactly as the real update does, and nothing changes", async () => {
    const { path, adminDir } = await berth();
    repo.git(["switch", "-q", "--orphan", "elsewhere"]);
    repo.write("other.txt", "another history\n");
    repo.commit("a root of its own");
    repo.git(["switch", "-q", "main"]);
    const before = snapshot(path, adminDir);
    const dry = await refusal(updateIn(path, { from: "elsewhere", dryRun: true }));
    const real = await refusal(updateIn(path, { from: "elsewhere" }));
    expect(dry.code).toBe("precondition_failed");
    expect(real.code).toBe(dry.code);
    expect(real.message).toBe(dry.message);
    expect(dry.message).toContain("shares no history");
    expect(dry.next).toContain("--allow-unrelated-histories");
    expect(snapshot(path, adminDir)).toEqual(before);
  });
});

describe("readOperationInProgress (the one detector)", () => {
  it("names git am apart from a rebase, and a stopped sequence of picks or reverts by its next step", () => {
    repo = makeRepo();
    const gitDir = join(repo.path, ".git");
    expect(readOperationInProgress(gitDir)).toBeNull();
    mkdirSync(join(gitDir, "rebase-apply"));
    writeFileSync(join(gitDir, "rebase-apply/applying"), "");
    expect(readOperationInProgress(gitDir)).toMatchObject({
      kind: "am",
      continueArgs: ["git", "am", "--continue"],
      abortArgs: ["git", "am", "--abort"],
    });
    mkdirSync(join(gitDir, "sequencer"));
    writeFileSync(join(gitDir, "sequencer/todo"), "# comment\nrevert 1234567 subject\n");
    // The am comes first: it is what must be continued.
    expect(readOperationInProgress(gitDir)?.kind).toBe("am");
    rmSync(join(gitDir, "rebase-apply"), { recursive: true });
    expect(readOperationInProgress(gitDir)).toMatchObject({
      kind: "revert",
      evidence: "sequencer/todo",
    });
    writeFileSync(join(gitDir, "sequencer/todo"), "pick 1234567 subject\n");
    expect(readOperationInProgress(gitDir)?.kind).toBe("cherry-pick");
  });
});
