import type { Context } from "../context.js";
import { runUpdate } from "../core/landing/update.js";
import { renderUpdate } from "../ui/update-view.js";
import type { CommandOutcome } from "./outcome.js";

export async function updateCommand(
  ctx: Context,
  options: { from?: string; dryRun?: boolean },
): Promise<CommandOutcome> {
  const result = await runUpdate(ctx, { from: options.from, dryRun: options.dryRun === true });
  return { result, human: (c) => renderUpdate(result, c) };
}
