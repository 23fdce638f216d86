import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { branchesHeldBy } from "../src/core/fleet/held-branches.js";
import type { WorktreeSkeleton } from "../src/core/fleet/survey.js";
import {
  type BranchReading,
  branchVerdict,
  deleteBranch,
  keptBranchHint,
} from "../src/core/lifecycle/branch-deletion.js";
import type { OperationInProgress } from "../src/io/in-progress.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

/** The one branch rule, as plain data, and the four fates of its compare-and-swap delete. */

const landed: BranchReading = {
  branch: "berth/x",
  trunk: "main",
  prefix: "berth/",
  madeByBerth: true,
  heldByAnotherCheckout: false,
  landed: true,
  recovered: false,
};

describe("branchVerdict: which branch may be deleted", () => {
  it("deletes a landed branch under the prefix that no other checkout holds", () => {
    expect(branchVerdict(landed)).toEqual({ delete: true, branch: "berth/x" });
  });

  it("keeps it for each reason, checked in order", () => {
    const cases: [Partial<BranchReading>, string][] = [
      [{ branch: null }, "detached"],
      [{ branch: "feature/x" }, "outside_prefix"],
      [{ branch: "main" }, "outside_prefix"],
      [{ branch: "berth/main", trunk: "berth/main" }, "trunk"],
      [{ madeByBerth: false }, "not_made_by_berth"],
      [{ heldByAnotherCheckout: true }, "checked_out"],
      [{ landed: false }, "unlanded"],
    ];
    for (const [change, because] of cases) {
      expect(branchVerdict({ ...landed, ...change })).toMatchObject({ delete: false, because });
    }
  });

  it("never the trunk, even with an empty prefix and a forced removal", () => {
    const reading = { ...landed, branch: "main", prefix: "", recovered: true };
    expect(branchVerdict(reading)).toMatchObject({ delete: false, because: "trunk" });
  });

  it("unlanded commits only go when a recovery ref holds them", () => {
    expect(branchVerdict({ ...landed, landed: false, recovered: true }).delete).toBe(true);
  });

  it("the hint a plan shows for a kept branch", () => {
    const reading = { ...landed, branch: "feature/x" };
    expect(keptBranchHint(branchVerdict(reading), reading, "x")).toBe(
      "branch feature/x is not under berth/; berth keeps it",
    );
    const detached = { ...landed, branch: null };
    expect(keptBranchHint(branchVerdict(detached), detached, "x")).toBe(
      "x is detached; no branch is deleted",
    );
    expect(keptBranchHint(branchVerdict(landed), landed, "x")).toBeNull();
  });
});

describe("branchesHeldBy: which branches a checkout holds", () => {
  const checkout = (branch: string | null, markerBranch: string | null): WorktreeSkeleton => ({
    entry: {
      path: "/w",
      head: "a".repeat(40),
      branch,
      detached: branch === null,
      bare: false,
      locked: false,
      lockReason: null,
      prunable: false,
      prunableReason: null,
    },
    isMain: false,
    isCurrent: false,
    adminKey: "w",
    adminDir: "/git/worktrees/w",
    marker:
      markerBranch === null
        ? null
        : {
            id: "w",
            branch: markerBranch,
            created_at: "2026-01-01T00:00:00Z",
            berth_version: "0",
            from: null,
            from_tip: "b".repeat(40),
          },
  });
  const rebasing = (branch: string): OperationInProgress => ({
    kind: "rebase",
    evidence: "rebase-merge/",
    continueArgs: ["git", "rebase", "--continue"],
    abortArgs: ["git", "rebase", "--abort"],
    branch,
  });
  const none = () => null;

  it("its checked-out branch, the branch it rebases, and, detached, the berth's own", () => {
    expect(branchesHeldBy(checkout("berth/w", "berth/w"), none)).toEqual(["berth/w"]);
    expect(branchesHeldBy(checkout(null, null), () => rebasing("topic"))).toEqual(["topic"]);
    expect(branchesHeldBy(checkout(null, "berth/w"), none)).toEqual(["berth/w"]);
    expect(branchesHeldBy(checkout(null, null), none)).toEqual([]);
    // On another branch than its marker's: the marker's is not held (status calls that broken).
    expect(branchesHeldBy(checkout("other", "berth/w"), none)).toEqual(["other"]);
  });
});

describe("deleteBranch: a compare-and-swap with a typed fate", () => {
  let repo: TestRepo | undefined;
  afterEach(() => repo?.cleanup());

  it("deleted, absent, raced and failed", async () => {
    repo = makeRepo();
    const first = repo.git(["rev-parse", "HEAD"]);
    const second = repo.commit("second");
    repo.git(["branch", "berth/a", first]);
    repo.git(["branch", "berth/b", second]);
    repo.git(["branch", "berth/c", first]);

    expect(await deleteBranch(repo.path, join(repo.path, ".git"), "berth/a", first)).toEqual({
      fate: "deleted",
    });
    expect(repo.git(["branch", "--list", "berth/a"])).toBe("");
    expect(await deleteBranch(repo.path, join(repo.path, ".git"), "berth/a", first)).toEqual({
      fate: "absent",
    });
    expect(await deleteBranch(repo.path, join(repo.path, ".git"), "berth/b", first)).toEqual({
      fate: "raced",
      now: second,
    });
    expect(repo.git(["rev-parse", "berth/b"])).toBe(second);

    // A lock git leaves behind: the ref is still at the tip and git will not delete it.
    writeFileSync(join(repo.path, ".git", "refs", "heads", "berth", "c.lock"), "");
    const fate = await deleteBranch(repo.path, join(repo.path, ".git"), "berth/c", first);
    expect(fate.fate).toBe("failed");
    expect(fate.fate === "failed" && fate.message).toMatch(
      /update-ref -d refs\/heads\/berth\/c .* failed/,
    );
    expect(repo.git(["rev-parse", "berth/c"])).toBe(first);
  });
});
