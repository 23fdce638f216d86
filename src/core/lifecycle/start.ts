import { basename, resolve } from "node:path";
import { type Context, isInterrupted } from "../../context.js";
import { UserError } from "../../errors.js";
import { listRefs } from "../../git/refs.js";
import { hasCommits } from "../../git/repo.js";
import { addWorktree, addWorktreeOnBranch } from "../../git/worktrees.js";
import { readGitFile } from "../../io/admin-dirs.js";
import { writeBranchRecord } from "../../io/branch-records.js";
import { type ParkedState, readBriefRecord } from "../../io/briefs.js";
import { withFleetLock } from "../../io/lock.js";
import { adminDirFor } from "../../io/paths.js";
import { writeReadyMarker } from "../../io/ready-marker.js";
import { appliedResult, type PlanApplyResult, plannedResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { VERSION } from "../../version.js";
import { type BriefChange, forgetRecordsWithout, storeRecord } from "../berth/briefs.js";
import { cryptoHex, type MintedId, type RandomHex } from "../berth/identity.js";
import { createResources, describeFailure, type ResourceOwner } from "../berth/resources.js";
import { uncommittedAtFrom } from "../repo/from-ref.js";
import { openRepository } from "../repo/repository.js";
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
import { refuseRootUnderAFile, unignoredRootHint } from "./start-root.js";
import { runStartSetup, type StepFailure } from "./start-setup.js";
import { type StartRun, undoStart, undoStartRun } from "./start-undo.js";

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
  refuseRootUnderAFile(repo);
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
  // Only for a base the user named: a start from the trunk never carries the main checkout's edits.
  const leftBehind =
    options.from === undefined ? null : await uncommittedAtFrom(cwd, base, "start");
  const first = mint(taken);
  const rootHint = await unignoredRootHint(repo, first.id);
  const shape = (minted: MintedId): Identity => {
    const identity = describeIdentity(repo, base, trunkName, minted, {
      resume,
      record: recordFor(baseBranch, resume, change, ctx.now()),
      nameGiven: options.name !== undefined,
    });
    if (leftBehind !== null) identity.hints.push(leftBehind);
    if (rootHint !== null) identity.hints.push(rootHint);
    return identity;
  };
  let identity = shape(first);
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
      if (isInterrupted(ctx)) throw await undoStartRun(run, "create worktree", STOPPED);
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
  const failed =
    (await runStartSetup({ ...run, owner: ownerOfRun(run) }, hints).catch(
      (error: Error): StepFailure => ({ step: "setup", detail: error.message }),
    )) ?? (isInterrupted(ctx) ? { step: "setup", detail: STOPPED } : null);
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

/** The detail of a run a stop signal ended between two steps. */
const STOPPED = "berth stopped before its next step and undid the run";

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
      `Could not start the berth${isInterrupted(ctx) ? " (it was interrupted: Ctrl-C or a stop signal)" : ""}: ${(error as Error).message}. ${undone}`,
      { data: { steps } },
    );
  }
}
