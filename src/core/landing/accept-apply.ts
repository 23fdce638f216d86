import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { resolveCommit } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { listWorktrees } from "../../git/worktrees.js";
import { withFleetLock } from "../../io/lock.js";
import { readReceipt } from "../../io/receipt-file.js";
import { deleteLandingRecord, writeLandingRecord } from "../../io/unfinished-landing.js";
import type { StepOutcome, VerbResult } from "../../result.js";
import { commandSequence, shellCommand, shortOid } from "../../text.js";
import { deleteBranch, deletionStep } from "../lifecycle/branch-deletion.js";
import { youWereInside } from "../lifecycle/removal-facts.js";
import { applyTeardown, isTornDown } from "../lifecycle/teardown.js";
import type { AcceptApplyOptions, AcceptData, AcceptPlan } from "./accept.js";
import { refusal, updateThenAccept } from "./accept-subject.js";
import { applyGate, planGate } from "./gate.js";
import { gateData, gateError } from "./gate-report.js";
import { recordLandingFor, recordUnfinishedLanding } from "./landings.js";
import {
  finishFollow,
  followAndRecord,
  refuseUnlessFollows,
  trunkHolders,
} from "./main-checkout-follow.js";
import { moveTrunk, trunkMoveRefusal } from "./trunk-move.js";

/**
 * Applying an accept plan. The part under the fleet lock comes first:
 *   1. `landUnderLock`: re-check everything the plan assumed, write the
 *      unfinished-landing record, compare-and-swap the trunk, record the
 *      landing in the landing log and as a note (./landings.ts), bring the
 *      main checkout along (land mode; finish mode records the landing if
 *      the run that moved the trunk could not, and finishes the follow);
 *   2. `tearDownAndDelete`: the shared teardown, then the branch by
 *      compare-and-swap on the landed tip, branching on its fate;
 * then `applyAccept`, which validates before taking the lock (an honored
 * receipt, or the gate run now) and turns what is left into `partial`.
 */

/**
 * Re-checks what the plan assumed, writes the landing record, moves the
 * trunk by compare-and-swap and brings the main checkout along. Throws while
 * nothing has landed; returns why the main checkout did not follow (or null).
 */
