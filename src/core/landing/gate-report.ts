import type { ErrorCode } from "../../errors.js";
import { receiptPath } from "../../io/receipt-file.js";
import type { PlanStep, StepOutcome } from "../../result.js";
import {
  type CommandEnvironment,
  type CommandLine,
  commandSequence,
  shellCommand,
  userShellCommand,
} from "../../text.js";
import {
  type GateApplied,
  type GateCheckReport,
  type GateData,
  type GateFailure,
  type GatePlan,
  NO_CHECKS_LABEL,
} from "./gate.js";
import type { CheckRun } from "./gate-runner.js";

/**
 * What a gate run reports: its data, its error when red, its plan and step
 * outcomes, and the command that reproduces a failed check (quoted: spec
 * invariant 10). gate.ts plans and applies; this module only describes.
 */

export function gateData(
  plan: GatePlan,
  runs: CheckRun[] | null,
  applied: GateApplied | null,
): GateData {
  const byName = new Map((runs ?? []).map((run) => [run.name, run]));
  const checks = plan.checks.map((check): GateCheckReport => {
    const run = byName.get(check.name);
    return {
      name: check.name,
      command: check.command,
      after: [...check.after],
      timeout_s: check.timeoutMs / 1000,
      outcome: run?.outcome ?? null,
      exit_code: run?.exitCode ?? null,
      duration_ms: run?.durationMs ?? null,
      log: run?.logPath ?? null,
      reason: run?.reason ?? null,
    };
  });
  const failures = (runs ?? [])
    .filter((run) => run.outcome === "failed" || run.outcome === "timed_out")
    .map(
      (run): GateFailure => ({
        name: run.name,
        command: run.command,
        outcome: run.outcome,
        reason: run.reason,
        tail: run.tail,
        log: run.logPath,
        reproduce: reproduceCommand(plan.path, run.command, applied?.environment),
      }),
    );
  return {
    path: plan.path,
    branch: plan.branch,
    commit: plan.commit,
    tree: plan.tree,
    trunk: plan.trunk,
    trunk_tip: plan.trunkTip,
    gate_digest: plan.gateDigest,
    no_checks: plan.checks.length === 0,
    green: applied?.green ?? null,
    checks,
    failures,
    receipt: {
      path: receiptPath(plan.adminDir),
      decision: applied?.decision ?? null,
      reason: applied?.reason ?? null,
    },
  };
}

export function gateError(
  plan: GatePlan,
  applied: GateApplied,
  failures: GateFailure[],
): { code: ErrorCode; message: string; next: CommandLine } | null {
  if (!applied.green) {
    const receiptNote =
      applied.decision === "deleted"
        ? " Its old receipt was deleted (fail closed)."
        : applied.decision === "kept"
          ? " Any old receipt was left untouched."
          : "";
    const first = failures[0];
    if (applied.interrupted || first === undefined) {
      return {
        code: "gate_failed",
        message: `The gate did not finish${applied.interrupted ? " (interrupted)" : ""}.${receiptNote}`,
        next: shellCommand(["berth", "gate"]),
      };
    }
    const names = failures.map((f) => `"${f.name}" (${f.reason ?? "failed"})`).join(", ");
    return {
      code: "gate_failed",
      message: `The gate is red: ${names}.${receiptNote}`,
      next: first.reproduce,
    };
  }
  if (applied.change === null) return null;
  const message =
    `Every check passed, but ${applied.change}: no receipt was written, ` +
    "and any old receipt was left untouched.";
  return applied.moved
    ? { code: "moved", message, next: shellCommand(["berth", "gate"]) }
    : {
        code: "precondition_failed",
        message: `${message} Commit or stash the changes in ${plan.path}.`,
        next: stashThenGate(plan.path),
      };
}

/** `git -C <path> stash -u && berth gate`: the gate proves a clean tree. */
export function stashThenGate(path: string): CommandLine {
  return commandSequence(
    shellCommand(["git", "-C", path, "stash", "-u"]),
    shellCommand(["berth", "gate"]),
  );
}

export function gatePlanSteps(plan: GatePlan): PlanStep[] {
  const steps: PlanStep[] = plan.checks.map((check) => ({
    step: "run check",
    target: check.name,
    detail: `${check.command}${check.after.length > 0 ? ` (after ${check.after.join(", ")})` : ""}; timeout ${check.timeoutMs / 1000} s`,
  }));
  steps.push({
    step: "write receipt",
    target: receiptPath(plan.adminDir),
    detail:
      plan.checks.length === 0
        ? `${NO_CHECKS_LABEL}: the receipt proves a clean tree and nothing more`
        : "only if every check passes and HEAD and the tree are unchanged; a red gate deletes it",
  });
  return steps;
}

export function gateSteps(applied: GateApplied): StepOutcome[] {
  const steps: StepOutcome[] = applied.runs.map((run) => ({
    step: "run check",
    target: run.name,
    outcome:
      run.outcome === "passed"
        ? "done"
        : run.outcome === "failed" || run.outcome === "timed_out"
          ? "failed"
          : "skipped",
    ...(run.reason === null ? {} : { reason: run.reason }),
  }));
  switch (applied.decision) {
    case "written":
      steps.push({ step: "write receipt", outcome: "done" });
      break;
    case "deleted":
      steps.push({ step: "delete receipt", outcome: "done", reason: applied.reason });
      break;
    case "none":
      steps.push({ step: "delete receipt", outcome: "skipped", reason: "no receipt existed" });
      break;
    case "kept":
      steps.push({ step: "write receipt", outcome: "skipped", reason: applied.reason });
      break;
  }
  return steps;
}

export function noChecksHint(): string {
  return `${NO_CHECKS_LABEL}: the receipt proves a clean tree and nothing more; declare checks under [gate] in berth.toml`;
}

/**
 * `cd <path> && env BERTH_…=… sh -c <command>`. The command goes through
 * `sh -c` with the BERTH_* variables it ran with (userShellCommand): pasted
 * into bash or zsh it then runs the same, all of it in the checkout (and an
 * `exit` in it cannot close the user's shell). `first` runs in the checkout
 * before it (an integration gate's `berth update`).
 */
export function reproduceCommand(
  path: string,
  command: string,
  environment: CommandEnvironment | undefined,
  ...first: readonly CommandLine[]
): CommandLine {
  return commandSequence(
    shellCommand(["cd", path]),
    ...first,
    userShellCommand(command, environment),
  );
}
