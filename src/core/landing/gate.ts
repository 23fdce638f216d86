import { join } from "node:path";
import type { Context } from "../../context.js";
import { type ErrorCode, UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { readHead } from "../../git/head.js";
import type { StatusSummary } from "../../git/parse.js";
import { listRefs } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { perBerthDir } from "../../io/paths.js";
import type { ReadyMarker } from "../../io/ready-marker.js";
import { deleteReceipt, type Receipt, receiptPath, writeReceipt } from "../../io/receipt-file.js";
import {
  appliedResult,
  type PlanApplyResult,
  type PlanStep,
  plannedResult,
  type StepOutcome,
} from "../../result.js";
import { shellQuote, shortOid } from "../../text.js";
import { commandEnv } from "../berth/env.js";
import {
  type CheckoutLocation,
  checkoutVariables,
  currentCheckout,
  readBranchHead,
  readCheckoutMarker,
  refuseOperationInProgress,
  requireTrunk,
} from "../repo/checkout.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { detectTrunk, TRUNK_REF_PREFIXES } from "../repo/trunk.js";
import { gateDefinitionOf } from "./gate-definition.js";
import {
  type CheckOutcome,
  type CheckRun,
  type GateEvent,
  type PlannedCheck,
  runChecks,
} from "./gate-runner.js";

/**
 * `berth gate`: run the declared checks on a clean HEAD and record a receipt
 * for exactly that commit and tree. Planning reads only and refuses what the
 * spec refuses; applying runs the checks, then decides the receipt:
 * - green, with HEAD and the tree unchanged since the start: write it;
 * - red (or interrupted): delete any receipt, fail closed;
 * - green, but HEAD moved or the tree was dirtied meanwhile: leave the old
 *   receipt untouched and say so (the run proved nothing about the new state).
 */

export const NO_CHECKS_LABEL = "no checks declared";

export interface GatePlan {
  path: string;
  adminDir: string;
  branch: string;
  commit: string;
  tree: string;
  trunk: string;
  trunkTip: string;
  marker: ReadyMarker | null;
  /** In dependency order, with their effective timeouts. */
  checks: PlannedCheck[];
  /** What the receipt records: the receipt proves this gate definition and no other. */
  gateDigest: string;
  failFast: boolean;
}

export type ReceiptDecision = "written" | "deleted" | "none" | "kept";

export interface GateCheckReport {
  name: string;
  command: string;
  after: string[];
  timeout_s: number;
  /** null in a dry run. */
  outcome: CheckOutcome | null;
  exit_code: number | null;
  duration_ms: number | null;
  log: string | null;
  reason: string | null;
}

export interface GateFailure {
  name: string;
  command: string;
  outcome: CheckOutcome;
  reason: string | null;
  /** The last lines of its output. */
  tail: string;
  log: string | null;
  /** The command that runs the check again by hand. */
  reproduce: string;
}

export interface GateData {
  path: string;
  branch: string;
  commit: string;
  tree: string;
  trunk: string;
  trunk_tip: string;
  /** The digest of the gate definition this run proves (what its receipt records). */
  gate_digest: string;
  /** No checks are declared: a receipt then proves a clean tree and nothing more. */
  no_checks: boolean;
  /** null in a dry run. */
  green: boolean | null;
  checks: GateCheckReport[];
  failures: GateFailure[];
  receipt: { path: string; decision: ReceiptDecision | null; reason: string | null };
}

export interface GateOptions {
  dryRun?: boolean;
  /** Aborting stops every running check (an interrupt). */
  signal?: AbortSignal | undefined;
  onEvent?: ((event: GateEvent) => void) | undefined;
  /** At most this many checks at once; default the number of cores. */
  parallelism?: number | undefined;
}

/** The verb: gate the checkout containing the working directory. */
export async function runGate(
  ctx: Context,
  options: GateOptions = {},
): Promise<PlanApplyResult<GateData>> {
  const repo = await openRepository(ctx);
  const plan = await planGate(repo, currentCheckout(repo, "gate"));
  const planSteps = gatePlanSteps(plan);
  const hints = plan.checks.length === 0 ? [noChecksHint()] : [];
  if (options.dryRun) {
    return plannedResult("gate", gateData(plan, null, null), planSteps, { hints });
  }
  ctx.journal.begin({ branch: plan.branch, path: plan.path });
  const applied = await applyGate(ctx, repo, plan, options);
  const data = gateData(plan, applied.runs, applied);
  const error = gateError(plan, applied, data.failures);
  const result = appliedResult("gate", data, planSteps, gateSteps(applied), {
    hints,
    error: error ?? undefined,
  });
  return applied.interrupted ? { ...result, interrupted: true } : result;
}

/** Reads only. Refuses an operation in progress, a detached or unborn HEAD, a dirty tree, and a branch behind the trunk. */
export async function planGate(repo: Repository, target: CheckoutLocation): Promise<GatePlan> {
  const { path, adminDir } = target;
  refuseOperationInProgress(target, "gate", "a gate on a half-done operation proves nothing");
  const [head, status, refs] = await Promise.all([
    readBranchHead(path, "gate", "a receipt belongs to a branch tip"),
    readWorktreeStatus(path),
    listRefs(repo.location.cwd, TRUNK_REF_PREFIXES),
  ]);
  if (status.changedFiles > 0) throw dirtyRefusal(path, status);
  const trunk = requireTrunk(
    detectTrunk(repo.config, refs),
    `berth cannot tell whether ${head.branch} contains it`,
    "set [repository].trunk in berth.toml",
  );
  if (!(await isAncestor(path, trunk.tip, head.commit))) {
    throw new UserError(
      "precondition_failed",
      `${head.branch} does not contain the tip of ${trunk.name} (${shortOid(trunk.tip)}); ` +
        "a receipt must prove the code as it would land.",
      { next: "berth update" },
    );
  }
  const marker = await readCheckoutMarker(repo, target);
  const { checks, digest } = gateDefinitionOf(repo.config.gate);
  return {
    path,
    adminDir,
    branch: head.branch,
    commit: head.commit,
    tree: head.tree,
    trunk: trunk.name,
    trunkTip: trunk.tip,
    marker,
    checks,
    gateDigest: digest,
    failFast: repo.config.gate.fail_fast,
  };
}

function dirtyRefusal(path: string, status: StatusSummary): UserError {
  const shown = status.paths.slice(0, 5).join(", ");
  const more = status.paths.length > 5 ? ` and ${status.paths.length - 5} more` : "";
  const untracked = status.untrackedFiles > 0 ? ` (${status.untrackedFiles} untracked)` : "";
  return new UserError(
    "precondition_failed",
    `${path} has ${status.changedFiles} uncommitted change(s)${untracked}: ${shown}${more}. ` +
      "The gate proves a commit, so the tree must be clean (untracked files count).",
    { next: "commit or stash them (git stash -u), then berth gate" },
  );
}

export interface GateApplied {
  runs: CheckRun[];
  green: boolean;
  interrupted: boolean;
  /** HEAD (commit or branch) changed while the checks ran. */
  moved: boolean;
  /** The working tree had changes after the checks (or could not be read). */
  dirtied: boolean;
  decision: ReceiptDecision;
  /** What happened to the receipt, for the person reading: "written for ...", "deleted: ...". */
  reason: string;
  /** What changed under a green run so that no receipt was written; null otherwise. */
  change: string | null;
}

/** Runs the planned checks, then writes, deletes or keeps the receipt. */
export async function applyGate(
  ctx: Context,
  repo: Repository,
  plan: GatePlan,
  options: Pick<GateOptions, "signal" | "onEvent" | "parallelism"> = {},
): Promise<GateApplied> {
  const variables = checkoutVariables(
    repo,
    { path: plan.path, branch: plan.branch, marker: plan.marker },
    plan.trunk,
  );
  const runs = await runChecks(plan.checks, {
    cwd: plan.path,
    env: commandEnv(ctx.env, variables),
    logDir: join(perBerthDir(plan.adminDir), "gate"),
    failFast: plan.failFast,
    parallelism: options.parallelism,
    signal: options.signal,
    onEvent: options.onEvent,
  });
  const interrupted = options.signal?.aborted === true;
  const green = !interrupted && runs.every((run) => run.outcome === "passed");
  const [head, status] = await Promise.all([
    readHead(plan.path).catch(() => null),
    readWorktreeStatus(plan.path).catch(() => null),
  ]);
  const moved = head === null || head.commit !== plan.commit || head.branch !== plan.branch;
  const dirtied = status === null || status.changedFiles > 0;
  const base = { runs, green, interrupted, moved, dirtied, change: null };

  const red = runs.some((run) => run.outcome === "failed" || run.outcome === "timed_out");
  if (red) {
    // Fail closed: whatever the old receipt proved, this run says it may be wrong.
    const existed = await deleteReceipt(plan.adminDir);
    return {
      ...base,
      decision: existed ? "deleted" : "none",
      reason: existed ? "deleted: the gate is red (fail closed)" : "none written: the gate is red",
    };
  }
  if (!green) {
    // Interrupted before any check failed: this run proved nothing either way.
    return {
      ...base,
      decision: "kept",
      reason: "not written: the gate was interrupted; any old receipt was left untouched",
    };
  }
  if (moved || dirtied) {
    const now =
      head === null ? "unreadable" : `${head.branch ?? "detached"} at ${shortOid(head.commit)}`;
    const change = moved
      ? `HEAD moved during the gate (was ${plan.branch} at ${shortOid(plan.commit)}, now ${now})`
      : status === null
        ? "the tree could not be read after the checks"
        : `the tree was dirtied during the gate (${status.changedFiles} change(s): ${status.paths.slice(0, 5).join(", ")})`;
    return {
      ...base,
      change,
      decision: "kept",
      reason: `not written: ${change}; any old receipt was left untouched`,
    };
  }
  const receipt: Receipt = {
    version: 2,
    commit: plan.commit,
    tree: plan.tree,
    branch: plan.branch,
    trunk: plan.trunk,
    trunk_tip: plan.trunkTip,
    gate_digest: plan.gateDigest,
    checks: runs.map((run) => ({
      name: run.name,
      command: run.command,
      ok: run.outcome === "passed",
      duration_ms: run.durationMs ?? 0,
    })),
    created_at: ctx.now().toISOString(),
  };
  await writeReceipt(plan.adminDir, receipt);
  return {
    ...base,
    decision: "written",
    reason:
      plan.checks.length === 0
        ? `written (${NO_CHECKS_LABEL}: it proves a clean tree and nothing more)`
        : `written for ${shortOid(plan.commit)} (tree ${shortOid(plan.tree)})`,
  };
}

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
        reproduce: reproduceCommand(plan.path, run.command),
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
): { code: ErrorCode; message: string; next: string } | null {
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
        next: "berth gate",
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
    ? { code: "moved", message, next: "berth gate" }
    : {
        code: "precondition_failed",
        message,
        next: `commit or stash the changes in ${plan.path}, then berth gate`,
      };
}

function gatePlanSteps(plan: GatePlan): PlanStep[] {
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

function gateSteps(applied: GateApplied): StepOutcome[] {
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

function noChecksHint(): string {
  return `${NO_CHECKS_LABEL}: the receipt proves a clean tree and nothing more; declare checks under [gate] in berth.toml`;
}

/**
 * `cd <path> && <command>`. A command with its own lists, pipes or
 * background jobs goes through `sh -c`, so that pasting it runs all of it in
 * the checkout (and an `exit` in it cannot close the user's shell).
 */
export function reproduceCommand(path: string, command: string): string {
  const simple = !/[;&|\n()`]/.test(command);
  return `cd ${shellQuote(path)} && ${simple ? command : `sh -c ${shellQuote(command)}`}`;
}