async function landUnderLock(
  ctx: Context,
  plan: AcceptPlan,
  steps: StepOutcome[],
  hints: string[],
  options: AcceptApplyOptions,
): Promise<string | null> {
  const { repo, data } = plan;
  const main = repo.mainPath;
  const commit = data.validated.commit;
  const old = data.trunk.old;
  const trunkRef = `refs/heads/${data.trunk.name}`;
  const nothing = "nothing was landed or torn down";
  // A gate run by this accept has written its receipt; otherwise nothing changed at all.
  const nothingChanged = data.validated.by === "receipt";
  const changed = (what: string) =>
    new UserError("moved", `${data.id} ${what} since the plan; ${nothing}.`, {
      next: shellCommand(["berth", "accept", data.id]),
      data,
      nothingChanged,
    });

  const [entries, trunkTip, branchTip] = await Promise.all([
    listWorktrees(main),
    resolveCommit(main, trunkRef),
    resolveCommit(main, `refs/heads/${data.branch}`),
  ]);
  const entry = entries.find((e) => e.path === data.path);
  if (entry === undefined) throw changed("is no longer registered with git");
  if (entry.locked) {
    throw refusal(`${data.id} was locked since the plan; ${nothing}.`, {
      next: commandSequence(
        shellCommand(["git", "worktree", "unlock", entry.path]),
        shellCommand(["berth", "accept", data.id]),
      ),
      nothingChanged,
    });
  }
  if (entry.head !== commit || entry.branch !== data.branch || branchTip !== commit) {
    throw changed(`moved (it is at ${entry.head ? shortOid(entry.head) : "nothing"})`);
  }
  const status = await readWorktreeStatus(entry.path).catch(() => null);
  if (status === null || status.changedFiles > 0) {
    throw refusal(
      `${data.id} has uncommitted changes since the plan; ${nothing}. Commit or stash them.`,
      {
        next: commandSequence(
          shellCommand(["git", "-C", entry.path, "stash", "-u"]),
          shellCommand(["berth", "accept", data.id]),
        ),
        data,
        nothingChanged,
      },
    );
  }
  const receipt = plan.adminDir === null ? null : await readReceipt(plan.adminDir);
  if (receipt === null || receipt.tree !== plan.provenTree) {
    throw refusal(
      `${data.id}'s gate receipt changed since the plan; ${nothing}. Accept again validates again.`,
      {
        next: shellCommand(["berth", "accept", data.id]),
        data,
        nothingChanged,
      },
    );
  }
  const trunkMoved = (now: string | null) =>
    new UserError(
      "moved",
      `${data.trunk.name} moved since the plan (from ${shortOid(old)} to ${now ? shortOid(now) : "nothing"}); ${nothing}, and the trunk was left where it is.`,
      { next: updateThenAccept(entry.path, data.id), data, nothingChanged },
    );
  if (trunkTip !== old) throw trunkMoved(trunkTip);
  const holders = trunkHolders(entries, data.trunk.name, repo);
  const [linked] = holders.linked;
  if (linked !== undefined) {
    throw refusal(`${data.trunk.name} is checked out in ${linked} since the plan; ${nothing}.`, {
      next: commandSequence(
        shellCommand(["git", "-C", linked, "switch", "--detach"]),
        shellCommand(["berth", "accept", data.id]),
      ),
      nothingChanged,
    });
  }
  data.main_checkout.follows_trunk = holders.mainFollows;
  data.landing.main_checkout_updated = holders.mainFollows ? false : null;
  if (holders.mainFollows) {
    const follow = { from: old, to: commit };
    await refuseUnlessFollows(main, data.trunk.name, follow, data.id, trunkMoved, nothingChanged);
  }

  // Durable before the trunk moves: a run that stops after this knows what landed.
  await writeLandingRecord(repo.location.commonDir, {
    version: 1,
    id: data.id,
    branch: data.branch,
    path: entry.path,
    trunk: data.trunk.name,
    old,
    new: commit,
    validated_by: data.validated.by === "gate" ? "gate" : "receipt",
    main_checkout: holders.mainFollows ? main : null,
    created_at: ctx.now().toISOString(),
  });
  const remote = repo.config.remote.name;
  const move = await moveTrunk(
    main,
    remote,
    data.trunk.name,
    commit,
    old,
    `berth accept ${data.id}`,
  );
  if (move.fate !== "moved") {
    await deleteLandingRecord(repo.location.commonDir, data.id);
    steps.push({
      step: "move trunk",
      target: data.trunk.name,
      outcome: "failed",
      reason: move.message,
    });
    const landing = { id: data.id, path: entry.path, trunk: data.trunk.name, commit, nothing };
    throw trunkMoveRefusal(move, landing, data);
  }
  data.landing.trunk_landed = true;
  steps.push({
    step: "move trunk",
    target: data.trunk.name,
    outcome: "done",
    reason: move.reason,
  });
  const landedAt = ctx.now().toISOString();
  try {
    return holders.mainFollows ? await followAndRecord(main, old, commit, data, steps) : null;
  } finally {
    // History, once per landing, after the main checkout's files caught up: it can never fail the landing.
    if (options.integration !== true)
      hints.push(
        ...(await recordLandingFor(repo, main, {
          version: 1,
          id: data.id,
          branch: data.branch,
          tip: commit,
          trunk: data.trunk.name,
          old_trunk: old,
          new_trunk: commit,
          proved_by: data.validated.by === "gate" ? "gate" : "receipt",
          stages: data.stages.map((s) => ({ branch: s.branch, tip: s.tip })),
          at: landedAt,
        })),
      );
  }
}

