import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { readHead } from "../../git/head.js";
import {
  describeHiddenChanges,
  type HiddenChange,
  readHiddenChanges,
  revealCommand,
} from "../../git/hidden-changes.js";
import type { StatusSummary } from "../../git/parse.js";
import { listRefs } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { acquireGateSlot } from "../../io/gate-slots.js";
import { perBerthDir } from "../../io/paths.js";
import type { ReadyMarker } from "../../io/ready-marker.js";
import { deleteReceipt, type Receipt, writeReceipt } from "../../io/receipt-file.js";
import { appliedResult, type PlanApplyResult, plannedResult } from "../../result.js";
import {
  type CommandEnvironment,
  type CommandLine,
  commandSequence,
  shellCommand,
  shortOid,
} from "../../text.js";
import { commandEnv, commandEnvChanges } from "../berth/env.js";
import {
  type CheckoutLocation,
  checkoutVariables,
  currentCheckout,
  readBranchHead,
  readCheckoutMarker,
  refuseOperationInProgress,
  requireTrunk,
} from "../repo/checkout.js";
import { fetchedRemoteTrunkAhead } from "../repo/remote.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { detectTrunk, TRUNK_REF_PREFIXES } from "../repo/trunk.js";
import { gateDefinitionOf } from "./gate-definition.js";
import {
  gateData,
  gateError,
  gatePlanSteps,
  gateSteps,
  noChecksHint,
  stashThenGate,
} from "./gate-report.js";
import {
  type CheckOutcome,
  type CheckRun,
  type GateEvent,
  type PlannedCheck,
  runChecks,
} from "./gate-runner.js";
import { type GateVerdict, publishReceipt } from "./receipt-notes.js";

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
  reproduce: CommandLine;
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
  const [head, status, hidden, refs] = await Promise.all([
    readBranchHead(repo, target, "gate", "a receipt belongs to a branch tip"),
    readWorktreeStatus(path),
    readHiddenChanges(path),
    listRefs(repo.location.cwd, TRUNK_REF_PREFIXES),
  ]);
  if (status.changedFiles > 0) throw dirtyRefusal(path, status);
  if (hidden.length > 0) throw hiddenRefusal(path, hidden);
  const trunk = requireTrunk(
    detectTrunk(repo.config, refs),
    `berth cannot tell whether ${head.branch} contains it (set [repository].trunk in berth.toml)`,
    shellCommand(["git", "-C", path, "branch", "--list"]),
  );
  // With a [remote], its trunk (as last fetched) is the trunk when it is ahead (spec section 13).
  const remoteTip = await fetchedRemoteTrunkAhead(repo, trunk.name, trunk.tip);
  const trunkTip = remoteTip ?? trunk.tip;
  if (!(await isAncestor(path, trunkTip, head.commit))) {
    const whose = remoteTip === null ? trunk.name : `${repo.config.remote.name}'s ${trunk.name}`;
    throw new UserError(
      "precondition_failed",
      `${head.branch} does not contain the tip of ${whose} (${shortOid(trunkTip)}); ` +
        "a receipt must prove the code as it would land.",
      { next: shellCommand(["berth", "update"]) },
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
    trunkTip,
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
      "The gate proves a commit, so the tree must be clean (untracked files count): commit or stash them.",
    { next: stashThenGate(path) },
  );
}

