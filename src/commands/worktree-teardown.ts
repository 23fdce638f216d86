import type { Context } from "../context.js";
import {
  applyWorktreeTeardown,
  planWorktreeTeardown,
  type WorktreeTeardownData,
  type WorktreeTeardownPlan,
} from "../core/lifecycle/destroy-resources.js";
import { type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand } from "../text.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { renderWorktreeTeardown, teardownPlanText } from "../ui/worktree-view.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth worktree teardown`'s confirmation (asked only when resources are recorded). */
export function teardownConfirmation(plan: WorktreeTeardownPlan, c: Colors): Confirmation {
  return {
    question: `Destroy these resources of ${plan.data.id}?`,
    yesCommand: shellCommand(["berth", "worktree", "teardown", "--yes"]),
    planText: teardownPlanText(plan.data, c),
    plan: plan.steps,
    data: plan.data,
  };
}

function teardownOutcome(result: PlanApplyResult<WorktreeTeardownData>): CommandOutcome {
  return { result, human: (c) => ({ stdout: renderWorktreeTeardown(result, c) }) };
}

export async function worktreeTeardownCommand(
  ctx: Context,
  options: { yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const plan = await planWorktreeTeardown(ctx);
  if (options.dryRun) {
    return teardownOutcome(
      plannedResult("worktree teardown", plan.data, plan.steps, { hints: plan.hints }),
    );
  }
  if (plan.data.resources.length > 0) {
    await confirmOrRefuse(ctx, {
      verb: "worktree teardown",
      yes: options.yes === true,
      ...teardownConfirmation(plan, colorsFor(ctx.stderrIsTTY, ctx.env)),
    });
  }
  return teardownOutcome(await applyInterruptibly(ctx, (ctx) => applyWorktreeTeardown(ctx, plan)));
}
