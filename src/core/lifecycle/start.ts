import { basename, join, resolve } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { deleteRef, listRefs } from "../../git/refs.js";
import { hasCommits } from "../../git/repo.js";
import {
  addWorktree,
  addWorktreeOnBranch,
  listWorktrees,
  removeWorktree,
} from "../../git/worktrees.js";
import { readAdminKeys, readGitFile } from "../../io/admin-dirs.js";
import { type BriefRecord, type ParkedState, readBriefRecord } from "../../io/briefs.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { withFleetLock } from "../../io/lock.js";
import { adminDirFor, worktreeRootFor } from "../../io/paths.js";
import { readReadyMarker, writeReadyMarker } from "../../io/ready-marker.js";
import {
  appliedResult,
  type PlanApplyResult,
  type PlanStep,
  plannedResult,
  type StepOutcome,
} from "../../result.js";
import { VERSION } from "../../version.js";
import {
  type BriefChange,
  forgetRecordsWithout,
  mergeRecord,
  storeRecord,
} from "../berth/briefs.js";
import type { BerthFacts } from "../berth/env.js";
import { writeEnvFiles } from "../berth/env-files.js";
import { cryptoHex, type MintedId, mintId, portFor, type RandomHex } from "../berth/identity.js";
import {
  createResources,
  describeFailure,
  ensureResources,
  type ResourceOwner,
} from "../berth/resources.js";
import { describeSetupFailure, runSetupEnsure, runSetupSteps } from "../berth/setup-steps.js";
import { type ResolvedBase, resolveBase } from "../repo/from-ref.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { detectTrunk } from "../repo/trunk.js";
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

const MAX_ID_ATTEMPTS = 32;

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
      {
        next: 'git commit --allow-empty -m "initial commit"',
      },
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
  const failed = await runStartSetup(run, hints).catch(
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
        { next: `berth worktree drop ${facts.id} --force`, nothingChanged: false },
      );
    }
    throw error;
  }
  return appliedResult("start", data, plan, run.steps, { hints });
}

interface Identity {
  data: StartData;
  facts: BerthFacts;
  plan: PlanStep[];
  hints: string[];
  /** The branch's record once started (null: none to keep). */
  record: BriefRecord | null;
}

interface IdentityContext {
  /** The parked branch this start resumes, or null for a new branch. */
  resume: BaseBranch | null;
  /** The record the new berth's branch will carry (its `branch` is set here). */
  record: BriefRecord | null;
  nameGiven: boolean;
}

/** Everything that follows from the minted id: branch, folder, port, the plan. */
function describeIdentity(
  repo: Repository,
  base: ResolvedBase,
  trunkName: string | null,
  minted: MintedId,
  context: IdentityContext,
): Identity {
  const { resume } = context;
  const branch = resume?.branch ?? `${repo.config.repository.branch_prefix}${minted.id}`;
  const record = context.record === null ? null : { ...context.record, branch };
  const path = join(worktreeRootFor(repo.mainPath, repo.config.worktree.root), minted.id);
  const port = portFor(minted.id, repo.config.worktree.port_base, repo.config.worktree.port_span);
  const data: StartData = {
    id: minted.id,
    branch,
    path,
    port,
    from: base.name,
    from_tip: base.commit,
    ...(minted.nameNote === null ? {} : { name_note: minted.nameNote }),
    ...(record?.title ? { title: record.title } : {}),
    ...(resume === null ? {} : { resumed: true as const }),
  };
  const facts: BerthFacts = {
    id: minted.id,
    branch,
    path,
    port,
    trunk: trunkName,
    repo: repo.mainPath,
  };
  const hints = minted.nameNote === null ? [] : [minted.nameNote];
  const parked = resume?.record?.parked;
  if (parked && minted.id !== parked.id) {
    hints.push(`${parked.id}'s folder or port is taken now; resumed as ${minted.id}`);
  }
  if (resume !== null && context.nameGiven && parked && minted.id === parked.id) {
    hints.push(`resuming ${branch}: it keeps its id ${parked.id}; the name given is not used`);
  }
  return {
    data,
    facts,
    plan: planSteps(repo, facts, base, resume, record),
    hints,
    record,
  };
}

