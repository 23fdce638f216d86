import type { ErrorCode } from "./errors.js";

/**
 * The one result every verb returns (spec section 4). The table, `--json`
 * and the desk all render this object; nothing else decides what happened.
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
  next?: string;
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
}

export function success<D>(
  verb: string,
  data: D,
  extra: Partial<VerbResult<D>> = {},
): VerbResult<D> {
  return { ok: true, verb, data, hints: [], ...extra };
}
