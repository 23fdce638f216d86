import type { Context } from "../context.js";
import { initConfig } from "../core/repo/init-config.js";
import type { CommandOutcome } from "./outcome.js";

export async function initCommand(
  ctx: Context,
  options: { dryRun?: boolean },
): Promise<CommandOutcome> {
  const result = await initConfig(ctx, options);
  return {
    result,
    human: () => ({
      stdout: result.data
        ? `${result.dryRun ? "would write" : "wrote"} ${result.data.path} (trunk ${result.data.trunk})\n`
        : "",
    }),
  };
}
