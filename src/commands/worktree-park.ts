import type { Context } from "../context.js";
import { applyPark, type ParkData, type ParkPlan, planPark } from "../core/lifecycle/park.js";
import { type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand } from "../text.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { parkPlanText, renderParkResult } from "../ui/park-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth worktree park`'s confirmation, in the CLI and in the desk. */
export function parkConfirmation(plan: ParkPlan, c: Colors): Confirmation {
  const { data } = plan;
  return {
    question: `Park ${data.id} (branch ${data.branch} is kept)?`,
    yesCommand: shellCommand(["berth", "worktree", "park", data.id, "--yes"]),
    planText: parkPlanText(data, c),
    plan: plan.steps,
    data,
  };
}

export function parkOutcome(result: PlanApplyResult<ParkData>): CommandOutcome {
  return { result, human: (c) => ({ stdout: renderParkResult(result, c) }) };
}

export async function worktreeParkCommand(
  ctx: Context,
  target: string,
  options: { yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const plan = await planPark(ctx, { target });
  if (options.dryRun) {
    return parkOutcome(
      plannedResult("worktree park", plan.data, plan.steps, { hints: plan.hints }),
    );
  }
  await confirmOrRefuse(ctx, {
    verb: "worktree park",
    yes: options.yes === true,
    ...parkConfirmation(plan, colorsFor(ctx.stderrIsTTY, ctx.env)),
  });
  return parkOutcome(await applyInterruptibly(ctx, (ctx) => applyPark(ctx, plan)));
}
