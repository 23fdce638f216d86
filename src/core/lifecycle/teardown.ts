import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { describeHiddenChanges, readHiddenChanges } from "../../git/hidden-changes.js";
import type { WorktreeEntry } from "../../git/parse.js";
import { readWorktreeStatus } from "../../git/status.js";
import { listWorktrees, removeWorktree } from "../../git/worktrees.js";
import { recordBranchFirstSeen } from "../../io/branch-records.js";
import { fileStamps, pathExistsOrBroken } from "../../io/fs.js";
import { readOperationInProgress } from "../../io/in-progress.js";
import { type LedgerProblem, readLedger } from "../../io/ledger.js";
import { adminDirFor } from "../../io/paths.js";
import { takeGrant } from "../../io/queue-grants.js";
import { readReadyMarker } from "../../io/ready-marker.js";
import type { StepOutcome } from "../../result.js";
import { shellCommand } from "../../text.js";
import {
  type CommandFailure,
  describeFailure,
  describeLedgerProblems,
  destroyLedgerEntries,
  readOwnedEntries,
} from "../berth/resources.js";
import { describeOperation } from "../fleet/checkout-states.js";
import type { Repository } from "../repo/repository.js";
import { describeNestedWork, nestedWorkAtRisk } from "./nested-work.js";
import { lockedPhrase } from "./removal-facts.js";

/**
 * THE teardown (spec section 7), shared by every path that removes a berth:
 * drop, accept, the landed prune, the contained reclaim, and undoing a failed
 * start. Destroy resources through the ledger, then remove the registration
 * and checkout with git, then verify the folder is gone and git no longer
 * lists it. A failed destroy stops everything: the checkout stays and keeps
 * owning the resources not yet destroyed (safety invariant 5).
 *
 * Callers hold the fleet lock. Teardown re-checks its target against live
 * state first (registered, owned, unlocked, unmoved, clean when asked), so a
 * plan made earlier can never tear down something that changed since. What
 * is torn down and whether it may be is planned in ./removal-facts.ts.
 */

export interface TeardownTarget {
  /** The checkout as registered with git. */
  path: string;
  /** Its folder under `<common>/worktrees/`; the ledger is filed under it. */
  adminKey: string;
  /** The berth id from its ready marker; teardown refuses a checkout whose marker differs. */
  id: string;
}

export interface TeardownOptions {
  /** Remove the checkout even with uncommitted changes (drop --force, undoing a start). */
  force: boolean;
  /** Refuse unless the working tree is clean right now (accept, prune, reclaim, plain drop). */
  requireClean: boolean;
  /** Refuse unless HEAD is still this commit (what the caller planned on). */
  expectHead?: string | null | undefined;
  /**
   * A forced teardown's plan (drop --force): what the person chose to
   * discard. Work beyond it since the plan (a file edited or added while the
   * confirmation waited, nested commits made) refuses: only the work the plan
   * named is discarded.
   */
  discarding?: Discarding | undefined;
  /** Housekeeping (prune): refuse when a resource has `gc = false`. */
  housekeeping?: boolean | undefined;
}

export interface Discarding {
  /** Every uncommitted path the plan found; null: the plan could not read the tree. */
  changedPaths: readonly string[] | null;
  /** Those paths as the plan saw them: one written to since is work the plan never showed. */
  stamps: ReadonlyMap<string, string | null>;
  /** The plan listed commits only nested repositories hold. */
  nestedCommits: boolean;
}

export type TeardownFailure =
  /** Live state no longer matches the plan: nothing was done. */
  | { stage: "changed"; reason: string }
  /** A ledger file cannot be read: nothing was destroyed, nothing removed. */
  | { stage: "ledger"; reason: string; problems: LedgerProblem[] }
  /** Housekeeping met a `gc = false` resource: nothing was done. */
  | { stage: "kept"; reason: string }
  /** A resource's destroy failed: the checkout and the remaining entries are kept. */
  | {
      stage: "destroy";
      reason: string;
      resource: string;
      command: string;
      exit_code: number | null;
      output: string;
      /** A stop signal stopped it: running the verb again finishes the teardown. */
      interrupted: boolean;
    }
  /**
   * git refused to remove the checkout (resources are already destroyed), or
   * reported success, but the folder or the registration is still there.
   * `folderLeft`: git forgot the checkout, but its folder is still there.
   */
  | { stage: "remove" | "verify"; reason: string; folderLeft: boolean };

