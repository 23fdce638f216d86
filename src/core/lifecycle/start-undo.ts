import { type Context, isInterrupted } from "../../context.js";
import { UserError } from "../../errors.js";
import { deleteRef } from "../../git/refs.js";
import { removeWorktree } from "../../git/worktrees.js";
import { deleteBranchRecord } from "../../io/branch-records.js";
import type { BriefRecord } from "../../io/briefs.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import type { StepOutcome } from "../../result.js";
import { type CommandLine, shellCommand } from "../../text.js";
import { storeRecord } from "../berth/briefs.js";
import type { BerthFacts } from "../berth/env.js";
import type { ResourceOwner } from "../berth/resources.js";
import type { ResolvedBase } from "../repo/from-ref.js";
import type { Repository } from "../repo/repository.js";
import { applyTeardown } from "./teardown.js";

/**
 * How `berth start` undoes a run that failed or was interrupted: only what
 * this run created, newest first, so a failed start leaves the fleet as it
 * found it.
 */

export interface StartRun {
  repo: Repository;
  ctx: Context;
  facts: BerthFacts;
  base: ResolvedBase;
  steps: StepOutcome[];
  /** Set once the checkout and its marker exist: undo then goes through the teardown. */
  owner: ResourceOwner | null;
  /** The branch existed before (a parked berth resumed): an undo must never delete it. */
  resumed: boolean;
  /** The branch's brief record before this run wrote it, restored by an undo. */
  recordBefore: BriefRecord | null;
  recordWritten: boolean;
  /** The command that starts the same berth again, once the failing command is fixed. */
  retry: CommandLine;
}

/**
 * Undoes what this run created, newest first, through the shared teardown
 * (resources, then the checkout), then deletes the branch by compare-and-swap
 * on the commit it was created at. Returns the error the verb reports: it
 * names the step that failed and what was undone. Called holding the lock.
 */
export async function undoStartRun(
  run: StartRun,
  failedStep: string,
  detail: string,
): Promise<UserError> {
  const { repo, ctx, facts, base, steps } = run;
  const owner = run.owner;
  // A stop signal ends the run, never its undo: the teardown runs uninterrupted.
  const stopped = isInterrupted(ctx);
  const how = stopped ? "was interrupted (Ctrl-C or a stop signal)" : "failed";
  const data = {
    id: facts.id,
    path: facts.path,
    branch: facts.branch,
    failed_step: failedStep,
    steps,
  };
  if (owner === null) {
    return new UserError(
      "precondition_failed",
      `Could not start the berth: ${failedStep} ${how}.`,
      { data },
    );
  }
  const teardown = await applyTeardown(
    repo,
    { ...ctx, interrupt: undefined },
    { path: owner.path, adminKey: owner.adminKey, id: owner.id },
    { force: true, requireClean: false },
  );
  steps.push(...teardown.steps.map((s) => ({ ...s, step: `undo: ${s.step}` })));
  if (teardown.ok && run.recordWritten) {
    // Back to what the branch carried before (a resumed berth is parked again).
    await storeRecord(repo.location.commonDir, facts.branch, run.recordBefore).catch(
      () => undefined,
    );
  }
  if (!teardown.ok) {
    return new UserError(
      "teardown_failed",
      `Could not start ${facts.id}: ${failedStep} ${how}:\n${detail}\n` +
        `Undoing it failed too: ${teardown.failure?.reason ?? "unknown"}\n` +
        `The berth is kept at ${facts.path} and still owns its remaining resources. ` +
        "Fix the failing command in berth.toml, then drop it.",
      {
        next: shellCommand(["berth", "worktree", "drop", facts.id, "--force"]),
        data,
        nothingChanged: false,
      },
    );
  }
  let branchNote = "";
  if (!run.resumed) {
    try {
      await deleteRef(repo.location.cwd, `refs/heads/${facts.branch}`, base.commit);
      await deleteBranchRecord(repo.location.commonDir, facts.branch);
      steps.push({ step: "undo: delete branch", target: facts.branch, outcome: "done" });
    } catch (error) {
      branchNote = ` Branch ${facts.branch} moved during setup and was kept.`;
      steps.push({
        step: "undo: delete branch",
        target: facts.branch,
        outcome: "failed",
        reason: (error as Error).message,
      });
    }
  }
  const destroyed =
    teardown.destroyed.length > 0 ? ` (resources destroyed: ${teardown.destroyed.join(", ")})` : "";
  const gone = run.resumed
    ? `the checkout is gone and branch ${facts.branch} is parked again.`
    : "the checkout and branch are gone.";
  return new UserError(
    "precondition_failed",
    `Could not start ${facts.id}: ${failedStep} ${how}:\n${detail}\n` +
      `Everything this run created was undone${destroyed}: ${gone}${branchNote}\n` +
      (stopped
        ? "Start it again when you are ready."
        : "Fix the failing command in berth.toml, then start again."),
    { next: run.retry, data },
  );
}

/**
 * Undoes only what this run created, newest first, and says what it did.
 * `git worktree add` can fail after registering the checkout (a failing
 * post-checkout hook), so the folder is checked, not the step list: it did not
 * exist before this run (the id was minted against it).
 */
export async function undoStart(
  repo: Repository,
  path: string,
  /** null: the branch existed before this run (a resume) and is never deleted. */
  branch: string | null,
  commit: string,
): Promise<string> {
  const cwd = repo.location.cwd;
  const problems: string[] = [];
  if (pathExistsOrBroken(path)) {
    await removeWorktree(cwd, path, true).catch((e: Error) => problems.push(e.message));
  }
  if (branch === null) {
    return problems.length === 0
      ? "Nothing of it was left behind."
      : `Cleaning up the half-made berth failed too: ${problems.join("; ")}`;
  }
  const branchKept = await deleteRef(cwd, `refs/heads/${branch}`, commit).then(
    () => false,
    (e: Error) => {
      // Absent is fine: git may have failed before creating the branch.
      const absent = /unable to resolve|does not exist|not a valid/i.test(e.message);
      if (!absent) problems.push(e.message);
      return !absent;
    },
  );
  if (!branchKept) await deleteBranchRecord(repo.location.commonDir, branch);
  return problems.length === 0
    ? "Nothing of it was left behind."
    : `Cleaning up the half-made berth failed too: ${problems.join("; ")}`;
}
