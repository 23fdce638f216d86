import { heedWriteErrors, processContext } from "./context.js";
import type { CommonOptions, VerbRunner } from "./program.js";
import type { VerbResult } from "./result.js";
import { renderJson } from "./ui/envelope.js";
import { colorsFor } from "./ui/style.js";

/**
 * The one place that prints a verb's outcome and exits. The parser (cli-run.ts)
 * calls it for every verb; a plain `berth status` reaches it without the
 * parser at all (cli-status.ts). Verbs run through commands/run-verb.ts, as
 * the desk's actions do.
 */

/** Runs the verb (commands/run-verb.ts), prints its outcome, and exits with its code. */
export async function execute(
  verb: string,
  options: CommonOptions & Record<string, unknown>,
  run: VerbRunner,
  /** The berth argument as typed (the logbook's target); null: the verb is about no berth. */
  target?: string | null,
): Promise<never> {
  const { runVerb, humanOutput } = await import("./commands/run-verb.js");
  const ctx = processContext(options.debug === true);
  const outcome = await runVerb(verb, ctx, { dryRun: options.dryRun === true, target }, run);
  const printed = options.json
    ? { stdout: outcome.json ? outcome.json() : renderJson(outcome.result), stderr: "" }
    : humanOutput(outcome, {
        stdout: colorsFor(ctx.stdoutIsTTY, ctx.env),
        stderr: colorsFor(ctx.stderrIsTTY, ctx.env),
      });
  const errors = await Promise.all([
    writeFully(process.stdout, printed.stdout),
    writeFully(process.stderr, printed.stderr),
  ]);
  const code = exitCodeFor(outcome.result);
  // A reader that went away chose to stop reading; any other lost output fails the run.
  const lost = errors.find((error) => error !== null && error.code !== "EPIPE");
  if (!lost) process.exit(code);
  await writeFully(process.stderr, `berth: the output was not written: ${lost.message}\n`);
  process.exit(code === 0 ? 1 : code);
}

/**
 * Writes and waits until the stream has handed the text to the OS. A pipe's
 * write is asynchronous once its buffer (64 KiB) is full, and process.exit
 * would otherwise cut a large `--json` document short for a slow reader.
 */
export function writeFully(
  stream: NodeJS.WriteStream,
  text: string,
): Promise<NodeJS.ErrnoException | null> {
  if (text === "") return Promise.resolve(null);
  heedWriteErrors(stream);
  // Settles with the write's error, if any, rather than failing: the caller decides.
  return new Promise((resolve) => stream.write(text, (error) => resolve(error ?? null)));
}

/** 0 done, 1 refused or failed, 2 usage, or the verb's own (124 for an unmet await). */
function exitCodeFor(result: VerbResult): number {
  if (result.exitCode !== undefined) return result.exitCode;
  if (result.ok) return 0;
  return result.error?.code === "usage" ? 2 : 1;
}