export interface TeardownResult {
  ok: boolean;
  /** Resources destroyed (and forgotten), in the order they were destroyed. */
  destroyed: string[];
  worktreeRemoved: boolean;
  failure: TeardownFailure | null;
  steps: StepOutcome[];
}

export async function applyTeardown(
  repo: Repository,
  ctx: Context,
  target: TeardownTarget,
  options: TeardownOptions,
): Promise<TeardownResult> {
  const result: TeardownResult = {
    ok: false,
    destroyed: [],
    worktreeRemoved: false,
    failure: null,
    steps: [],
  };
  const fail = (failure: TeardownFailure): TeardownResult => {
    result.failure = failure;
    return result;
  };

  const changed = await recheck(repo, target, options);
  if (changed !== null) {
    result.steps.push({
      step: "teardown",
      target: target.path,
      outcome: "skipped",
      reason: changed,
    });
    return fail({ stage: "changed", reason: changed });
  }

  const marker = await readReadyMarker(adminDirFor(repo.location.commonDir, target.adminKey));
  if (marker !== null) await recordBranchFirstSeen(repo.location.commonDir, marker);

  const owned = await readOwnedEntries(repo, target.adminKey, target.id);
  if (owned.problems.length > 0) {
    const reason = `unreadable ledger file(s): ${describeLedgerProblems(owned.problems)}`;
    result.steps.push({
      step: "destroy resources",
      target: target.path,
      outcome: "failed",
      reason,
    });
    return fail({ stage: "ledger", reason, problems: owned.problems });
  }
  if (options.housekeeping) {
    const kept = owned.entries.filter((e) => !e.gc).map((e) => e.resource);
    if (kept.length > 0) {
      const reason = `resource ${kept.join(", ")} has gc = false: only an explicit teardown destroys it`;
      result.steps.push({ step: "teardown", target: target.path, outcome: "skipped", reason });
      return fail({ stage: "kept", reason });
    }
  }

  const destroyed = await destroyLedgerEntries(repo, ctx, owned.entries);
  result.destroyed = destroyed.destroyed;
  for (const name of destroyed.destroyed) {
    result.steps.push({ step: "destroy resource", target: name, outcome: "done" });
  }
  if (destroyed.failure) {
    const reason = describeFailure(destroyed.failure);
    result.steps.push({
      step: "destroy resource",
      target: destroyed.failure.resource,
      outcome: "failed",
      reason,
    });
    result.steps.push({
      step: "remove worktree",
      target: target.path,
      outcome: "skipped",
      reason: "a resource destroy failed; the checkout keeps owning its resources",
    });
    return fail(destroyFailure(destroyed.failure, reason));
  }

  try {
    await removeWorktree(repo.mainPath, target.path, options.force);
  } catch (error) {
    const reason = (error as Error).message;
    result.steps.push({ step: "remove worktree", target: target.path, outcome: "failed", reason });
    return fail(removalFailure("remove", reason, await isFolderLeft(repo, target.path), target));
  }
  const leftover = await verifyGone(repo, target.path);
  if (leftover !== null) {
    result.steps.push({
      step: "remove worktree",
      target: target.path,
      outcome: "failed",
      reason: leftover,
    });
    return fail(removalFailure("verify", leftover, await isFolderLeft(repo, target.path), target));
  }
  result.worktreeRemoved = true;
  // A standing grant was for this berth's next submission, which can no longer come.
  await takeGrant(repo.location.commonDir, target.id);
  result.ok = true;
  result.steps.push({ step: "remove worktree", target: target.path, outcome: "done" });
  return result;
}

/**
 * A teardown that meets a ledger file it cannot read: berth cannot tell which
 * resource the file records, or how to destroy it, so only a person can.
 */
