import type { Context } from "../context.js";
import { runUpdate, type UpdateData } from "../core/landing/update.js";
import type { PlanApplyResult } from "../result.js";
import { shellCommand } from "../text.js";
import type { Confirmation } from "../ui/confirm.js";
import type { Colors } from "../ui/style.js";
import { renderUpdate, updatePlanText } from "../ui/update-view.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** The desk's confirmation of an update (`berth update` itself asks nothing), from its dry run. */
export function updateConfirmation(dry: PlanApplyResult<UpdateData>, c: Colors): Confirmation {
  return {
    question: `Update ${dry.data?.branch ?? "it"}?`,
    yesCommand: shellCommand(["berth", "update"]),
    planText: updatePlanText(dry, c),
    plan: dry.plan.steps,
  };
}

export function updateOutcome(result: PlanApplyResult<UpdateData>): CommandOutcome {
  return { result, human: (c) => renderUpdate(result, c) };
}

export async function updateCommand(
  ctx: Context,
  options: { from?: string; dryRun?: boolean },
): Promise<CommandOutcome> {
  const update = (ctx: Context) =>
    runUpdate(ctx, { from: options.from, dryRun: options.dryRun === true });
  // A dry run starts nothing; a real one runs the merge and project commands.
  return updateOutcome(await (options.dryRun ? update(ctx) : applyInterruptibly(ctx, update)));
}
