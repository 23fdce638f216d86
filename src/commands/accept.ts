import type { Context } from "../context.js";
import {
  type AcceptData,
  type AcceptPlan,
  applyAccept,
  planAccept,
} from "../core/landing/accept.js";
import { asApplied, type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand } from "../text.js";
import { acceptPlanText, renderAccept } from "../ui/accept-view.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { gateProgress } from "../ui/gate-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth accept`'s confirmation, in the CLI and in the desk. */
export function acceptConfirmation(plan: AcceptPlan, c: Colors): Confirmation {
  const { data } = plan;
  return {
    question:
      plan.mode === "land" ? `Land ${data.id} and tear it down?` : `Finish accepting ${data.id}?`,
    yesCommand: shellCommand([
      "berth",
      "accept",
      data.path === null ? data.branch : data.id,
      "--yes",
    ]),
    planText: acceptPlanText(data, c),
    plan: plan.steps,
    data,
  };
}

export function acceptOutcome(result: PlanApplyResult<AcceptData>): CommandOutcome {
  return { result, human: (c) => renderAccept(result, c) };
}

export async function acceptCommand(
  ctx: Context,
  target: string | undefined,
  options: { yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const plan = await planAccept(ctx, { target });
  if (options.dryRun) {
    return acceptOutcome(plannedResult("accept", plan.data, plan.steps, { hints: plan.hints }));
  }
  await confirmOrRefuse(ctx, {
    verb: "accept",
    yes: options.yes === true,
    ...acceptConfirmation(plan, colorsFor(ctx.stderrIsTTY, ctx.env)),
  });
  // A gate's checks run in their own process groups: forward an interrupt to them.
  const result = await withInterrupt((signal) =>
    applyAccept(ctx, plan, {
      signal,
      onEvent: ctx.stderrIsTTY ? gateProgress(ctx.stderr, colorsFor(true, ctx.env)) : undefined,
    }),
  );
  return acceptOutcome(asApplied(result));
}
