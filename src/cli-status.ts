import { execute } from "./cli-execute.js";
import { statusCommand } from "./commands/status.js";
import { startStatusReads } from "./core/fleet/status-reads.js";

/**
 * `berth status` (or `ls`, `list`) whose every argument is one of a few
 * flags needs no parser: the entry (cli.cts) runs it from here, and the
 * parser (commander, the declarations of every verb) is never loaded. Any
 * other argument, `--help` included, goes to the parser, which declares these
 * same flags (program.ts), so both roads give the verb the same options.
 */

export type PlainStatusOptions = {
  json?: true;
  debug?: true;
  local?: true;
  all?: true;
};

const VERB_WORDS = new Set(["status", "ls", "list"]);
// Only flags that cannot turn `status` into a refusal or its help; `--remote` fetches.
const FLAG_OPTIONS: Readonly<Record<string, keyof PlainStatusOptions>> = {
  "--json": "json",
  "--debug": "debug",
  "--local": "local",
  "--all": "all",
};

/** The options of a plain status command line (`args` after the program name); null otherwise. */
export function plainStatusOptions(args: readonly string[]): PlainStatusOptions | null {
  const [verb, ...flags] = args;
  if (verb === undefined || !VERB_WORDS.has(verb)) return null;
  const options: PlainStatusOptions = {};
  for (const flag of flags) {
    const key = Object.hasOwn(FLAG_OPTIONS, flag) ? FLAG_OPTIONS[flag] : undefined;
    if (key === undefined) return null;
    // As the parser leaves them: a flag given is true, one not given is absent.
    options[key] = true;
  }
  return options;
}

/** Starts status's first git processes, runs the verb, prints, and exits. */
export function runPlainStatus(options: PlainStatusOptions): Promise<never> {
  const cwd = cwdIfAny();
  if (cwd !== null) startStatusReads(cwd, options);
  return execute("status", options, (ctx) => statusCommand(ctx, options));
}

/** The current folder; null when it was removed while the shell was in it (the verb refuses: context.ts). */
function cwdIfAny(): string | null {
  try {
    return process.cwd();
  } catch {
    return null;
  }
}
