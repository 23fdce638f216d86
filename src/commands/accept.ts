import type { Context } from "../context.js";
import { applyAccept, planAccept } from "../core/landing/accept.js";
import type { VerbResult } from "../result.js";
import { acceptPlanText, renderAccept } from "../ui/accept-view.js";
import { confirmOrRefuse } from "../ui/confirm.js";
import { gateProgress } from "../ui/gate-view.js";
import { colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

export async function acceptCommand(
  ctx: Context,
  target: string | undefined,
  options: { yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const plan = await planAccept(ctx, { target });
  if (options.dryRun) {
    const result: VerbResult = {
      ok: true,
      verb: "accept",
      data: plan.data,
      plan: { steps: plan.steps },
      hints: plan.hints,
    };
    return { result, human: (c) => renderAccept({ ...result, data: plan.data }, c) };
  }
  const name = plan.data.path === null ? plan.data.branch : plan.data.id;
  await confirmOrRefuse(ctx, {
    verb: "accept",
    yes: options.yes === true,
    planText: acceptPlanText(plan.data, colorsFor(ctx.stderrIsTTY, ctx.env)),
    plan: plan.steps,
    question:
      plan.mode === "land"
        ? `Land ${plan.data.id} and tear it down?`
        : `Finish accepting ${plan.data.id}?`,
    yesCommand: `berth accept ${name} --yes`,
    data: plan.data,
  });
  // A gate's checks run in their own process groups: forward an interrupt to them.
  const result = await withInterrupt((signal) =>
    applyAccept(ctx, plan, {
      signal,
      onEvent: ctx.stderrIsTTY ? gateProgress(ctx.stderr, colorsFor(true, ctx.env)) : undefined,
    }),
  );
  return { result, human: (c) => renderAccept(result, c) };
}
