import type { Context } from "../context.js";
import { machineFailure } from "../core/machine-failure.js";
import { UserError } from "../errors.js";
import type { LogbookSurface } from "../io/logbook.js";
import { failureResult } from "../result.js";
import { visibleControls } from "../text.js";
import { renderFailure } from "../ui/failure.js";
import type { Colors } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";

/**
 * The one way a verb runs, for the CLI and for the desk alike: its logbook
 * invocation (begin and finish), the run itself, and a thrown refusal or
 * failure turned into a result and its human text. The caller prints the
 * outcome (cli-run.ts, as `--json` or for a person, then exits) or shows it (the
 * desk's result pane).
 */

/**
 * Verbs that change something: each writes a begin and a finish event to the
 * logbook (unless `--dry-run`, which changes nothing). Keyed by the verb name
 * as typed after `berth`; pure observers (status, logbook) are never listed; `describe` is logged only when
 * it changes something (cli-run.ts runs a bare `describe` as a dry run).
 */
export const EFFECTFUL_VERBS: ReadonlySet<string> = new Set([
  "init",
  "start",
  "describe",
  "gate",
  "update",
  "accept",
  "await",
  "queue run",
  "queue approve",
  "queue withdraw",
  "worktree setup",
  "worktree teardown",
  "worktree park",
  "worktree drop",
  "worktree prune",
  "worktree reclaim",
]);

export interface RunVerbOptions {
  dryRun?: boolean;
  /**
   * The berth argument as typed, the logbook event's target until the verb
   * resolves it; null for a verb about no berth; undefined: the subject's.
   */
  target?: string | null | undefined;
  /** The agent surface running the verb, recorded on its logbook events (`berth mcp`, `berth hook`). */
  surface?: LogbookSurface | undefined;
}

export async function runVerb(
  verb: string,
  ctx: Context,
  options: RunVerbOptions,
  run: (ctx: Context) => Promise<CommandOutcome>,
): Promise<CommandOutcome> {
  const journal =
    EFFECTFUL_VERBS.has(verb) && options.dryRun !== true
      ? (await import("../core/logbook/journal.js")).createJournal(ctx, verb, {
          argument: options.target,
          surface: options.surface,
        })
      : null;
  if (journal) ctx.journal = journal;
  let outcome: CommandOutcome;
  let thrown: unknown;
  try {
    outcome = await run(ctx);
  } catch (error) {
    thrown = error;
    outcome = failureOutcome(verb, await machineFailure(error), ctx);
  }
  await journal?.finish(outcome.result, thrown);
  return outcome;
}

/** A thrown refusal or failure: its result, and the refusal a person reads on stderr. */
export function failureOutcome(verb: string, error: unknown, ctx: Context): CommandOutcome {
  const result = failureResult(verb, error);
  if (error instanceof UserError && ctx.debug && error.stack) {
    ctx.stderr.write(`${error.stack}\n`);
  }
  const resultError = result.error as NonNullable<typeof result.error>;
  return {
    result,
    human: (colors, stderrColors = colors) => ({
      stderr: renderFailure(verb, error, resultError, ctx.debug, stderrColors),
    }),
  };
}

/** What an outcome prints for a person: stdout, and stderr with the hints at its end. */
export function humanOutput(
  outcome: CommandOutcome,
  colors: { stdout: Colors; stderr: Colors },
): { stdout: string; stderr: string } {
  const human = outcome.human(colors.stdout, colors.stderr);
  // Hints quote what people and agents typed (a berth's name, a path): never raw control characters.
  const hints = outcome.result.hints.map((hint) => `hint: ${visibleControls(hint)}\n`).join("");
  return { stdout: human.stdout ?? "", stderr: `${human.stderr ?? ""}${hints}` };
}
