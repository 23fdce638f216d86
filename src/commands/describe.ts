import type { Context } from "../context.js";
import { type BriefChange, loadBrief, normaliseTitle } from "../core/berth/briefs.js";
import { describeBerth } from "../core/berth/describe.js";
import { renderDescribe } from "../ui/describe-view.js";
import type { CommandOutcome } from "./outcome.js";

export async function describeCommand(
  ctx: Context,
  target: string,
  options: { title?: string; brief?: string },
): Promise<CommandOutcome> {
  const change: BriefChange = {
    ...(options.title === undefined ? {} : { title: normaliseTitle(options.title) }),
    ...(options.brief === undefined ? {} : { brief: await loadBrief(ctx, options.brief) }),
  };
  const result = await describeBerth(ctx, { target, change });
  return { result, human: (c) => ({ stdout: renderDescribe(result, c) }) };
}
