import { CommanderError } from "@commander-js/extra-typings";
import { processContext } from "./context.js";
import { UserError } from "./errors.js";
import { buildProgram, type CommonOptions, invokedVerb, type VerbRunner } from "./program.js";
import { failureResult, type VerbResult } from "./result.js";
import { renderJson } from "./ui/envelope.js";
import { colorsFor } from "./ui/style.js";

/**
 * The one place that prints an outcome and exits (cli.ts, the entry, loads
 * it for everything but `--version`); the arguments are declared in
 * program.ts, only the invoked verb's when the first word names one. Verbs
 * run through commands/run-verb.ts (as the desk's actions do); it and the
 * verb modules are imported only when a verb runs, so `berth --help` and
 * `berth status` never load what other verbs need.
 */

/** Runs the verb (commands/run-verb.ts), prints its outcome, and exits with its code. */
async function execute(
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
  await Promise.all([
    writeFully(process.stdout, printed.stdout),
    printed.stderr === "" ? undefined : writeFully(process.stderr, printed.stderr),
  ]);
  process.exit(exitCodeFor(outcome.result));
}

/**
 * Writes and waits until the stream has handed the text to the OS. A pipe's
 * write is asynchronous once its buffer (64 KiB) is full, and process.exit
 * would otherwise cut a large `--json` document short for a slow reader.
 */
function writeFully(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  // Resolves on error too (e.g. the reader went away): the exit code still tells.
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

/** 0 done, 1 refused or failed, 2 usage, or the verb's own (124 for an unmet await). */
function exitCodeFor(result: VerbResult): number {
  if (result.exitCode !== undefined) return result.exitCode;
  if (result.ok) return 0;
  return result.error?.code === "usage" ? 2 : 1;
}

/**
 * Called by the entry (cli.ts). Not run at import: the lazily loaded chunks import
 * this bundle (scripts/bundle.mjs), and a top-level await here would deadlock them.
 */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram(execute, (code) => process.exit(code), invokedVerb(argv.slice(2)));
  try {
    await program.parseAsync(argv);
    // A bare `berth` or a group without its subcommand.
    program.outputHelp({ error: true });
    process.exit(2);
  } catch (error) {
    if (error instanceof CommanderError) {
      const done = ["commander.helpDisplayed", "commander.version"].includes(error.code);
      if (!done && argv.includes("--json")) {
        const verb = argv.slice(2).find((a) => !a.startsWith("-")) ?? "berth";
        await writeFully(
          process.stdout,
          renderJson(failureResult(verb, new UserError("usage", error.message))),
        );
      }
      process.exit(done ? 0 : 2);
    }
    throw error;
  }
}