/** The shared teardown, then the branch by compare-and-swap on the landed tip. */
async function tearDownAndDelete(
  ctx: Context,
  plan: AcceptPlan,
  steps: StepOutcome[],
): Promise<string | null> {
  const { repo, data } = plan;
  if (plan.teardown !== null) {
    const teardown = await applyTeardown(repo, ctx, plan.teardown, {
      force: false,
      requireClean: true,
      expectHead: plan.branchTip,
    });
    const failure = teardown.failure;
    if (failure?.stage === "changed" && (await isTornDown(repo, plan.teardown))) {
      // Another accept of this berth, run at the same time, finished it first.
      steps.push({
        step: "teardown",
        target: plan.teardown.path,
        outcome: "skipped",
        reason: "already torn down by another run",
      });
      data.landing.resources_destroyed = true;
      data.landing.worktree_removed = true;
      return deleteLandedBranch(plan, steps);
    }
    steps.push(...teardown.steps);
    data.destroyed = teardown.destroyed;
    data.landing.resources_destroyed =
      teardown.ok || failure?.stage === "remove" || failure?.stage === "verify";
    data.landing.worktree_removed = teardown.worktreeRemoved;
    if (!teardown.ok) {
      const how =
        failure?.stage === "destroy"
          ? `${failure.reason}\nThe checkout ${plan.teardown.path} was kept and still owns its remaining resources; fix the destroy command in berth.toml.`
          : `the teardown of ${data.id} stopped: ${failure?.reason ?? "unknown failure"}`;
      return how;
    }
  }
  return deleteLandedBranch(plan, steps);
}

/** The landed branch, by compare-and-swap on the landed tip. */
async function deleteLandedBranch(plan: AcceptPlan, steps: StepOutcome[]): Promise<string | null> {
  const { repo, data } = plan;
  const tip = plan.branchTip;
  const branch = data.delete_branch;
  if (branch === null || tip === null || data.landing.branch_deleted) return null;
  const fate = await deleteBranch(repo.mainPath, repo.location.commonDir, branch, tip);
  steps.push(deletionStep(branch, fate));
  switch (fate.fate) {
    case "deleted":
    case "absent": // someone deleted it already: nothing is left to do for it
      data.landing.branch_deleted = true;
      return null;
    case "raced":
      return `branch ${branch} was not deleted: it moved from ${shortOid(tip)} to ${shortOid(fate.now)} since the landing`;
    case "failed":
      return `branch ${branch} was not deleted: ${fate.message}`;
  }
}

/**
 * Applies a plan. Validation (the gate, which may be long) runs before the
 * fleet lock is taken; everything from the re-check to the branch deletion
 * runs under it. Refusals before the trunk moves throw (nothing landed);
 * afterwards every failure is a `partial` result naming what is left.
 */
