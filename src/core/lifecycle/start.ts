import { basename, resolve } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { deleteRef, listRefs } from "../../git/refs.js";
import { hasCommits } from "../../git/repo.js";
import { addWorktree, addWorktreeOnBranch, removeWorktree } from "../../git/worktrees.js";
import { readGitFile } from "../../io/admin-dirs.js";
import { deleteBranchRecord, writeBranchRecord } from "../../io/branch-records.js";
import { type BriefRecord, type ParkedState, readBriefRecord } from "../../io/briefs.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { withFleetLock } from "../../io/lock.js";
import { adminDirFor } from "../../io/paths.js";
import { writeReadyMarker } from "../../io/ready-marker.js";
import {
  appliedResult,
  type PlanApplyResult,
  plannedResult,
  type StepOutcome,
} from "../../result.js";
import { type CommandLine, shellCommand } from "../../text.js";
import { VERSION } from "../../version.js";
import { type BriefChange, forgetRecordsWithout, storeRecord } from "../berth/briefs.js";
import type { BerthFacts } from "../berth/env.js";
import { cryptoHex, type MintedId, type RandomHex } from "../berth/identity.js";
import { createResources, describeFailure, type ResourceOwner } from "../berth/resources.js";
import type { ResolvedBase } from "../repo/from-ref.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { detectTrunk } from "../repo/trunk.js";
import { settleCheckoutIndex } from "./settle-index.js";
import {
  chooseBase,
  describeIdentity,
  type Identity,
  isFreeId,
  mintFreeId,
  readTakenIdentities,
  type TakenIdentities,
} from "./start-identity.js";
import { isFreeForResume, readBaseBranch, recordFor, resumedId } from "./start-resume.js";
import { runStartSetup, type StepFailure } from "./start-setup.js";
import { applyTeardown } from "./teardown.js";

export interface StartOptions {
  name?: string | undefined;
  from?: string | undefined;
  /** `--title` (normalised) and `--brief` (its text): stored in the branch's record. */
  title?: string | null | undefined;
  brief?: string | null | undefined;
  dryRun?: boolean;
  random?: RandomHex;
}

export interface StartData {
  id: string;
  branch: string;
  path: string;
  port: number;
  from: string;
  from_tip: string;
  name_note?: string;
  /** Present when the berth has a title (given, or carried by the branch it resumes). */
  title?: string;
  /** Present when `--from` named a parked branch: its checkout came back on that same branch. */
  resumed?: true;
}

export async function startBerth(
  ctx: Context,
  options: StartOptions,
): Promise<PlanApplyResult<StartData>> {
  const repo = await openRepository(ctx);
  const cwd = repo.location.cwd;
  if (!(await hasCommits(cwd))) {
    throw new UserError(
      "precondition_failed",
      "This repository has no commits yet; nothing to fork from.",
      { next: shellCommand(["git", "commit", "--allow-empty", "-m", "initial commit"]) },
    );
  }
  const refs = await listRefs(cwd, ["refs/heads", "refs/tags", "refs/remotes"]);
  const base = await chooseBase(repo, refs, options.from);
  const random = options.random ?? cryptoHex;
  const trunkName = detectTrunk(repo.config, refs).name;
  const taken = await readTakenIdentities(repo, refs);
  const commonDir = repo.location.commonDir;
  const baseBranch = await readBaseBranch(repo, base);
  const resume = baseBranch?.record?.parked && !baseBranch.checkedOut ? baseBranch : null;
  const change: BriefChange = { title: options.title, brief: options.brief };
  const mint = (free: TakenIdentities): MintedId =>
    resume?.record?.parked
      ? resumedId(repo, free, resume.record.parked, options.name, random)
      : mintFreeId(repo, free, options.name, random);
  const shape = (minted: MintedId): Identity =>
    describeIdentity(repo, base, trunkName, minted, {
      resume,
      record: recordFor(baseBranch, resume, change, ctx.now()),
      nameGiven: options.name !== undefined,
    });
  let identity = shape(mint(taken));
  if (options.dryRun) {
    return plannedResult("start", identity.data, identity.plan, { hints: identity.hints });
  }

  const run: StartRun = {
    repo,
    ctx,
    facts: identity.facts,
    base,
    steps: [],
    owner: null,
    resumed: resume !== null,
    recordBefore: null,
    recordWritten: false,
    // The same start again: a resume names only its parked branch; a new berth keeps its name too.
    retry: shellCommand([
      "berth",
      "start",
      ...(resume === null && options.name !== undefined ? [options.name] : []),
      "--from",
      base.name,
    ]),
  };

  // Under the fleet lock: what the fleet sees (checkout, branch, marker, ledger, resources).
  await withFleetLock(commonDir, "start", async () => {
    // The id is checked again here: a start running beside this one may have
    // taken its branch, folder or port since it was chosen.
    const now = await readTakenIdentities(repo, await listRefs(cwd, ["refs/heads"]));
    const stillFree =
      resume === null
        ? isFreeId(repo, now, identity.data.id)
        : isFreeForResume(repo, now, identity.data.id, resume.branch);
    if (!stillFree) {
      identity = shape(mint(now));
      run.facts = identity.facts;
    }
    ctx.journal.begin({ branch: identity.data.branch, path: identity.data.path });
    await createCheckout(run, resume?.record?.parked ?? null, options.from ?? null);
    try {
      // The record travels with the branch: written once the checkout exists, restored by an undo.
      run.recordBefore = readBriefRecord(commonDir, identity.data.branch);
      run.recordWritten = true;
      await forgetRecordsWithout(commonDir, new Set([...now.branches, identity.data.branch]));
      await storeRecord(commonDir, identity.data.branch, identity.record);
      if (identity.record !== null) {
        run.steps.push({
          step: "write brief record",
          target: identity.data.branch,
          outcome: "done",
        });
      }
      await createStartResources(run, identity.hints);
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw await undoStartRun(run, "create resources", (error as Error).message);
    }
  });
  const { data, plan, hints, facts } = identity;

  // Outside the lock: commands that change only this berth's checkout. A long
  // `npm ci` must not keep every other berth verb waiting (docs/decisions/0007).
  const failed = await runStartSetup({ ...run, owner: ownerOfRun(run) }, hints).catch(
    (error: Error): StepFailure => ({ step: "setup", detail: error.message }),
  );
  if (failed !== null) {
    let error: UserError;
    try {
      error = await withFleetLock(commonDir, "start", () =>
        undoStartRun(run, failed.step, failed.detail),
      );
    } catch (undoError) {
      error = new UserError(
        "teardown_failed",
        `Could not start ${facts.id}: ${failed.step} failed:\n${failed.detail}\n` +
          `It could not be undone: ${(undoError as Error).message}\nThe berth is kept at ${facts.path}.`,
        {
          next: shellCommand(["berth", "worktree", "drop", facts.id, "--force"]),
          nothingChanged: false,
        },
      );
    }
    throw error;
  }
  // Last, once setup has written what it writes: read-only surveys then never re-hash it.
  await settleCheckoutIndex(facts.path, ownerAdminDir(run));
  return appliedResult("start", data, plan, run.steps, { hints });
}

