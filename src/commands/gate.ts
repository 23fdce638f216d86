import type { Context } from "../context.js";
import { type GateData, runGate } from "../core/landing/gate.js";
import type { PlanApplyResult } from "../result.js";
import { shellCommand } from "../text.js";
import type { Confirmation } from "../ui/confirm.js";
import { gatePlanText, gateProgress, renderGate } from "../ui/gate-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** The desk's confirmation of a gate (`berth gate` itself asks nothing), from its dry run. */
export function gateConfirmation(dry: PlanApplyResult<GateData>, c: Colors): Confirmation {
  return {
    question: `Gate ${dry.data?.branch ?? "it"}?`,
    yesCommand: shellCommand(["berth", "gate"]),
    planText: gatePlanText(dry, c),
    plan: dry.plan.steps,
  };
}

export function gateOutcome(result: PlanApplyResult<GateData>): CommandOutcome {
  return { result, human: (c) => renderGate(result, c) };
}

export async function gateCommand(
  ctx: Context,
  options: { dryRun?: boolean },
): Promise<CommandOutcome> {
  // The checks run in their own process groups, so a Ctrl-C at the terminal
  // would not reach them: forward it, and let the gate stop and report.
  const result = await withInterrupt((signal) =>
    runGate(ctx, {
      dryRun: options.dryRun === true,
      signal,
      onEvent: ctx.stderrIsTTY ? gateProgress(ctx.stderr, colorsFor(true, ctx.env)) : undefined,
    }),
  );
  return gateOutcome(result);
}
