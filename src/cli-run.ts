import { CommanderError, type CommandUnknownOpts } from "@commander-js/extra-typings";
import { execute, writeFully } from "./cli-execute.js";
import { heedWriteErrors } from "./context.js";
import { UserError } from "./errors.js";
import { buildProgram, invokedVerb } from "./program.js";
import { failureResult } from "./result.js";
import { shellCommand } from "./text.js";
import { renderJson } from "./ui/envelope.js";

/**
 * The parser: cli.cts, the entry, loads it for everything but `--version` and
 * a plain `berth status` (cli-status.ts). The arguments are declared in
 * program.ts, only the invoked verb's when the first word names one; the verb
 * runs, prints and exits in cli-execute.ts. Verb modules are imported only
 * when their verb runs, so `berth --help` never loads what a verb needs.
 */

/** Called by the entry (cli.cts): parses `argv` and runs the verb it names. */
export async function main(argv: string[]): Promise<void> {
  // commander prints help and usage errors itself.
  heedWriteErrors(process.stdout);
  heedWriteErrors(process.stderr);
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
        const { verb, declared } = typedVerb(program, argv.slice(2));
        const next = shellCommand(["berth", ...declared, "--help"]);
        await writeFully(
          process.stdout,
          renderJson(failureResult(verb, new UserError("usage", error.message, { next }))),
        );
      }
      process.exit(done ? 0 : 2);
    }
    throw error;
  }
}

/**
 * The verb a usage error's envelope names, as the verb's own envelopes do: a
 * declared command and, under a group (`worktree`, `queue`), the declared
 * subcommand typed after it (`worktree drop`). An unknown word is named as
 * typed. `declared` is the words of the command whose help answers the error.
 */
function typedVerb(
  program: CommandUnknownOpts,
  args: readonly string[],
): { verb: string; declared: string[] } {
  const words = args.filter((a) => !a.startsWith("-"));
  const named = (commands: readonly CommandUnknownOpts[], word: string | undefined) =>
    commands.find((c) => word !== undefined && (c.name() === word || c.aliases().includes(word)));
  const verb = named(program.commands, words[0]);
  if (verb === undefined) return { verb: words[0] ?? "berth", declared: [] };
  const sub = named(verb.commands, words[1]);
  if (sub === undefined) return { verb: verb.name(), declared: [verb.name()] };
  return { verb: `${verb.name()} ${sub.name()}`, declared: [verb.name(), sub.name()] };
}