/** A `--from` that names a local branch: its record, and whether a checkout holds it. */
interface BaseBranch {
  branch: string;
  record: BriefRecord | null;
  checkedOut: boolean;
}

async function readBaseBranch(repo: Repository, base: ResolvedBase): Promise<BaseBranch | null> {
  if (base.ref === null || !base.ref.startsWith("refs/heads/")) return null;
  const branch = base.ref.slice("refs/heads/".length);
  const record = readBriefRecord(repo.location.commonDir, branch);
  if (record === null) return { branch, record, checkedOut: false };
  const worktrees = await listWorktrees(repo.location.cwd);
  return { branch, record, checkedOut: worktrees.some((w) => w.branch === branch) };
}

/**
 * The record the started berth carries: what `--title`/`--brief` give, over
 * what the branch it resumes (or a branch with no checkout it starts from,
 * the way back for kept refs) carried. A berth started from a live branch (a
 * train's next stage) starts with only what it was given.
 */
function recordFor(
  baseBranch: BaseBranch | null,
  resume: BaseBranch | null,
  change: BriefChange,
  now: Date,
): BriefRecord | null {
  const carried = baseBranch !== null && !baseBranch.checkedOut ? baseBranch.record : null;
  // The branch is named once the id is known (describeIdentity); the parking ends here.
  return mergeRecord("", resume?.record ?? carried, { ...change, parked: null }, now);
}

/** A resumed berth takes its old id back when its folder and port are free; else a fresh one. */
function resumedId(
  repo: Repository,
  taken: TakenIdentities,
  parked: ParkedState,
  name: string | undefined,
  random: RandomHex,
): MintedId {
  if (isFreeForResume(repo, taken, parked.id, null)) return { id: parked.id, nameNote: null };
  return mintFreeId(repo, taken, name ?? parked.id.replace(/-[0-9a-f]{6}$/, ""), random);
}

/** Its folder and port are free, and its branch name is free or the branch being resumed. */
function isFreeForResume(
  repo: Repository,
  taken: TakenIdentities,
  id: string,
  resumedBranch: string | null,
): boolean {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const branch = `${repo.config.repository.branch_prefix}${id}`;
  const { port_base, port_span } = repo.config.worktree;
  return (
    (branch === resumedBranch || resumedBranch === null || !taken.branches.has(branch)) &&
    !taken.ports.has(portFor(id, port_base, port_span)) &&
    !pathExistsOrBroken(join(root, id))
  );
}

