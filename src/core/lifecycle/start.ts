import { basename, join, resolve } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { deleteRef, listRefs } from "../../git/refs.js";
import { hasCommits } from "../../git/repo.js";
import { addWorktree, removeWorktree } from "../../git/worktrees.js";
import { readAdminKeys, readGitFile } from "../../io/admin-dirs.js";
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
import { settleCheckoutIndex } from "./settle-index.js";
import { applyTeardown } from "./teardown.js";

export interface StartOptions {
  name?: string | undefined;
  from?: string | undefined;
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
  let identity = describeIdentity(
    repo,
    base,
    trunkName,
    mintFreeId(repo, taken, options.name, random),
  );
  if (options.dryRun) {
    return plannedResult("start", identity.data, identity.plan, { hints: identity.hints });
  }

  const commonDir = repo.location.commonDir;
  const run: StartRun = { repo, ctx, facts: identity.facts, base, steps: [], owner: null };

  // Under the fleet lock: what the fleet sees (checkout, branch, marker, ledger, resources).
  await withFleetLock(commonDir, "start", async () => {
    // The id is checked again here: a start running beside this one may have
    // taken its branch, folder or port since it was chosen.
    const now = await readTakenIdentities(repo, await listRefs(cwd, ["refs/heads"]));
    if (!isFreeId(repo, now, identity.data.id)) {
      identity = describeIdentity(
        repo,
        base,
        trunkName,
        mintFreeId(repo, now, options.name, random),
      );
      run.facts = identity.facts;
    }
    ctx.journal.begin({ branch: identity.data.branch, path: identity.data.path });
    await createCheckout(run, options.from ?? null);
    try {
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
  // Last, once setup has written what it writes: read-only surveys then never re-hash it.
  await settleCheckoutIndex(facts.path, ownerAdminDir(run));
  return appliedResult("start", data, plan, run.steps, { hints });
}

interface Identity {
  data: StartData;
  facts: BerthFacts;
  plan: PlanStep[];
  hints: string[];
}

/** Everything that follows from the minted id: branch, folder, port, the plan. */
function describeIdentity(
  repo: Repository,
  base: ResolvedBase,
  trunkName: string | null,
  minted: MintedId,
): Identity {
  const branch = `${repo.config.repository.branch_prefix}${minted.id}`;
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
  };
  const facts: BerthFacts = {
    id: minted.id,
    branch,
    path,
    port,
    trunk: trunkName,
    repo: repo.mainPath,
  };
  return {
    data,
    facts,
    plan: planSteps(repo, facts, base),
    hints: minted.nameNote === null ? [] : [minted.nameNote],
  };
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

function ownerAdminDir(run: StartRun): string {
  return adminDirFor(run.repo.location.commonDir, ownerOfRun(run).adminKey);
}

function ownerOfRun(run: StartRun): ResourceOwner {
  if (run.owner === null) throw new Error("start has no checkout to set up");
  return run.owner;
}

function planSteps(repo: Repository, facts: BerthFacts, base: ResolvedBase): PlanStep[] {
  const { resources, setup, env_files } = repo.config.worktree;
  const plan: PlanStep[] = [
    {
      step: "create worktree",
      target: facts.path,
      detail: `branch ${facts.branch} at ${base.commit.slice(0, 12)} (${base.name})`,
    },
    { step: "write ready marker", target: facts.branch },
  ];
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
}

async function createCheckout(run: StartRun, from: string | null): Promise<void> {
  const { repo, ctx, facts, base, steps } = run;
  const cwd = repo.location.cwd;
  try {
    await addWorktree(cwd, facts.path, facts.branch, base.commit);
    steps.push({ step: "create worktree", target: facts.path, outcome: "done" });
    const gitFile = await readGitFile(facts.path);
    if (gitFile === null) throw new Error(`git created ${facts.path} without a .git file`);
    const adminDir = resolve(facts.path, gitFile);
    await writeReadyMarker(adminDir, {
      id: facts.id,
      branch: facts.branch,
      created_at: ctx.now().toISOString(),
      berth_version: VERSION,
      from,
      from_tip: base.commit,
    });
    steps.push({ step: "write ready marker", target: facts.branch, outcome: "done" });
    run.owner = { ...facts, adminKey: basename(adminDir) };
  } catch (error) {
    const undone = await undoStart(cwd, facts.path, facts.branch, base.commit);
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
  const destroyed =
    teardown.destroyed.length > 0 ? ` (resources destroyed: ${teardown.destroyed.join(", ")})` : "";
  return new UserError(
    "precondition_failed",
    `Could not start ${facts.id}: ${failedStep} failed:\n${detail}\n` +
      `Everything this run created was undone${destroyed}: the checkout and branch are gone.${branchNote}`,
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
  branch: string,
  commit: string,
): Promise<string> {
  const problems: string[] = [];
  if (pathExistsOrBroken(path)) {
    await removeWorktree(cwd, path, true).catch((e: Error) => problems.push(e.message));
  }
  await deleteRef(cwd, `refs/heads/${branch}`, commit).catch((e: Error) => {
    // Absent is fine: git may have failed before creating the branch.
    if (!/unable to resolve|does not exist|not a valid/i.test(e.message)) problems.push(e.message);
  });
  return problems.length === 0
    ? "Nothing of it was left behind."
    : `Cleaning up the half-made berth failed too: ${problems.join("; ")}`;
}
