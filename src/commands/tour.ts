import type { Context } from "../context.js";
import { runTour } from "../core/tour.js";
import { renderTour } from "../ui/tour-view.js";
import type { CommandOutcome } from "./outcome.js";

export async function tourCommand(
  ctx: Context,
  options: { keep?: boolean },
): Promise<CommandOutcome> {
  const result = await runTour(ctx, options.keep === true);
  return { result, human: (c) => ({ stdout: result.data ? renderTour(result.data, c) : "" }) };
}
