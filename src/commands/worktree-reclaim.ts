import type { Context } from "../context.js";
import { applyPrune, type PruneData } from "../core/lifecycle/prune-apply.js";
import { type ContainedRow, type PrunePlan, planPrune } from "../core/lifecycle/prune-plan.js";
import { locateWorktree } from "../core/repo/berth-target.js";
import { UserError } from "../errors.js";
import type { DiskUsage } from "../io/disk-usage.js";
import { asApplied, type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand, shortOid } from "../text.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { pruneConfirmText } from "../ui/prune-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { applyInterruptibly, applyUntil } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";
import { pruneOutcome } from "./worktree-prune.js";

/**
 * `berth worktree reclaim <berth>` (spec section 12) and the desk's reclaim,
 * one and the same: one contained berth, planned as prune plans it (the same
 * containment predicate), confirmed with prune --contained's confirmation
 * narrowed to it, and applied through the same `applyPrune` with the contained
 * section only, so it re-validates right before acting and never deletes a ref.
 */

export interface ReclaimPlan {
  plan: PrunePlan;
  candidate: ContainedRow;
  ignored: DiskUsage;
}

const VERB = "worktree reclaim";

export async function planReclaim(ctx: Context, path: string, id: string): Promise<ReclaimPlan> {
  const plan = await planPrune(ctx);
  const candidate = plan.sections.contained.find((r) => r.path === path);
  if (candidate === undefined) {
    // The predicate's own clause where it judged this checkout (landed berths are prune's section).
    const why = plan.notContained.get(path) ?? "it is not a contained berth";
    throw new UserError(
      "precondition_failed",
      `${id} is not contained: ${why}; nothing changed. berth worktree prune --dry-run lists what is contained now.`,
      { next: shellCommand(["berth", "worktree", "prune", "--dry-run"]) },
    );
  }
  const steps = [
    {
      step: "reclaim contained berth",
      target: candidate.path,
      detail: `${candidate.branch} at ${shortOid(candidate.tip)} is inside ${candidate.container} at ${shortOid(candidate.container_tip)} (+${candidate.container_ahead}); the branch ref is kept`,
    },
  ];
  return {
    plan: {
      ...plan,
      sections: {
        stale: [],
        landed: [],
        orphaned: [],
        contained: [candidate],
        not_made_by_berth: [],
      },
      steps,
    },
    candidate,
    ignored: candidate.ignored,
  };
}

export function reclaimConfirmation(reclaim: ReclaimPlan, c: Colors): Confirmation {
  const { candidate, plan } = reclaim;
  return {
    question: `Reclaim ${candidate.id} (branch ${candidate.branch} is kept)?`,
    yesCommand: shellCommand(["berth", "worktree", "reclaim", candidate.id, "--yes"]),
    planText: pruneConfirmText(plan.sections, true, reclaim.ignored, c),
    plan: plan.steps,
  };
}

function reclaimData(reclaim: ReclaimPlan): PruneData {
  return { sections: reclaim.plan.sections, contained_included: true, applied: [], skipped: [] };
}

/** Under process signals from the CLI, or under the desk's `stop`. */
export async function applyReclaim(
  ctx: Context,
  reclaim: ReclaimPlan,
  stop?: AbortSignal,
): Promise<CommandOutcome> {
  const apply = (ctx: Context) => applyPrune(ctx, reclaim.plan, { contained: true });
  const result: PlanApplyResult<PruneData> = asApplied(
    await (stop === undefined ? applyInterruptibly(ctx, apply) : applyUntil(stop, ctx, apply)),
  );
  return pruneOutcome({ ...result, verb: VERB });
}

export async function worktreeReclaimCommand(
  ctx: Context,
  target: string,
  options: { yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const worktree = await locateWorktree(ctx, target, VERB);
  const reclaim = await planReclaim(ctx, worktree.entry.path, worktree.marker?.id ?? target);
  if (options.dryRun) {
    return pruneOutcome(plannedResult(VERB, reclaimData(reclaim), reclaim.plan.steps));
  }
  await confirmOrRefuse(ctx, {
    verb: VERB,
    yes: options.yes === true,
    ...reclaimConfirmation(reclaim, colorsFor(ctx.stderrIsTTY, ctx.env)),
    data: reclaimData(reclaim),
  });
  return applyReclaim(ctx, reclaim);
}
