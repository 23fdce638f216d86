import type { Context } from "../context.js";
import { applyPrune, hasWork, type PruneData } from "../core/lifecycle/prune-apply.js";
import { ignoredOfRemovals, type PrunePlan, planPrune } from "../core/lifecycle/prune-plan.js";
import type { DiskUsage } from "../io/disk-usage.js";
import { appliedResult, asApplied, type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand } from "../text.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { pruneConfirmText, renderPruneResult } from "../ui/prune-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth worktree prune`'s confirmation: what is kept and destroyed, with the ignored files that go. */
export function pruneConfirmation(
  plan: PrunePlan,
  contained: boolean,
  ignored: DiskUsage,
  data: PruneData,
  c: Colors,
): Confirmation {
  return {
    question: contained ? "Prune, and reclaim the contained berths?" : "Prune?",
    yesCommand: shellCommand([
      "berth",
      "worktree",
      "prune",
      ...(contained ? ["--contained"] : []),
      "--yes",
    ]),
    planText: pruneConfirmText(plan.sections, contained, ignored, c),
    plan: plan.steps,
    data,
  };
}

export function pruneOutcome(result: PlanApplyResult<PruneData>): CommandOutcome {
  return { result, human: (c) => ({ stdout: renderPruneResult(result, c) }) };
}

export async function worktreePruneCommand(
  ctx: Context,
  options: { contained?: boolean; yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const contained = options.contained === true;
  const plan = await planPrune(ctx);
  const planned: PruneData = {
    sections: plan.sections,
    contained_included: contained,
    applied: [],
    skipped: [],
  };
  if (options.dryRun || !hasWork(plan.sections, contained)) {
    // Nothing to apply changes nothing, but it is no dry run unless asked for: it says "Nothing to prune".
    const result = options.dryRun
      ? plannedResult("worktree prune", planned, plan.steps, { hints: plan.hints })
      : appliedResult("worktree prune", planned, plan.steps, [], { hints: plan.hints });
    if (!options.dryRun && plan.sections.contained.length > 0) {
      result.hints.push(
        "contained berths are offered, not reclaimed: berth worktree prune --contained",
      );
    }
    return pruneOutcome(result);
  }
  const ignored = ignoredOfRemovals(plan.sections, contained);
  await confirmOrRefuse(ctx, {
    verb: "worktree prune",
    yes: options.yes === true,
    ...pruneConfirmation(plan, contained, ignored, planned, colorsFor(ctx.stderrIsTTY, ctx.env)),
  });
  return pruneOutcome(
    asApplied(await applyInterruptibly(ctx, (ctx) => applyPrune(ctx, plan, { contained }))),
  );
}