export function unreadableLedgerError(
  message: string,
  problems: readonly LedgerProblem[],
  rerun: readonly string[],
  data: unknown,
  nothingChanged: boolean,
): UserError {
  const files = problems.map((p) => p.file);
  const remove = shellCommand(["rm", "--", ...files]);
  return new UserError(
    "teardown_failed",
    `${message}\nberth cannot tell which resource that file records, or how to destroy it. Read it; destroy the resource by hand if it exists; then remove the file (${remove}) and run ${shellCommand(["berth", ...rerun])} again.`,
    { next: shellCommand(["cat", "--", ...files]), data, nothingChanged },
  );
}

/** Why the target may not be torn down now, or null when it still matches the plan. */
async function recheck(
  repo: Repository,
  target: TeardownTarget,
  options: TeardownOptions,
): Promise<string | null> {
  const entries = await listWorktrees(repo.mainPath);
  const index = entries.findIndex((e) => e.path === target.path);
  const entry: WorktreeEntry | undefined = entries[index];
  if (entry === undefined) return "changed since the plan: git no longer lists this worktree";
  if (index === 0) return "it is the main checkout, which berth never removes";
  if (entry.locked) return `it is ${lockedPhrase(entry)}; berth never removes a locked worktree`;
  const adminDir = adminDirFor(repo.location.commonDir, target.adminKey);
  const marker = await readReadyMarker(adminDir);
  if (marker === null || marker.id !== target.id) {
    return "berth's ready marker is missing or names another berth; berth removes only what it created";
  }
  if (options.expectHead !== undefined && entry.head !== options.expectHead) {
    return `changed since the plan: HEAD is now ${entry.head ?? "unborn"}, not ${options.expectHead ?? "unborn"}`;
  }
  if (options.requireClean && !entry.prunable) {
    // A merge, am or cherry-pick stopped on a clean tree is someone's work too (decision 0071).
    const operation = readOperationInProgress(adminDir);
    if (operation !== null) {
      return `${describeOperation(operation, target.path)}; removing the checkout would lose it`;
    }
    // Edits in files git is told not to look at are uncommitted changes too.
    const [status, hidden] = await Promise.all([
      readWorktreeStatus(target.path).catch(() => null),
      readHiddenChanges(target.path).catch(() => null),
    ]);
    if (status === null || hidden === null)
      return "changed since the plan: its state cannot be read";
    if (status.changedFiles > 0) {
      return `changed since the plan: it now has ${status.changedFiles} uncommitted change(s)`;
    }
    if (hidden.length > 0) {
      return `changed since the plan: it now has ${hidden.length} uncommitted change(s) git status does not show: ${describeHiddenChanges(hidden)}`;
    }
  }
  if (!options.requireClean && options.discarding !== undefined && !entry.prunable) {
    const beyond = await changesBeyondThePlan(target.path, options.discarding);
    if (beyond !== null) return beyond;
  }
  if (options.requireClean || options.discarding?.nestedCommits === false) {
    // A folder deleted by hand leaves its submodules' repositories in the admin dir, which goes too.
    const nested = await nestedWorkAtRisk(target.path, adminDir);
    if (nested.length > 0) {
      const since = options.requireClean ? "" : "changed since the plan: ";
      return `${since}${describeNestedWork(nested)}; removing the checkout would delete them`;
    }
  }
  return null;
}

/** Uncommitted paths a forced plan did not list, described; null when there are none. */
async function changesBeyondThePlan(path: string, plan: Discarding): Promise<string | null> {
  if (plan.changedPaths === null) return null;
  const [status, hidden] = await Promise.all([
    readWorktreeStatus(path).catch(() => null),
    readHiddenChanges(path).catch(() => null),
  ]);
  if (status === null || hidden === null) return "changed since the plan: its state cannot be read";
  const planned = new Set(plan.changedPaths);
  const now = [...hidden.map((h) => h.path), ...status.paths];
  const added = now.filter((p) => !planned.has(p));
  if (added.length > 0)
    return `changed since the plan: it now has uncommitted change(s) the plan did not list: ${someOf(added)}`;
  const stamps = fileStamps(path, plan.changedPaths);
  // A listed file deleted since holds nothing more to lose.
  const edited = plan.changedPaths.filter((p) => {
    const stamp = stamps.get(p) ?? null;
    return stamp !== null && stamp !== plan.stamps.get(p);
  });
  if (edited.length > 0)
    return `changed since the plan: written to after the plan listed them: ${someOf(edited)}`;
  return null;
}

