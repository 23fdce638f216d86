import type { Context } from "../context.js";
import { readStatus } from "../core/fleet/status.js";
import { renderStatus } from "../ui/status-view.js";
import type { CommandOutcome } from "./outcome.js";

export async function statusCommand(
  ctx: Context,
  options: { local?: boolean; all?: boolean; remote?: boolean },
): Promise<CommandOutcome> {
  const result = await readStatus(ctx, options);
  return {
    result,
    human: (c) => ({ stdout: result.data ? renderStatus(result.data, c, ctx.now()) : "" }),
  };
}