interface StepFailure {
  step: string;
  detail: string;
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

/** Env files, setup steps, then convergent setup (resource ensure, setup ensure); the first failure. */
async function runStartSetup(run: StartRun, hints: string[]): Promise<StepFailure | null> {
  const { repo, ctx, facts, steps } = run;
  const env = await writeEnvFiles(repo, facts);
  for (const file of env.written)
    steps.push({ step: "write env file", target: file, outcome: "done" });
  for (const { file, reason } of env.skipped) {
    steps.push({ step: "write env file", target: file, outcome: "skipped", reason });
    hints.push(`env file ${file} left alone: ${reason}`);
  }
  if (env.missing.length > 0) {
    hints.push(`inherit_env: no env file of the main checkout defines ${env.missing.join(", ")}`);
  }

  const setupSteps = await runSetupSteps(repo, ctx, facts);
  for (const command of setupSteps.ran) {
    steps.push({ step: "run setup step", target: command, outcome: "done" });
  }
  if (setupSteps.failure) {
    const detail = describeSetupFailure(setupSteps.failure);
    steps.push({
      step: "run setup step",
      target: setupSteps.failure.command,
      outcome: "failed",
      reason: detail,
    });
    return { step: setupSteps.failure.step, detail };
  }

  const ensured = await ensureResources(repo, ctx, ownerOfRun(run), { createMissing: false });
  for (const name of ensured.ensured) {
    steps.push({ step: "ensure resource", target: name, outcome: "done" });
  }
  hints.push(...ensured.warnings);
  if (ensured.failure) {
    const detail = describeFailure(ensured.failure);
    steps.push({
      step: "ensure resource",
      target: ensured.failure.resource,
      outcome: "failed",
      reason: detail,
    });
    return { step: `ensure resource ${ensured.failure.resource}`, detail };
  }

  const setupEnsure = await runSetupEnsure(repo, ctx, facts);
  for (const command of setupEnsure.ran) {
    steps.push({ step: "run setup ensure", target: command, outcome: "done" });
  }
  if (setupEnsure.failure) {
    const detail = describeSetupFailure(setupEnsure.failure);
    steps.push({
      step: "run setup ensure",
      target: setupEnsure.failure.command,
      outcome: "failed",
      reason: detail,
    });
    return { step: setupEnsure.failure.step, detail };
  }
  return null;
}

function ownerOfRun(run: StartRun): ResourceOwner {
  if (run.owner === null) throw new Error("start has no checkout to set up");
  return run.owner;
}

function planSteps(
  repo: Repository,
  facts: BerthFacts,
  base: ResolvedBase,
  resume: BaseBranch | null,
  record: BriefRecord | null,
): PlanStep[] {
  const { resources, setup, env_files } = repo.config.worktree;
  const parkedAt = resume?.record?.parked?.at;
  const plan: PlanStep[] = [
    resume === null
      ? {
          step: "create worktree",
          target: facts.path,
          detail: `branch ${facts.branch} at ${base.commit.slice(0, 12)} (${base.name})`,
        }
      : {
          step: "resume worktree",
          target: facts.path,
          detail: `parked branch ${facts.branch} at ${base.commit.slice(0, 12)}${parkedAt ? ` (parked ${parkedAt})` : ""}`,
        },
    { step: "write ready marker", target: facts.branch },
  ];
  if (record !== null) {
    plan.push({
      step: "write brief record",
      target: facts.branch,
      detail: record.title === null ? "its brief" : `title "${record.title}"`,
    });
  }
  for (const resource of resources) {
    plan.push({
      step: "create resource",
      target: resource.name,
      detail: resource.required ? "required" : "optional: a failure only warns",
    });
  }
  if (env_files.length > 0) {
    plan.push({
      step: "write env files",
      target: env_files.join(", "),
      detail: "those git ignores",
    });
  }
  for (const command of setup.steps) plan.push({ step: "run setup step", target: command });
  for (const resource of resources) {
    if (resource.ensure.trim() !== "")
      plan.push({ step: "ensure resource", target: resource.name });
  }
  for (const command of setup.ensure) plan.push({ step: "run setup ensure", target: command });
  return plan;
}

/** What one `start` has made so far, so a failure undoes exactly that. */
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
  /** The branch's record before this run wrote it, restored by an undo. */
  recordBefore: BriefRecord | null;
  recordWritten?: boolean;
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
      steps.push({ step: "create worktree", target: facts.path, outcome: "done" });
    } else {
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
    const undone = await undoStart(cwd, facts.path, run.resumed ? null : facts.branch, base.commit);
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
        `The berth is kept at ${facts.path} and still owns its remaining resources.`,
      {
        next: `fix the failing command in berth.toml, then berth worktree drop ${facts.id} --force`,
        data,
        nothingChanged: false,
      },
    );
  }
  let branchNote = "";
  if (!run.resumed) {
    try {
      await deleteRef(repo.location.cwd, `refs/heads/${facts.branch}`, base.commit);
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
      `Everything this run created was undone${destroyed}: ${gone}${branchNote}`,
    { next: "fix the failing command in berth.toml, then berth start again", data },
  );
}

