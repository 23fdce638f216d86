import type { Context } from "../context.js";
import { initConfig } from "../core/repo/init-config.js";
import type { CommandOutcome } from "./outcome.js";

export async function initCommand(
  ctx: Context,
  options: { dryRun?: boolean; untrackedCache?: boolean; agents?: boolean },
): Promise<CommandOutcome> {
  const result = await initConfig(ctx, options);
  const data = result.data;
  const verb = result.dryRun ? "would write" : "wrote";
  const lines: string[] = [];
  if (data !== null) {
    // An existing berth.toml is kept (with --agents or --untracked-cache): only a new one is news.
    if (result.plan.steps.some((s) => s.step === "write berth.toml")) {
      lines.push(`${verb} ${data.path} (trunk ${data.trunk})`);
    } else if (data.agents === undefined) {
      lines.push(`${result.dryRun ? "would keep" : "kept"} ${data.path} as it is`);
    }
    for (const a of data.agents ?? []) {
      lines.push(
        a.outcome === "already present"
          ? `kept ${a.file} (its berth section is already there)`
          : `${result.dryRun ? "would " : ""}${a.outcome === "created" ? "create" : "append to"} ${a.file}: the berth section for agents`,
      );
    }
  }
  return {
    result,
    human: () => ({ stdout: lines.map((l) => `${l}\n`).join("") + untrackedCacheLine(result) }),
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
