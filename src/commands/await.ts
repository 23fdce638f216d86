import type { Context } from "../context.js";
import { runAwait } from "../core/await/await.js";
import type { AwaitOptions } from "../core/await/request.js";
import { renderAwait, waitingLine } from "../ui/await-view.js";
import { colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

export async function awaitCommand(ctx: Context, options: AwaitOptions): Promise<CommandOutcome> {
  // Ctrl-C (or SIGTERM) ends the wait with an answer, not a dead process.
  const result = await withInterrupt((signal) =>
    runAwait(ctx, options, {
      signal,
      onWaiting: ctx.stderrIsTTY
        ? (data) => ctx.stderr.write(waitingLine(data, colorsFor(true, ctx.env)))
        : undefined,
      onEvaluationError: ctx.debug
        ? (error) => ctx.stderr.write(`berth await: evaluation failed: ${String(error)}\n`)
        : undefined,
    }),
  );
  return { result, human: (c) => renderAwait(result, c) };
}
