import type { Context } from "../context.js";

/** One line of progress on stderr, and only on a terminal (data stays on stdout). */
export function reportProgress(ctx: Context, text: string): void {
  if (ctx.stderrIsTTY) ctx.stderr.write(`${text}\n`);
}
