import type { Context } from "../context.js";
import { loadBrief, normaliseTitle } from "../core/berth/briefs.js";
import { startBerth } from "../core/lifecycle/start.js";
import { renderStart } from "../ui/start-view.js";
import { applyInterruptibly } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

export async function startCommand(
  ctx: Context,
  name: string | undefined,
  options: { from?: string; title?: string; brief?: string; dryRun?: boolean },
): Promise<CommandOutcome> {
  const startOptions = {
    name,
    from: options.from,
    ...(options.title === undefined ? {} : { title: normaliseTitle(options.title, "start") }),
    ...(options.brief === undefined ? {} : { brief: await loadBrief(ctx, options.brief) }),
    dryRun: options.dryRun === true,
  };
  // Ctrl-C stops the project command running and undoes the run (start asks no question first).
  const result = await applyInterruptibly(ctx, (ctx) => startBerth(ctx, startOptions));
  return { result, human: (c) => renderStart(result, c) };
}
