import { type Context, isInterrupted } from "../../context.js";
import { reportProgress } from "../progress.js";
import type { Repository } from "../repo/repository.js";
import { type BerthFacts, berthVariables, commandEnv } from "./env.js";
import { lastLines, runShell } from "./project-command.js";

/**
 * `[worktree.setup]`: `steps` run once when a berth is started, `ensure` is
 * convergent and runs at start, on `berth worktree setup` and after
 * `berth update`. Both run in the berth's checkout with its BERTH_* variables.
 */

export interface SetupFailure {
  /** Which command, for messages: "setup step 2", "setup ensure 1". */
  step: string;
  command: string;
  exit_code: number | null;
  /** The command's last lines of output. */
  output: string;
  /** A stop signal killed it, or came before it ran (commands/interrupt.ts). */
  interrupted?: true;
}

export interface SetupOutcome {
  /** Commands that ran and succeeded, in order. */
  ran: string[];
  /** The first command that failed; the ones after it did not run. */
  failure: SetupFailure | null;
}

const OUTPUT_LINES = 20;

/** Runs `[worktree.setup].steps` in the berth, stopping at the first failure. */
export function runSetupSteps(
  repo: Repository,
  ctx: Context,
  facts: BerthFacts,
): Promise<SetupOutcome> {
  return runInOrder(ctx, facts, repo.config.worktree.setup.steps, "setup step");
}

/** Runs `[worktree.setup].ensure` in the berth, stopping at the first failure. */
export function runSetupEnsure(
  repo: Repository,
  ctx: Context,
  facts: BerthFacts,
): Promise<SetupOutcome> {
  return runInOrder(ctx, facts, repo.config.worktree.setup.ensure, "setup ensure");
}

/** One command's run, for verbs that report each (`berth update`). */
export interface CommandRun {
  command: string;
  exit_code: number | null;
  duration_ms: number;
  /** Last lines of output, kept only when the command failed. */
  tail: string | null;
}

/**
 * Runs project commands one after another in `cwd` with the given BERTH_*
 * variables, stopping at the first failure, or before the next command once
 * a stop signal came (`ctx.interrupt`, which also kills the one running).
 */
export async function runCommandsInOrder(
  ctx: Context,
  cwd: string,
  variables: Record<string, string>,
  commands: readonly string[],
  label: string,
): Promise<{ runs: CommandRun[]; outcome: SetupOutcome }> {
  const outcome: SetupOutcome = { ran: [], failure: null };
  const runs: CommandRun[] = [];
  const env = commandEnv(ctx.env, variables);
  for (const [i, command] of commands.entries()) {
    const step = `${label} ${i + 1}`;
    if (isInterrupted(ctx)) {
      outcome.failure = { step, command, exit_code: null, output: "", interrupted: true };
      break;
    }
    reportProgress(ctx, `running ${step}: ${command}`);
    const result = await runShell(command, { cwd, env, signal: ctx.interrupt });
    const ok = result.exitCode === 0;
    const tail = ok ? null : lastLines(result.output, OUTPUT_LINES);
    runs.push({ command, exit_code: result.exitCode, duration_ms: result.durationMs, tail });
    if (!ok) {
      outcome.failure = { step, command, exit_code: result.exitCode, output: tail ?? "" };
      if (result.aborted) outcome.failure.interrupted = true;
      break;
    }
    outcome.ran.push(command);
  }
  return { runs, outcome };
}

async function runInOrder(
  ctx: Context,
  facts: BerthFacts,
  commands: readonly string[],
  label: string,
): Promise<SetupOutcome> {
  const { outcome } = await runCommandsInOrder(
    ctx,
    facts.path,
    berthVariables(facts),
    commands,
    label,
  );
  return outcome;
}

/** "setup step 2 failed (exit 1): npm ci" and the output, for messages. */
export function describeSetupFailure(failure: SetupFailure): string {
  const how = failure.interrupted
    ? "was stopped: berth was interrupted (Ctrl-C or a stop signal)"
    : failure.exit_code === null
      ? "did not finish"
      : `failed (exit ${failure.exit_code})`;
  const lines = [`${failure.step} ${how}: ${failure.command}`];
  if (failure.output.trim() !== "") {
    lines.push(
      ...failure.output
        .trimEnd()
        .split("\n")
        .map((line) => `  | ${line}`),
    );
  }
  return lines.join("\n");
}