export async function applyAccept(
  ctx: Context,
  plan: AcceptPlan,
  options: AcceptApplyOptions = {},
): Promise<VerbResult<AcceptData>> {
  const { repo, data } = plan;
  if (plan.mode === "integrate") throw new Error("an integration plan is landed by the queue");
  ctx.journal.begin({ branch: data.branch, path: data.path });
  const steps: StepOutcome[] = [];
  const hints = [...plan.hints];
  if (plan.mode === "land") {
    const refused = await validate(ctx, plan, steps, options);
    if (refused !== null) return { ...refused, hints };
  }
  const problems = await withFleetLock(repo.location.commonDir, "accept", async () => {
    const found: string[] = [];
    try {
      if (plan.mode === "land") {
        const followFailure = await landUnderLock(ctx, plan, steps, hints, options);
        if (followFailure !== null) found.push(followFailure);
      } else {
        // The run that moved the trunk may have stopped before it recorded the landing.
        if (plan.record !== null)
          hints.push(...(await recordUnfinishedLanding(plan.repo, plan.record)));
        if (plan.followPending) {
          const followFailure = await finishFollow(plan, steps);
          if (followFailure !== null) found.push(followFailure);
        }
      }
      const teardownFailure = await tearDownAndDelete(ctx, plan, steps);
      if (teardownFailure !== null) found.push(teardownFailure);
      if (found.length === 0) await deleteLandingRecord(repo.location.commonDir, data.id);
    } catch (error) {
      // Before the trunk moved, a refusal is a refusal; after it, whatever
      // went wrong leaves work for the next `berth accept`, never a bare crash.
      if (!data.landing.trunk_landed) throw error;
      found.push(`unexpected failure: ${(error as Error).message}`);
    }
    return found;
  });

  if (data.stages.length > 0) {
    const withCheckout = data.stages.filter((s) => s.path !== null).length;
    hints.push(
      `earlier stages landed with it: ${data.stages.map((s) => s.branch).join(", ")}` +
        (withCheckout > 0 ? "; berth worktree prune clears their checkouts and branches" : ""),
    );
  }
  if (plan.isCurrent && data.landing.worktree_removed) {
    hints.push(youWereInside(data.path, repo.mainPath));
  }
  const result: VerbResult<AcceptData> = {
    ok: problems.length === 0,
    verb: "accept",
    data,
    plan: { steps: plan.steps },
    steps,
    hints,
  };
  if (problems.length > 0) {
    result.error = {
      code: "partial",
      message:
        `${data.trunk.name} is at ${shortOid(data.validated.commit)}: ${data.branch} has landed, ` +
        `but not everything after it finished.\n${problems.join("\n")}\n` +
        `Still to do: ${remainingWork(data).join(", ")}.`,
      next: shellCommand(["berth", "accept", data.branch]),
    };
  }
  return result;
}

/** The proof, before the lock: an honored receipt was planned, or the gate runs now. */
async function validate(
  ctx: Context,
  plan: AcceptPlan,
  steps: StepOutcome[],
  options: AcceptApplyOptions,
): Promise<VerbResult<AcceptData> | null> {
  const { repo, data } = plan;
  const commit = data.validated.commit;
  if (data.validated.by === "receipt") {
    steps.push({ step: "validate", target: commit, outcome: "done", reason: "honored receipt" });
    return null;
  }
  if (data.path === null || plan.adminDir === null) throw new Error("land plan without a checkout");
  const gatePlan = await planGate(repo, { path: data.path, adminDir: plan.adminDir });
  if (gatePlan.commit !== commit || gatePlan.branch !== data.branch) {
    throw new UserError(
      "moved",
      `${data.id} moved since the plan (${data.branch} at ${shortOid(commit)}, now ${gatePlan.branch} at ${shortOid(gatePlan.commit)}); nothing was gated, landed or torn down.`,
      { next: shellCommand(["berth", "accept", data.id]), data },
    );
  }
  const applied = await applyGate(ctx, repo, gatePlan, options);
  data.gate = gateData(gatePlan, applied.runs, applied);
  const error = gateError(gatePlan, applied, data.gate.failures);
  steps.push({
    step: "validate",
    target: commit,
    outcome: error === null ? "done" : "failed",
    reason: error === null ? "the gate is green" : error.message,
  });
  if (error === null) {
    plan.provenTree = gatePlan.tree;
    return null;
  }
  return {
    ok: false,
    verb: "accept",
    data,
    plan: { steps: plan.steps },
    steps,
    hints: [],
    ...(applied.interrupted ? { interrupted: true } : {}),
    error: {
      code: error.code,
      message: `${error.message} Nothing landed: ${data.trunk.name}, the berth and its branch are unchanged.`,
      next: error.next,
    },
  };
}

function remainingWork(data: AcceptData): string[] {
  const left: string[] = [];
  if (data.landing.main_checkout_updated === false) left.push("update the main checkout's files");
  if (!data.landing.resources_destroyed) left.push("destroy resources");
  if (!data.landing.worktree_removed) left.push("remove the checkout");
  if (data.delete_branch !== null && !data.landing.branch_deleted) {
    left.push(`delete branch ${data.delete_branch}`);
  }
  return left;
}
