import type { Context } from "../context.js";
import { initConfig } from "../core/repo/init-config.js";
import type { CommandOutcome } from "./outcome.js";

export async function initCommand(
  ctx: Context,
  options: { dryRun?: boolean; untrackedCache?: boolean },
): Promise<CommandOutcome> {
  const result = await initConfig(ctx, options);
  return {
    result,
    human: () => ({
      stdout: result.data
        ? `${result.dryRun ? "would write" : "wrote"} ${result.data.path} (trunk ${result.data.trunk})\n` +
          untrackedCacheLine(result)
        : "",
    }),
  };
}

/** What `--untracked-cache` did (or would do); "" when it was not asked. */
function untrackedCacheLine(result: Awaited<ReturnType<typeof initConfig>>): string {
  if (!result.plan?.steps.some((s) => s.step === "set git config")) return "";
  if (result.dryRun) return "would test the filesystem, then set core.untrackedCache = true\n";
  const set = result.steps?.find((s) => s.step === "set git config");
  if (set?.outcome === "done") return "set core.untrackedCache = true\n";
  const failed = result.steps?.find((s) => s.outcome === "failed");
  return `left core.untrackedCache unset: ${failed?.reason ?? "the filesystem test failed"}\n`;
}