async function chooseBase(
  repo: Repository,
  refs: Awaited<ReturnType<typeof listRefs>>,
  from: string | undefined,
): Promise<ResolvedBase> {
  if (from !== undefined) return resolveBase(repo.location.cwd, from, refs);
  const trunk = detectTrunk(repo.config, refs);
  if (trunk.name === null || trunk.tip === null) {
    const what =
      trunk.name === null
        ? "No trunk was found (no origin/HEAD, main or master)"
        : `The trunk branch "${trunk.name}" does not exist`;
    throw new UserError("precondition_failed", `${what}; nothing changed.`, {
      next: "berth start <name> --from <ref>, or set [repository].trunk in berth.toml",
    });
  }
  // By name: the trunk's own tip, whatever the calling checkout has checked out.
  return { name: trunk.name, ref: `refs/heads/${trunk.name}`, commit: trunk.tip };
}

interface TakenIdentities {
  branches: Set<string>;
  ports: Set<number>;
}

/** Branches and the ports of live berths: an id colliding with either is re-rolled. */
async function readTakenIdentities(
  repo: Repository,
  refs: Awaited<ReturnType<typeof listRefs>>,
): Promise<TakenIdentities> {
  const branches = new Set(
    refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => r.ref.slice(11)),
  );
  const keys = await readAdminKeys(repo.location.commonDir);
  const markers = await Promise.all(
    [...keys.values()].map((key) => readReadyMarker(adminDirFor(repo.location.commonDir, key))),
  );
  const { port_base, port_span } = repo.config.worktree;
  const ports = new Set(markers.flatMap((m) => (m ? [portFor(m.id, port_base, port_span)] : [])));
  return { branches, ports };
}

function mintFreeId(
  repo: Repository,
  taken: TakenIdentities,
  name: string | undefined,
  random: RandomHex,
): MintedId {
  for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
    const minted = mintId(name, random);
    if (isFreeId(repo, taken, minted.id)) return minted;
  }
  throw new UserError(
    "precondition_failed",
    `Could not find a free id after ${MAX_ID_ATTEMPTS} tries; the port band may be full.`,
    { next: "raise [worktree].port_span in berth.toml, or prune the fleet: berth worktree prune" },
  );
}

/** Its branch, folder and port are held by no live sibling. */
function isFreeId(repo: Repository, taken: TakenIdentities, id: string): boolean {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const { branch_prefix } = repo.config.repository;
  const { port_base, port_span } = repo.config.worktree;
  return (
    !taken.branches.has(`${branch_prefix}${id}`) &&
    !taken.ports.has(portFor(id, port_base, port_span)) &&
    !pathExistsOrBroken(join(root, id))
  );
}

/**
 * Undoes only what this run created, newest first, and says what it did.
 * `git worktree add` can fail after registering the checkout (a failing
 * post-checkout hook), so the folder is checked, not the step list: it did not
 * exist before this run (the id was minted against it).
 */
async function undoStart(
  cwd: string,
  path: string,
  /** null: the branch existed before this run (a resume) and is never deleted. */
  branch: string | null,
  commit: string,
): Promise<string> {
  const problems: string[] = [];
  if (pathExistsOrBroken(path)) {
    await removeWorktree(cwd, path, true).catch((e: Error) => problems.push(e.message));
  }
  if (branch !== null) {
    await deleteRef(cwd, `refs/heads/${branch}`, commit).catch((e: Error) => {
      // Absent is fine: git may have failed before creating the branch.
      if (!/unable to resolve|does not exist|not a valid/i.test(e.message))
        problems.push(e.message);
    });
  }
  return problems.length === 0
    ? "Nothing of it was left behind."
    : `Cleaning up the half-made berth failed too: ${problems.join("; ")}`;
}
