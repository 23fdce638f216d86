import type { Context } from "../context.js";
import { applyDrop, type DropData, type DropPlan, planDrop } from "../core/lifecycle/drop.js";
import { asApplied, type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand } from "../text.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { dropPlanText, renderDropResult } from "../ui/worktree-view.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth worktree drop`'s confirmation, in the CLI and in the desk. */
export function dropConfirmation(plan: DropPlan, c: Colors): Confirmation {
  const { data } = plan;
  return {
    question: data.forced ? `Drop ${data.id} and discard its work?` : `Drop ${data.id}?`,
    yesCommand: shellCommand([
      "berth",
      "worktree",
      "drop",
      data.id,
      ...(data.forced ? ["--force"] : []),
      "--yes",
    ]),
    planText: dropPlanText(data, c),
    plan: plan.steps,
    data,
  };
}

export function dropOutcome(result: PlanApplyResult<DropData>): CommandOutcome {
  return { result, human: (c) => ({ stdout: renderDropResult(result, c) }) };
}

export async function worktreeDropCommand(
  ctx: Context,
  target: string,
  options: { force?: boolean; yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const plan = await planDrop(ctx, { target, force: options.force === true });
  if (options.dryRun) {
    return dropOutcome(
      plannedResult("worktree drop", plan.data, plan.steps, { hints: plan.hints }),
    );
  }
  await confirmOrRefuse(ctx, {
    verb: "worktree drop",
    yes: options.yes === true,
    ...dropConfirmation(plan, colorsFor(ctx.stderrIsTTY, ctx.env)),
  });
  return dropOutcome(asApplied(await applyInterruptibly(ctx, (ctx) => applyDrop(ctx, plan))));
}
