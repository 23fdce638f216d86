import type { Context } from "../context.js";
import { initConfig } from "../core/repo/init-config.js";
import type { CommandOutcome } from "./outcome.js";

export async function initCommand(
  ctx: Context,
  options: { dryRun?: boolean; agents?: boolean },
): Promise<CommandOutcome> {
  const result = await initConfig(ctx, options);
  const data = result.data;
  const verb = result.dryRun ? "would write" : "wrote";
  const lines: string[] = [];
  if (data !== null && data.agents === undefined) {
    lines.push(`${verb} ${data.path} (trunk ${data.trunk})`);
  } else if (data?.agents !== undefined) {
    if (result.plan.steps.some((s) => s.step === "write berth.toml")) {
      lines.push(`${verb} ${data.path} (trunk ${data.trunk})`);
    }
    for (const a of data.agents) {
      lines.push(
        a.outcome === "already present"
          ? `kept ${a.file} (its berth section is already there)`
          : `${result.dryRun ? "would " : ""}${a.outcome === "created" ? "create" : "append to"} ${a.file}: the berth section for agents`,
      );
    }
  }
  return { result, human: () => ({ stdout: lines.map((l) => `${l}\n`).join("") }) };
}
