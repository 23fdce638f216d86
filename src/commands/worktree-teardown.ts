import type { Context } from "../context.js";
import {
  applyWorktreeTeardown,
  planWorktreeTeardown,
} from "../core/lifecycle/destroy-resources.js";
import type { VerbResult } from "../result.js";
import { confirmOrRefuse } from "../ui/confirm.js";
import { colorsFor } from "../ui/style.js";
import { renderWorktreeTeardown, teardownPlanText } from "../ui/worktree-view.js";
import type { CommandOutcome } from "./outcome.js";

export async function worktreeTeardownCommand(
  ctx: Context,
  options: { yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const plan = await planWorktreeTeardown(ctx);
  if (options.dryRun) {
    const result: VerbResult<typeof plan.data> = {
      ok: true,
      verb: "worktree teardown",
      data: plan.data,
      plan: { steps: plan.steps },
      hints: plan.hints,
    };
    return { result, human: (c) => ({ stdout: renderWorktreeTeardown(result, c) }) };
  }
  if (plan.data.resources.length > 0) {
    await confirmOrRefuse(ctx, {
      verb: "worktree teardown",
      yes: options.yes === true,
      planText: teardownPlanText(plan.data, colorsFor(ctx.stderrIsTTY, ctx.env)),
      plan: plan.steps,
      question: `Destroy these resources of ${plan.data.id}?`,
      yesCommand: "berth worktree teardown --yes",
      data: plan.data,
    });
  }
  const result = await applyWorktreeTeardown(ctx, plan);
  return { result, human: (c) => ({ stdout: renderWorktreeTeardown(result, c) }) };
}
