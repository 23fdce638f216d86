import type { Context } from "../context.js";
import { runGate } from "../core/landing/gate.js";
import { gateProgress, renderGate } from "../ui/gate-view.js";
import { colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

export async function gateCommand(
  ctx: Context,
  options: { dryRun?: boolean },
): Promise<CommandOutcome> {
  // The checks run in their own process groups, so a Ctrl-C at the terminal
  // would not reach them: forward it, and let the gate stop and report.
  const result = await withInterrupt((signal) =>
    runGate(ctx, {
      dryRun: options.dryRun === true,
      signal,
      onEvent: ctx.stderrIsTTY ? gateProgress(ctx.stderr, colorsFor(true, ctx.env)) : undefined,
    }),
  );
  return { result, human: (c) => renderGate(result, c) };
}