function someOf(paths: readonly string[]): string {
  const more = paths.length > 5 ? ` and ${paths.length - 5} more` : "";
  return `${paths.slice(0, 5).join(", ")}${more}`;
}

/**
 * Nothing of the berth is left to tear down: git no longer lists its checkout,
 * its folder is gone and it has no recorded resources (another run finished it).
 */
export async function isTornDown(repo: Repository, target: TeardownTarget): Promise<boolean> {
  const listed = (await listWorktrees(repo.mainPath)).some((e) => e.path === target.path);
  if (listed || pathExistsOrBroken(target.path)) return false;
  const ledger = await readLedger(repo.location.commonDir, target.adminKey);
  return ledger.entries.length === 0 && ledger.problems.length === 0;
}

function removalFailure(
  stage: "remove" | "verify",
  why: string,
  folderLeft: boolean,
  target: TeardownTarget,
): TeardownFailure {
  if (!folderLeft) return { stage, reason: why, folderLeft };
  const reason =
    `${why}\ngit no longer knows ${target.path} as a checkout, but its folder is left. ` +
    "Look at what is in it, keep what you want, then delete the folder by hand.";
  return { stage, reason, folderLeft };
}

/** A removal that failed half-way: git no longer lists the checkout, but its folder is there. */
async function isFolderLeft(repo: Repository, path: string): Promise<boolean> {
  const listed = (await listWorktrees(repo.mainPath)).some((e) => e.path === path);
  return !listed && pathExistsOrBroken(path);
}

async function verifyGone(repo: Repository, path: string): Promise<string | null> {
  const listed = (await listWorktrees(repo.mainPath)).some((e) => e.path === path);
  if (listed) return `git still lists ${path} after removing it`;
  if (pathExistsOrBroken(path)) return `${path} still exists after git removed the worktree`;
  return null;
}

function destroyFailure(failure: CommandFailure, reason: string): TeardownFailure {
  return {
    stage: "destroy",
    reason,
    resource: failure.resource,
    command: failure.command,
    exit_code: failure.exit_code,
    output: failure.output,
    interrupted: failure.interrupted === true,
  };
}

/**
 * How a verb reports a failed teardown: `teardown_failed`, naming the
 * resource and its output. `rerun` is the berth command that retries it (its
 * arguments after `berth`).
 */
export function teardownError(
  rerun: readonly string[],
  target: TeardownTarget,
  result: TeardownResult,
  data: unknown,
): UserError {
  const failure = result.failure;
  const folderLeft = failure !== null && "folderLeft" in failure && failure.folderLeft;
  const somethingChanged = result.destroyed.length > 0 || result.worktreeRemoved || folderLeft;
  const why = failure?.reason ?? "unknown failure";
  const message =
    failure?.stage === "destroy"
      ? `Teardown of ${target.id} stopped: ${why}\nThe checkout ${target.path} was kept and still owns its remaining resources.` +
        (result.destroyed.length > 0
          ? ` Destroyed before the failure: ${result.destroyed.join(", ")}.`
          : "")
      : `Teardown of ${target.id} stopped: ${why}`;
  if (failure?.stage === "ledger") {
    return unreadableLedgerError(message, failure.problems, rerun, data, !somethingChanged);
  }
  if (folderLeft) {
    return new UserError("teardown_failed", message, {
      next: shellCommand(["ls", "-A", "--", target.path]),
      data,
      nothingChanged: false,
    });
  }
  const advice =
    failure?.stage === "destroy" && failure.interrupted
      ? "It was interrupted; run it again to finish."
      : failure?.stage === "destroy"
        ? `Fix what resource ${failure.resource}'s destroy needs (berth runs the command its ledger recorded, not berth.toml's), then rerun it.`
        : "Check berth status, then rerun it.";
  return new UserError("teardown_failed", `${message}\n${advice}`, {
    next: shellCommand(["berth", ...rerun]),

    data,
    nothingChanged: !somethingChanged,
  });
}
