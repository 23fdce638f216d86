import type { Context } from "../context.js";
import { applyDrop, planDrop } from "../core/lifecycle/drop.js";
import type { VerbResult } from "../result.js";
import { confirmOrRefuse } from "../ui/confirm.js";
import { colorsFor } from "../ui/style.js";
import { dropPlanText, renderDropResult } from "../ui/worktree-view.js";
import type { CommandOutcome } from "./outcome.js";

export async function worktreeDropCommand(
  ctx: Context,
  target: string,
  options: { force?: boolean; yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const force = options.force === true;
  const plan = await planDrop(ctx, { target, force });
  if (options.dryRun) {
    const result: VerbResult = {
      ok: true,
      verb: "worktree drop",
      data: plan.data,
      plan: { steps: plan.steps },
      hints: plan.hints,
    };
    return {
      result,
      human: (c) => ({ stdout: renderDropResult({ ...result, data: plan.data }, c) }),
    };
  }
  await confirmOrRefuse(ctx, {
    verb: "worktree drop",
    yes: options.yes === true,
    planText: dropPlanText(plan.data, colorsFor(ctx.stderrIsTTY, ctx.env)),
    plan: plan.steps,
    question: `Drop ${plan.data.id}?`,
    yesCommand: `berth worktree drop ${plan.data.id}${plan.data.forced ? " --force" : ""} --yes`,
    data: plan.data,
  });
  const result = await applyDrop(ctx, plan);
  return { result, human: (c) => ({ stdout: renderDropResult(result, c) }) };
}