/** The checks would test contents git does not show and the commit does not hold. */
function hiddenRefusal(path: string, hidden: readonly HiddenChange[]): UserError {
  return new UserError(
    "precondition_failed",
    `${path} has ${hidden.length} tracked file(s) whose contents differ from the commit, which git status does not show: ${describeHiddenChanges(hidden)}. ` +
      "The checks would test those contents, not the commit's: let git see them again, then commit or stash them.",
    { next: commandSequence(revealCommand(path, hidden), stashThenGate(path)) },
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
  /** The BERTH_* variables the checks ran with: a reproduce line sets them too. */
  environment: CommandEnvironment;
}

/**
 * Runs the checks holding one of the fleet's `[gate.capacity].max_parallel`
 * gate slots (src/io/gate-slots.ts; by default as many as the cores); a wait
 * says so on stderr. An interrupt while waiting runs no check at all.
 */
async function withGateSlot(
  ctx: Context,
  repo: Repository,
  plan: GatePlan,
  signal: AbortSignal | undefined,
  run: () => Promise<CheckRun[]>,
): Promise<CheckRun[]> {
  const max = repo.config.gate.capacity.max_parallel || availableParallelism();
  if (plan.checks.length === 0) return run();
  const slot = await acquireGateSlot(repo.location.commonDir, max, {
    adminDir: plan.adminDir,
    signal,
    onWait: () =>
      ctx.stderr.write(
        `berth: gate for ${plan.branch} is waiting for a slot (all ${max} of [gate.capacity].max_parallel in use)\n`,
      ),
  });
  if (slot === null) return run();
  try {
    return await run();
  } finally {
    await slot.release();
  }
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
  const runs = await withGateSlot(ctx, repo, plan, options.signal, () =>
    runChecks(plan.checks, {
      cwd: plan.path,
      env: commandEnv(ctx.env, variables),
      logDir: join(perBerthDir(plan.adminDir), "gate"),
      failFast: plan.failFast,
      parallelism: options.parallelism,
      signal: options.signal,
      onEvent: options.onEvent,
    }),
  );
  const interrupted = options.signal?.aborted === true;
  const green = !interrupted && runs.every((run) => run.outcome === "passed");
  const [head, status] = await Promise.all([
    readHead(plan.path).catch(() => null),
    readWorktreeStatus(plan.path).catch(() => null),
  ]);
  const moved = head === null || head.commit !== plan.commit || head.branch !== plan.branch;
  const dirtied = status === null || status.changedFiles > 0;
  const environment = commandEnvChanges(ctx.env, variables);
  const base = { runs, green, interrupted, moved, dirtied, change: null, environment };

  const verdict: GateVerdict = {
    commit: plan.commit,
    tree: plan.tree,
    branch: plan.branch,
    gate_digest: plan.gateDigest,
    checks: runs.map((run) => ({
      name: run.name,
      command: run.command,
      ok: run.outcome === "passed",
      duration_ms: run.durationMs ?? 0,
    })),
    created_at: ctx.now().toISOString(),
  };
  // Across machines (0053): a note on the commit, pushed; never fails the gate.
  const publish = async () =>
    repo.config.remote.publish_receipts ? `; ${await publishReceipt(repo, verdict)}` : "";

  const red = runs.some((run) => run.outcome === "failed" || run.outcome === "timed_out");
  if (red) {
    // Fail closed: whatever the old receipt proved, this run says it may be wrong; its
    // note line supersedes a green one published for the commit (0074).
    const existed = await deleteReceipt(plan.adminDir);
    return {
      ...base,
      decision: existed ? "deleted" : "none",
      reason:
        (existed ? "deleted: the gate is red (fail closed)" : "none written: the gate is red") +
        (await publish()),
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
  const { commit, tree, branch, gate_digest, checks, created_at } = verdict;
  const { trunk, trunkTip: trunk_tip } = plan;
  // The receipt file's own field order (version first, the trunk after the branch).
  const receipt: Receipt = {
    version: 2,
    commit,
    tree,
    branch,
    trunk,
    trunk_tip,
    gate_digest,
    checks,
    created_at,
  };
  await writeReceipt(plan.adminDir, receipt);
  const published = await publish();
  return {
    ...base,
    decision: "written",
    reason:
      (plan.checks.length === 0
        ? `written (${NO_CHECKS_LABEL}: it proves a clean tree and nothing more)`
        : `written for ${shortOid(plan.commit)} (tree ${shortOid(plan.tree)})`) + published,
  };
}
