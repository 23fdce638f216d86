import type { Context } from "../context.js";
import { setupWorktree } from "../core/lifecycle/converge-setup.js";
import { renderWorktreeSetup } from "../ui/worktree-view.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

export async function worktreeSetupCommand(
  ctx: Context,
  options: { dryRun?: boolean },
): Promise<CommandOutcome> {
  const result = await applyInterruptibly(ctx, (ctx) =>
    setupWorktree(ctx, { dryRun: options.dryRun === true }),
  );
  return { result, human: (c) => ({ stdout: renderWorktreeSetup(result, c) }) };
}
