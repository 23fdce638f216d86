import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { branchesMadeByBerth } from "../../io/branch-records.js";
import { type DiskUsage, NO_DISK_USAGE } from "../../io/disk-usage.js";
import { withFleetLock } from "../../io/lock.js";
import { adminDirFor } from "../../io/paths.js";
import { readNewestReflogCommit } from "../../io/reflog.js";
import type { PlanStep, StepOutcome, VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { describeLedgerProblems } from "../berth/resources.js";
import { readFleetActivity } from "../fleet/activity.js";
import { surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { resolveTarget } from "../repo/berth-target.js";
import { openRepository, type Repository } from "../repo/repository.js";
import {
  type BranchFate,
  type BranchReading,
  branchVerdict,
  checkedOutElsewhere,
  deleteBranch,
  deletionStep,
  keptBranchHint,
  madeByBerth,
} from "./branch-deletion.js";
import { describeReason, type ForceReason, forceReasons } from "./drop-reasons.js";
import { pruneRecoveryRefs, RECOVERY_PREFIX, writeRecoveryRef } from "./recovery-refs.js";
import {
  describeVerbInFlight,
  goesWithIt,
  ignoredFilesOf,
  lockedRefusal,
  mainCheckoutRefusal,
  plannedDestroys,
  refuseQueueCheckout,
  teardownTargetOf,
  unownedRefusal,
  youWereInside,
} from "./removal-facts.js";
import {
  applyTeardown,
  type Discarding,
  type TeardownTarget,
  teardownError,
  unreadableLedgerError,
} from "./teardown.js";

/**
 * `berth worktree drop <berth>` (spec section 5): discard a berth. Teardown
 * (resources, then the checkout), then delete its branch by compare-and-swap
 * on the tip the plan saw. Uncommitted changes and commits not on the trunk
 * need `--force`, and a forced drop first writes a recovery ref holding the
 * tip. Never the main checkout, never a locked worktree, never a worktree
 * berth did not create.
 */

export interface DropOptions {
  /** A berth id, a path or a branch. */
  target: string;
  force: boolean;
}

export interface DropData {
  id: string;
  path: string;
  branch: string | null;
  head: string | null;
  trunk: string | null;
  /** The drop discards work and needed `--force`. */
  forced: boolean;
  reasons: ForceReason[];
  /** Ignored files that go with the checkout (build output, local databases). */
  ignored: DiskUsage;
  /** Recorded resources, in the order they will be destroyed. */
  resources: string[];
  /** The branch the drop deletes, or null when it keeps it (see hints). */
  delete_branch: string | null;
  recovery_ref: string | null;
  /**
   * The commit a forced drop's recovery ref holds: HEAD, or, for a branch
   * deleted under the checkout, the last commit its HEAD log names.
   */
  recovery_tip: string | null;
  resources_destroyed: string[];
  worktree_removed: boolean;
  branch_deleted: boolean;
}

export interface DropPlan {
  repo: Repository;
  worktree: WorktreeFacts;
  target: TeardownTarget;
  data: DropData;
  /** What a forced drop was planned to discard: the teardown refuses work beyond it. */
  discarding: Discarding;
  steps: PlanStep[];
  hints: string[];
}

/** Reads only. Refuses (throws) what no flag allows and what needs `--force` without it. */
export async function planDrop(ctx: Context, options: DropOptions): Promise<DropPlan> {
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const worktree = resolveTarget(survey, repo.location.cwd, options.target, "worktree drop");
  // Before any refusal: the logbook names the berth this drop was about.
  ctx.journal.aim?.(worktree.entry.branch ?? worktree.marker?.branch ?? null);
  const { entry } = worktree;
  const name = worktree.marker?.id ?? entry.path;

  if (worktree.isMain) throw mainCheckoutRefusal("worktree drop", entry.path);
  if (entry.locked) throw lockedRefusal("worktree drop", name, entry);
  const target = teardownTargetOf(worktree);
  if (target === null) throw unownedRefusal("worktree drop", entry.path);
  await refuseQueueCheckout("worktree drop", repo, target.id);

  // A branch deleted under the checkout leaves HEAD unborn; its commits are then in the HEAD log only.
  const adminDir = adminDirFor(repo.location.commonDir, target.adminKey);
  const orphanedTip =
    entry.head === null && entry.branch !== null && !entry.prunable
      ? readNewestReflogCommit(adminDir)
      : null;
  const [{ reasons, changedPaths, stamps }, activity] = await Promise.all([
    forceReasons(repo, survey, worktree, adminDir, orphanedTip),
    readFleetActivity(repo, [worktree], ctx.now()),
  ]);
  // A verb working in the berth (the logbook only ever narrows): dropping needs --force.
  const inFlight = describeVerbInFlight(activity.worktrees.get(entry.path));
  if (inFlight !== null) reasons.unshift({ kind: "in_flight", detail: inFlight });
  const trunk = survey.trunk.name;
  const read: Omit<BranchReading, "recovered"> = {
    branch: entry.branch,
    trunk,
    prefix: repo.config.repository.branch_prefix,
    madeByBerth: madeByBerth(
      branchesMadeByBerth(repo.location.commonDir),
      entry.branch,
      worktree.marker,
    ),
    heldByAnotherCheckout: checkedOutElsewhere(survey.worktrees, entry.branch, worktree),
    // An unborn branch has no commits to lose.
    landed: entry.head === null || worktree.ahead === 0,
  };
  const reading = (recovered: boolean): BranchReading => ({ ...read, recovered });
  // Commits on a branch the drop keeps in any case (outside the prefix, not berth's) stay on
  // it: they are not discarded, and need no --force. A detached HEAD's are still at risk.
  const branchStays =
    entry.branch !== null && !entry.detached && !branchVerdict(reading(true)).delete;
  const discards = branchStays ? reasons.filter((r) => r.kind !== "unlanded") : reasons;
  const forced = discards.length > 0;
  // A forced drop writes a recovery ref holding the tip before anything goes.
  const branchReading = reading(forced && entry.head !== null);
  const verdict = branchVerdict(branchReading);
  // No commit at HEAD: the branch was deleted under the checkout, and there is none to delete.
  const branchToDrop = verdict.delete && entry.head !== null ? verdict.branch : null;
  const hints: string[] = [];
  const kept = keptBranchHint(verdict, branchReading, name);
  if (kept !== null) hints.push(kept);
  const destroys = await plannedDestroys(repo, target);
  if (destroys.problems.length > 0) {
    // Refused before anything, a forced drop's recovery ref included: each retry would add one.
    const message = `${target.id} cannot be dropped: unreadable ledger file(s): ${describeLedgerProblems(destroys.problems)}`;
    const rerun = ["worktree", "drop", target.id, ...(options.force ? ["--force"] : [])];
    throw unreadableLedgerError(message, destroys.problems, rerun, null, true);
  }
  const ignored = entry.prunable ? NO_DISK_USAGE : await ignoredFilesOf(entry.path);

  const data: DropData = {
    id: target.id,
    path: entry.path,
    branch: entry.branch,
    head: entry.head,
    trunk,
    forced,
    reasons: discards,
    ignored,
    resources: destroys.resources,
    delete_branch: branchToDrop,
    recovery_ref: null,
    recovery_tip: forced ? (entry.head ?? orphanedTip) : null,
    resources_destroyed: [],
    worktree_removed: false,
    branch_deleted: false,
  };
  if (forced && !options.force) {
    throw new UserError(
      "precondition_failed",
      `${target.id} holds work a drop would discard:\n${discards.map((r) => `  - ${describeReason(r)}`).join("\n")}\n--force drops it anyway; a recovery ref keeps its commits${discards.some((r) => r.kind === "nested_commits") ? " (not its nested repositories')" : ""}.`,
      {
        next: shellCommand(["berth", "worktree", "drop", target.id, "--force"]),
        data,
      },
    );
  }

  const steps: PlanStep[] = [];
  if (data.recovery_tip !== null) {
    steps.push({
      step: "write recovery ref",
      target: `${RECOVERY_PREFIX}<utc>-${target.id}`,
      detail: `at ${data.recovery_tip}`,
    });
  }
  for (const resource of data.resources) steps.push({ step: "destroy resource", target: resource });
  steps.push({
    step: "remove worktree",
    target: entry.path,
    detail: entry.prunable
      ? "its folder is already gone; the registration goes"
      : goesWithIt(ignored),
  });
  if (branchToDrop !== null && entry.head !== null) {
    steps.push({ step: "delete branch", target: branchToDrop, detail: `at ${entry.head}` });
  }
  const discarding: Discarding = {
    changedPaths,
    stamps,
    nestedCommits: discards.some((r) => r.kind === "nested_commits"),
  };
  return { repo, worktree, target, data, discarding, steps, hints };
}

/**
 * Applies a plan under the fleet lock. The queue is asked again (its lander may
 * have taken the berth up while the plan awaited its confirmation), and the
 * teardown re-checks the berth.
 */
export async function applyDrop(ctx: Context, plan: DropPlan): Promise<VerbResult<DropData>> {
  const { repo, target, data } = plan;
  ctx.journal.begin({ branch: data.branch, path: data.path });
  const steps: StepOutcome[] = [];
  const hints = [...plan.hints];
  await withFleetLock(repo.location.commonDir, "worktree drop", async () => {
    await refuseQueueCheckout("worktree drop", repo, target.id);
    if (data.recovery_tip !== null) {
      try {
        data.recovery_ref = await writeRecoveryRef(
          repo.mainPath,
          data.id,
          data.recovery_tip,
          ctx.now(),
        );
      } catch (error) {
        throw new UserError(
          "precondition_failed",
          `Could not write a recovery ref for ${data.id}, so the forced drop stopped: ${(error as Error).message} (look at the recovery refs, then retry)`,
          { next: shellCommand(["git", "for-each-ref", "refs/berth/recovery"]), data },
        );
      }
      steps.push({ step: "write recovery ref", target: data.recovery_ref, outcome: "done" });
      await pruneRecoveryRefs(repo.mainPath);
    }
    const teardown = await applyTeardown(repo, ctx, target, {
      force: data.forced,
      requireClean: !data.forced,
      expectHead: data.head,
      discarding: plan.discarding,
    });
    steps.push(...teardown.steps);
    data.resources_destroyed = teardown.destroyed;
    data.worktree_removed = teardown.worktreeRemoved;
    if (!teardown.ok) {
      // The recovery ref was written first and stays: the refusal must not say nothing changed.
      const kept = data.recovery_ref
        ? `\nThe recovery ref ${data.recovery_ref} was written and stays.`
        : "";
      if (teardown.failure?.stage === "changed" && teardown.destroyed.length === 0) {
        throw new UserError(
          "precondition_failed",
          `${data.id}: ${teardown.failure.reason}.${kept} Dropping again plans again.`,
          {
            next: shellCommand(["berth", "worktree", "drop", data.id]),
            data,
            nothingChanged: data.recovery_ref === null,
          },
        );
      }
      const again = ["worktree", "drop", data.id, ...(data.forced ? ["--force"] : []), "--yes"];
      const failed = teardownError(again, target, teardown, data);
      if (data.recovery_ref === null) throw failed;
      throw new UserError(failed.code, `${failed.message}${kept}`, {
        next: failed.next,
        data,
        nothingChanged: false,
      });
    }
    if (data.delete_branch !== null && data.head !== null) {
      const branch = data.delete_branch;
      recordBranchFate(
        data,
        steps,
        branch,
        await deleteBranch(repo.mainPath, repo.location.commonDir, branch, data.head),
      );
    }
  });
  if (plan.worktree.isCurrent) {
    hints.push(youWereInside(data.path, repo.mainPath));
  }
  return { ok: true, verb: "worktree drop", data, plan: { steps: plan.steps }, steps, hints };
}

/** Records the branch's fate; a branch that moved or that git would not delete is kept, and said so. */
function recordBranchFate(
  data: DropData,
  steps: StepOutcome[],
  branch: string,
  fate: BranchFate,
): void {
  steps.push(deletionStep(branch, fate));
  switch (fate.fate) {
    case "deleted":
      data.branch_deleted = true;
      return;
    case "absent":
      return;
    case "raced":
      throw new UserError(
        "moved",
        `${data.id} was torn down, but branch ${branch} moved since the plan and was kept (look at its log, then git branch -d it).`,
        {
          next: shellCommand(["git", "log", branch, "--"]),
          data,
          nothingChanged: false,
        },
      );
    case "failed":
      throw new UserError(
        "partial",
        `${data.id} was torn down, but git could not delete branch ${branch}: ${fate.message} (delete it once what git reports is fixed)`,
        {
          next: shellCommand(["git", "branch", "-d", branch]),
          data,
          nothingChanged: false,
        },
      );
  }
}