/** Resources in file order, each recorded before its create runs; a required failure undoes the run. */
async function createStartResources(run: StartRun, hints: string[]): Promise<void> {
  const { repo, ctx, steps } = run;
  const owner = ownerOfRun(run);
  const created = await createResources(repo, ctx, owner, repo.config.worktree.resources);
  for (const name of created.created) {
    steps.push({ step: "create resource", target: name, outcome: "done" });
  }
  hints.push(...created.warnings);
  if (created.failure) {
    const detail = describeFailure(created.failure);
    steps.push({
      step: "create resource",
      target: created.failure.resource,
      outcome: "failed",
      reason: detail,
    });
    throw await undoStartRun(run, `create resource ${created.failure.resource}`, detail);
  }
}

function ownerAdminDir(run: StartRun): string {
  return adminDirFor(run.repo.location.commonDir, ownerOfRun(run).adminKey);
}

function ownerOfRun(run: StartRun): ResourceOwner {
  if (run.owner === null) throw new Error("start has no checkout to set up");
  return run.owner;
}

interface StartRun {
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

async function createCheckout(
  run: StartRun,
  parked: ParkedState | null,
  from: string | null,
): Promise<void> {
  const { repo, ctx, facts, base, steps } = run;
  const cwd = repo.location.cwd;
  try {
    if (parked === null) {
      await addWorktree(cwd, facts.path, facts.branch, base.commit);
      // berth made this branch: the record is what lets it delete the branch later.
      await writeBranchRecord(repo.location.commonDir, {
        version: 1,
        branch: facts.branch,
        id: facts.id,
        created_tip: base.commit,
        created_at: ctx.now().toISOString(),
      });
      steps.push({ step: "create worktree", target: facts.path, outcome: "done" });
    } else {
      // A parked branch berth made: its branch record is still there.
      await addWorktreeOnBranch(cwd, facts.path, facts.branch);
      steps.push({ step: "resume worktree", target: facts.path, outcome: "done" });
    }
    const gitFile = await readGitFile(facts.path);
    if (gitFile === null) throw new Error(`git created ${facts.path} without a .git file`);
    const adminDir = resolve(facts.path, gitFile);
    await writeReadyMarker(adminDir, {
      id: facts.id,
      branch: facts.branch,
      created_at: ctx.now().toISOString(),
      berth_version: VERSION,
      // A resumed berth keeps the fork point it was started from (the landed rule reads it).
      from: parked === null ? from : parked.from,
      from_tip: parked === null ? base.commit : parked.from_tip,
    });
    steps.push({ step: "write ready marker", target: facts.branch, outcome: "done" });
    run.owner = { ...facts, adminKey: basename(adminDir) };
  } catch (error) {
    const undone = await undoStart(
      repo,
      facts.path,
      run.resumed ? null : facts.branch,
      base.commit,
    );
    throw new UserError(
      "precondition_failed",
      `Could not start the berth: ${(error as Error).message}. ${undone}`,
      { data: { steps } },
    );
  }
}

/**
 * Undoes what this run created, newest first, through the shared teardown
 * (resources, then the checkout), then deletes the branch by compare-and-swap
 * on the commit it was created at. Returns the error the verb reports: it
 * names the step that failed and what was undone. Called holding the lock.
 */
async function undoStartRun(run: StartRun, failedStep: string, detail: string): Promise<UserError> {
  const { repo, ctx, facts, base, steps } = run;
  const owner = run.owner;
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
      `Could not start the berth: ${failedStep} failed.`,
      { data },
    );
  }
  const teardown = await applyTeardown(
    repo,
    ctx,
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
      `Could not start ${facts.id}: ${failedStep} failed:\n${detail}\n` +
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
    `Could not start ${facts.id}: ${failedStep} failed:\n${detail}\n` +
      `Everything this run created was undone${destroyed}: ${gone}${branchNote}\n` +
      "Fix the failing command in berth.toml, then start again.",
    { next: run.retry, data },
  );
}

/**
 * Undoes only what this run created, newest first, and says what it did.
 * `git worktree add` can fail after registering the checkout (a failing
 * post-checkout hook), so the folder is checked, not the step list: it did not
 * exist before this run (the id was minted against it).
 */
async function undoStart(
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
