import { type ErrorCode, UserError } from "./errors.js";
import type { CommandLine } from "./text.js";

/**
 * The one result every verb returns (spec section 4). The table, `--json`
 * and the desk all render this object; nothing else decides what happened.
 * Plan/apply verbs build theirs with `plannedResult` and `appliedResult`;
 * a thrown refusal or failure becomes one through `failureResult`.
 */

export interface PlanStep {
  step: string;
  /** What the step acts on: a path, a branch, a resource. */
  target?: string;
  detail?: string;
}

export interface StepOutcome {
  step: string;
  target?: string;
  outcome: "done" | "skipped" | "failed";
  reason?: string;
}

export interface ResultError {
  code: ErrorCode;
  message: string;
  /** The command to run next, executable as is (see UserErrorOptions.next). */
  next?: CommandLine;
}

export interface VerbResult<D = unknown> {
  ok: boolean;
  verb: string;
  data: D | null;
  plan?: { steps: PlanStep[] };
  steps?: StepOutcome[];
  hints: string[];
  error?: ResultError;
  /** Exit code other than the default for ok/error (124 for an unmet await). */
  exitCode?: number;
  /**
   * Stopped by a signal (Ctrl-C, SIGTERM, SIGHUP) or the desk's interrupt
   * before it finished: the logbook records `interrupted`. Not part of the
   * `--json` envelope (the verb's data says it, e.g. await's `interrupted`).
   */
  interrupted?: boolean;
  /**
   * Plan/apply verbs: true when the result is the plan alone and nothing was
   * applied (`--dry-run`, or nothing to do). Not part of the `--json`
   * envelope, which says the same by carrying no `steps`.
   */
  dryRun?: boolean;
}

/** `await` not met within its timeout (spec section 4). */
export const EXIT_NOT_MET = 124;
/** Stopped by SIGINT or SIGTERM before it finished (docs/decisions/0012). */
export const EXIT_INTERRUPTED = 130;

/** The result of a plan/apply verb: it always says whether it applied anything. */
export type PlanApplyResult<D = unknown> = VerbResult<D> & {
  plan: { steps: PlanStep[] };
  dryRun: boolean;
};

/** What a plan/apply result may carry besides its data and steps. */
export interface ResultExtra {
  /** Default: true when there is no error. */
  ok?: boolean;
  hints?: string[];
  error?: ResultError | undefined;
}

export function success<D>(
  verb: string,
  data: D,
  extra: Partial<VerbResult<D>> = {},
): VerbResult<D> {
  return { ok: true, verb, data, hints: [], ...extra };
}

/** What the verb would do, having changed nothing (`--dry-run`). */
export function plannedResult<D>(
  verb: string,
  data: D,
  plan: PlanStep[],
  extra: ResultExtra = {},
): PlanApplyResult<D> {
  return planApply(verb, data, plan, undefined, extra);
}

/** What the verb did: the plan it applied and the outcome of each step. */
export function appliedResult<D>(
  verb: string,
  data: D,
  plan: PlanStep[],
  steps: StepOutcome[],
  extra: ResultExtra = {},
): PlanApplyResult<D> {
  return planApply(verb, data, plan, steps, extra);
}

/**
 * An apply function's own result (accept, drop and prune still build theirs
 * in core), declared applied for the views.
 */
export function asApplied<D>(result: VerbResult<D>): PlanApplyResult<D> {
  return { ...result, plan: result.plan ?? { steps: [] }, dryRun: false };
}

function planApply<D>(
  verb: string,
  data: D,
  plan: PlanStep[],
  steps: StepOutcome[] | undefined,
  extra: ResultExtra,
): PlanApplyResult<D> {
  const { error } = extra;
  return {
    ok: extra.ok ?? error === undefined,
    verb,
    data,
    plan: { steps: plan },
    ...(steps === undefined ? {} : { steps }),
    hints: extra.hints ?? [],
    ...(error === undefined ? {} : { error }),
    dryRun: steps === undefined,
  };
}

/** The hint every unexpected failure carries. */
export const INTERNAL_FAILURE_HINT =
  "this is a bug or an unexpected git failure; rerun with --debug for details";

/**
 * A thrown error as the verb's result: a `UserError` keeps its code, next
 * command, data and plan; anything else is `internal` (a bug, or git failing
 * in a way berth did not foresee).
 */
export function failureResult(verb: string, error: unknown): VerbResult {
  if (error instanceof UserError) {
    return {
      ok: false,
      verb,
      data: error.data ?? null,
      ...(error.plan === undefined ? {} : { plan: error.plan as { steps: PlanStep[] } }),
      ...(error.interrupted ? { interrupted: true } : {}),
      hints: [],
      error: {
        code: error.code,
        message: error.message,
        ...(error.next === undefined ? {} : { next: error.next }),
      },
    };
  }
  return {
    ok: false,
    verb,
    data: null,
    hints: [INTERNAL_FAILURE_HINT],
    error: { code: "internal", message: thrownError(error).message },
  };
}

/** Anything thrown, as an Error. */
export function thrownError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
