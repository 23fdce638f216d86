import type { Context } from "../context.js";
import { readStatus } from "../core/fleet/status.js";
import { UserError } from "../errors.js";
import { shellCommand } from "../text.js";
import { liveStatusTable, liveTerminal } from "../ui/status-live.js";
import { renderStatus } from "../ui/status-view.js";
import { colorsFor } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";

export async function statusCommand(
  ctx: Context,
  options: { local?: boolean; all?: boolean; remote?: boolean; json?: boolean },
): Promise<CommandOutcome> {
  if (options.local && options.all) {
    throw new UserError(
      "usage",
      "--local (this checkout) and --all (the whole fleet) contradict each other: give one.",
      { next: shellCommand(["berth", "status", "--help"]) },
    );
  }
  // On a terminal (never with --json), the table's skeleton is drawn while the
  // survey runs and replaced by the final table.
  const size = options.json ? null : liveTerminal(ctx.stdout, ctx.stdoutIsTTY, ctx.env);
  const live =
    size === null ? null : liveStatusTable(ctx.stdout, size, colorsFor(ctx.stdoutIsTTY, ctx.env));
  let result: Awaited<ReturnType<typeof readStatus>>;
  try {
    result = await readStatus(ctx, options, live ?? undefined);
  } catch (error) {
    // The refusal goes to stderr: leave no half-drawn table above it.
    if (live !== null) ctx.stdout.write(live.finish());
    throw error;
  }
  const erase = live?.finish() ?? "";
  return {
    result,
    human: (c) => ({
      stdout: erase + (result.data ? renderStatus(result.data, c, ctx.now()) : ""),
    }),
  };
}
