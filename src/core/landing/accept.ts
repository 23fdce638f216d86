import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { listCommitsNotIn } from "../../git/commits.js";
import { listIgnoredPaths } from "../../git/ignored.js";
import type { CommitSubject, StatusSummary } from "../../git/parse.js";
import { deleteRef, moveRef, resolveCommit } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { listWorktrees } from "../../git/worktrees.js";
import { type DiskUsage, formatBytes, measurePaths } from "../../io/disk-usage.js";
import { withFleetLock } from "../../io/lock.js";
import { readReceipt } from "../../io/receipt-file.js";
import {
  deleteLandingRecord,
  type LandingRecord,
  readLandingRecords,
  writeLandingRecord,
} from "../../io/unfinished-landing.js";
import type { PlanStep, StepOutcome, VerbResult } from "../../result.js";
import { shellQuote, shortOid } from "../../text.js";
import { readOwnedEntries } from "../berth/resources.js";
import { readReceiptView } from "../fleet/receipt-state.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { applyTeardown, type TeardownTarget, teardownTargetOf } from "../lifecycle/teardown.js";
import { resolveTarget } from "../repo/berth-target.js";
import { requireTrunk } from "../repo/checkout.js";
import { openRepository, type Repository } from "../repo/repository.js";
import {
  applyGate,
  type GateData,
  type GateOptions,
  gateData,
  gateError,
  NO_CHECKS_LABEL,
  planGate,
} from "./gate.js";
import {
  type FollowBlocker,
  followBlocker,
  followState,
  followTrunk,
  trunkHolders,
} from "./main-checkout-follow.js";

/**
 * `berth accept [<berth>]` (spec sections 5 and 9): the only verb that moves
 * the trunk. Plan (reads only, every refusal), validate (an honored receipt
 * for the tip, or the gate run now on that exact commit), then under the
 * fleet lock: re-check, write a landing record, compare-and-swap the trunk
 * from its planned tip to the validated commit, bring the main checkout's
 * files along when it has the trunk checked out, tear the berth down, and
 * delete its branch by compare-and-swap on the landed commit.
 *
 * A run that stops after the trunk moved returns `partial`; `berth accept`
 * again (naming the berth or its branch) plans only what is left: a berth
 * whose tip is already on the trunk is finished, never landed twice.
 */

export type ValidatedBy = "receipt" | "gate" | "trunk";

export interface LandingFlags {
  trunk_landed: boolean;
  /** null when the main checkout does not have the trunk checked out. */
  main_checkout_updated: boolean | null;
  resources_destroyed: boolean;
  worktree_removed: boolean;
  branch_deleted: boolean;
}

/** Another branch whose commits this landing brings onto the trunk (an earlier stage). */
export interface LandingStage {
  branch: string;
  tip: string;
  /** The checkout holding it, or null for a kept ref. */
  path: string | null;
}

export interface AcceptData {
  id: string;
  branch: string;
  /** The berth's checkout; null when none holds the branch any more. */
  path: string | null;
  /**
   * The commit that lands and what proves it: an honored receipt, the gate
   * run by this accept, or "trunk" when it was already on the trunk (an
   * earlier accept landed it and this run finishes the job).
   */
  validated: { commit: string; by: ValidatedBy; checks: number | null };
  /** The trunk's move: `old` → `new` (equal when this run only finishes). */
  trunk: { name: string; old: string; new: string };
  /** Commits landing, newest first (at most MAX_COMMITS listed), and how many in all. */
  commits: CommitSubject[];
  commit_count: number;
  stages: LandingStage[];
  main_checkout: { path: string; follows_trunk: boolean };
  /** Recorded resources, in the order the teardown destroys them. */
  resources: string[];
  /** Ignored files that go with the checkout; null when there is no checkout. */
  ignored: DiskUsage | null;
  /** The branch deleted after the teardown, or null when berth keeps it. */
  delete_branch: string | null;
  /** This run finishes an earlier landing. */
  resumed: boolean;
  landing: LandingFlags;
  destroyed: string[];
  /** The gate this accept ran; null when a receipt proved the tip (or in a dry run). */
  gate: GateData | null;
}

export interface AcceptPlan {
  repo: Repository;
  /** land: validate, move the trunk, tear down. finish: it already landed; the rest remains. */
  mode: "land" | "finish";
  data: AcceptData;
  steps: PlanStep[];
  hints: string[];
  /** The berth's checkout to tear down; null when no checkout holds the branch. */
  teardown: TeardownTarget | null;
  adminDir: string | null;
  /** The tip's tree an honored receipt proves (land mode, by receipt). */
  provenTree: string | null;
  /** Finish: the landing being finished, when recorded. */
  record: LandingRecord | null;
  /** Finish: the main checkout's files have still to follow the trunk from `record.old`. */
  followPending: boolean;
  /** The tip the branch is deleted at (compare-and-swap). */
  branchTip: string | null;
  isCurrent: boolean;
}

export interface AcceptOptions {
  /** A berth id, path or branch; default the checkout berth runs in. */
  target?: string | undefined;
}

const MAX_COMMITS = 200;

type Subject =
  | { kind: "worktree"; worktree: WorktreeFacts }
  | { kind: "branch"; branch: string; tip: string }
  | { kind: "record"; record: LandingRecord };

/** Reads only. Throws every refusal of the spec before anything changes. */
export async function planAccept(ctx: Context, options: AcceptOptions): Promise<AcceptPlan> {
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const trunk = requireTrunk(
    survey.trunk,
    "there is nothing to land on",
    `set [repository].trunk in ${repo.config.file ?? "berth.toml"}`,
  );
  const records = await readLandingRecords(repo.location.commonDir);
  const subject = resolveSubject(survey, repo, options.target, records);
  const context: PlanContext = { repo, survey, trunk, records };
  switch (subject.kind) {
    case "worktree":
      return planForWorktree(context, subject.worktree);
    case "branch":
      return planForBranch(context, subject.branch, subject.tip);
    case "record":
      return planForRecord(context, subject.record);
  }
}

interface PlanContext {
  repo: Repository;
  survey: FleetSurvey;
  trunk: { name: string; tip: string };
  records: LandingRecord[];
}

/**
 * `<berth>` as `resolveTarget` reads it; when no checkout matches, a local
 * branch (a berth whose checkout a partial accept already removed), then an
 * unfinished landing record (its branch is gone too).
 */
function resolveSubject(
  survey: FleetSurvey,
  repo: Repository,
  argument: string | undefined,
  records: readonly LandingRecord[],
): Subject {
  if (argument === undefined) {
    const current = survey.worktrees.find((w) => w.isCurrent);
    if (current === undefined || current.isMain) {
      throw new UserError(
        "precondition_failed",
        `berth accept lands the berth you are in, and this is ${current ? "the main checkout" : "not a checkout of this repository"}.`,
        { next: "berth accept <berth> (berth status lists them)" },
      );
    }
    return { kind: "worktree", worktree: current };
  }
  try {
    return {
      kind: "worktree",
      worktree: resolveTarget(survey, repo.location.cwd, argument, "accept"),
    };
  } catch (error) {
    if (!(error instanceof UserError) || error.code !== "unknown_target") throw error;
    const name = argument.replace(/^refs\/heads\//, "");
    const prefixed = `${repo.config.repository.branch_prefix}${name}`;
    for (const branch of [name, prefixed]) {
      const tip = survey.branches.get(branch);
      if (tip !== undefined && branch !== survey.trunk.name) return { kind: "branch", branch, tip };
    }
    const record = records.find((r) => r.branch === name || r.branch === prefixed || r.id === name);
    if (record !== undefined) return { kind: "record", record };
    throw error;
  }
}

async function planForWorktree(pc: PlanContext, w: WorktreeFacts): Promise<AcceptPlan> {
  const { repo, survey, trunk } = pc;
  const { entry } = w;
  const name = w.marker?.id ?? entry.path;
  if (w.isMain) {
    throw refusal(`${entry.path} is the main checkout; berth accept lands a berth.`, {
      next: "berth accept <berth> (berth status lists them)",
    });
  }
  if (entry.prunable) {
    throw refusal(
      `${name}'s checkout folder is gone (${entry.path}); there is nothing to validate.`,
      { next: "berth worktree prune" },
    );
  }
  const target = teardownTargetOf(w);
  if (target === null || w.marker === null || w.adminDir === null) {
    throw refusal(`${entry.path} has no berth ready marker: berth did not create it.`, {
      next: "land it with git yourself, or work in a berth (berth start <name>)",
    });
  }
  if (entry.locked) {
    throw refusal(
      `${name} is locked${entry.lockReason ? ` (${entry.lockReason})` : ""}; accept would tear it down, and berth never removes a locked worktree.`,
      { next: `git worktree unlock ${shellQuote(entry.path)}, then berth accept ${name}` },
    );
  }
  const branch = entry.branch;
  const head = entry.head;
  if (branch === null || head === null || entry.detached) {
    throw refusal(`${name} is not on a branch with commits (detached or unborn HEAD).`, {
      next: `git -C ${shellQuote(entry.path)} switch ${w.marker.branch}`,
    });
  }
  if (branch !== w.marker.branch) {
    throw refusal(`${name} has ${branch} checked out, not its berth branch ${w.marker.branch}.`, {
      next: `git -C ${shellQuote(entry.path)} switch ${w.marker.branch}`,
    });
  }
  const status = await readWorktreeStatus(entry.path).catch(() => null);
  if (status === null) {
    throw refusal(`git cannot read ${entry.path}; unknown never counts as clean.`, {
      next: `git -C ${shellQuote(entry.path)} status`,
    });
  }
  if (status.changedFiles > 0) {
    const shown = status.paths.slice(0, 5).join(", ");
    const more = status.paths.length > 5 ? ` and ${status.paths.length - 5} more` : "";
    const untracked = status.untrackedFiles > 0 ? ` (${status.untrackedFiles} untracked)` : "";
    throw refusal(
      `${name} has ${status.changedFiles} uncommitted change(s)${untracked}: ${shown}${more}. ` +
        "Accept lands a commit and tears the checkout down, so the tree must be clean (untracked files count).",
      { next: `commit or stash them (git stash -u), then berth accept ${name}` },
    );
  }

  const record = pc.records.find((r) => r.id === w.marker?.id || r.path === entry.path) ?? null;
  if (survey.ancestry.isAncestor(head, trunk.tip)) {
    const recordLanded = record !== null && (await onTrunk(repo, record.new, trunk.tip));
    if (!w.landed && !recordLanded) {
      throw refusal(
        `${name} has nothing to land: its tip ${shortOid(head)} is already on ${trunk.name} and it has no commits of its own.`,
        { next: `berth worktree drop ${name} (to discard the berth)` },
      );
    }
    return planFinish(pc, {
      id: w.marker.id,
      branch,
      tip: head,
      worktree: w,
      target,
      record: recordLanded ? record : null,
    });
  }
  if (!survey.ancestry.isAncestor(trunk.tip, head)) {
    throw refusal(
      `${branch} does not contain the tip of ${trunk.name} (${shortOid(trunk.tip)}): ` +
        `the trunk only moves by fast-forward, so the berth must contain it first.`,
      { next: "berth update" },
    );
  }
  return planLand(pc, { w, adminDir: w.adminDir, target, status, head, branch });
}

interface LandSubject {
  w: WorktreeFacts;
  adminDir: string;
  target: TeardownTarget;
  status: StatusSummary;
  head: string;
  branch: string;
}

async function planLand(pc: PlanContext, subject: LandSubject): Promise<AcceptPlan> {
  const { w, adminDir, target, status, head, branch } = subject;
  const { repo, survey, trunk } = pc;
  const main = repo.mainPath;
  const holders = trunkHolders(
    survey.worktrees.map((x) => x.entry),
    trunk.name,
    repo,
  );
  const [linked] = holders.linked;
  if (linked !== undefined) {
    throw refusal(
      `${trunk.name} is checked out in ${linked}, a linked worktree: moving it there would leave that checkout's files behind. ` +
        "berth moves the trunk only under the main checkout.",
      {
        next: `git -C ${shellQuote(linked)} switch --detach (or another branch), then berth accept ${target.id}`,
      },
    );
  }
  if (holders.mainFollows) {
    const blocker = await followBlocker(main, trunk.tip, head);
    if (blocker !== null) throw followRefusal(main, trunk.name, blocker, target.id);
  }

  const receipt = await readReceiptView(repo.location.cwd, { ...w, status, readable: true });
  const honored = receipt.state === "honored" && receipt.receipt !== null;
  const checks = honored ? (receipt.receipt?.checks.length ?? 0) : repo.config.gate.checks.length;
  const [commits, resources, ignored] = await Promise.all([
    listCommitsNotIn(main, head, trunk.tip, MAX_COMMITS),
    ownedResources(repo, target),
    ignoredIn(w.entry.path),
  ]);
  const prefix = repo.config.repository.branch_prefix;
  const deleteBranch = branch.startsWith(prefix) ? branch : null;
  const hints = [...resources.hints];
  if (deleteBranch === null) hints.push(`branch ${branch} is not under ${prefix}; berth keeps it`);
  if (honored && checks === 0) {
    hints.push(`the receipt says ${NO_CHECKS_LABEL}: it proves a clean tree and nothing more`);
  }
  const data: AcceptData = {
    id: target.id,
    branch,
    path: w.entry.path,
    validated: { commit: head, by: honored ? "receipt" : "gate", checks },
    trunk: { name: trunk.name, old: trunk.tip, new: head },
    commits,
    commit_count: w.ahead ?? commits.length,
    stages: landingStages(survey, branch, head, trunk.tip),
    main_checkout: { path: main, follows_trunk: holders.mainFollows },
    resources: resources.names,
    ignored,
    delete_branch: deleteBranch,
    resumed: false,
    landing: {
      trunk_landed: false,
      main_checkout_updated: holders.mainFollows ? false : null,
      resources_destroyed: false,
      worktree_removed: false,
      branch_deleted: false,
    },
    destroyed: [],
    gate: null,
  };
  const steps: PlanStep[] = [
    {
      step: "validate",
      target: head,
      detail: honored
        ? `honored gate receipt (${checks === 0 ? NO_CHECKS_LABEL : `${checks} check(s)`})`
        : `run the gate now on this commit (${checks === 0 ? NO_CHECKS_LABEL : `${checks} check(s)`})`,
    },
    {
      step: "move trunk",
      target: trunk.name,
      detail: `${trunk.tip} -> ${head} (fast-forward, ${data.commit_count} commit(s))`,
    },
    ...teardownSteps(data),
  ];
  return {
    repo,
    mode: "land",
    data,
    steps,
    hints,
    teardown: target,
    adminDir,
    provenTree: honored ? (receipt.receipt?.tree ?? null) : null,
    // An older record of this berth (its landing never happened) is replaced before the trunk moves.
    record: null,
    followPending: false,
    branchTip: head,
    isCurrent: w.isCurrent,
  };
}

interface FinishSubject {
  id: string;
  branch: string | null;
  tip: string | null;
  worktree: WorktreeFacts | null;
  target: TeardownTarget | null;
  record: LandingRecord | null;
}

/** What is left of a landing: the main checkout's files, the teardown, the branch. */
async function planFinish(pc: PlanContext, subject: FinishSubject): Promise<AcceptPlan> {
  const { repo, survey, trunk } = pc;
  const { record, worktree, target } = subject;
  const main = repo.mainPath;
  const hints: string[] = [];
  let followPending = false;
  if (record?.main_checkout != null) {
    const mainEntry = survey.worktrees[0]?.entry;
    if (mainEntry?.branch === record.trunk) {
      const state = await followState(main, record.old, trunk.tip);
      followPending = state === "pending";
      if (state === "unknown") {
        hints.push(
          `the main checkout's index matches neither ${shortOid(record.old)} nor ${trunk.name}; check git status there`,
        );
      }
    }
  }
  const prefix = repo.config.repository.branch_prefix;
  const branch = subject.branch;
  const deleteBranch = branch?.startsWith(prefix) ? branch : null;
  if (branch !== null && deleteBranch === null) {
    hints.push(`branch ${branch} is not under ${prefix}; berth keeps it`);
  }
  const resources = target === null ? { names: [], hints: [] } : await ownedResources(repo, target);
  hints.push(...resources.hints);
  const ignored = worktree === null ? null : await ignoredIn(worktree.entry.path);
  const commit = subject.tip ?? record?.new ?? trunk.tip;
  const data: AcceptData = {
    id: subject.id,
    branch: branch ?? record?.branch ?? subject.id,
    path: worktree?.entry.path ?? null,
    validated: { commit, by: record?.validated_by ?? "trunk", checks: null },
    trunk: { name: trunk.name, old: record?.old ?? trunk.tip, new: record?.new ?? trunk.tip },
    commits: [],
    commit_count: 0,
    stages: [],
    main_checkout: { path: main, follows_trunk: record?.main_checkout != null },
    resources: resources.names,
    ignored,
    delete_branch: deleteBranch,
    resumed: true,
    landing: {
      trunk_landed: true,
      main_checkout_updated: record?.main_checkout != null ? !followPending : null,
      resources_destroyed: target === null,
      worktree_removed: target === null,
      branch_deleted: branch === null,
    },
    destroyed: [],
    gate: null,
  };
  const steps: PlanStep[] = [];
  if (followPending) {
    steps.push({
      step: "update main checkout",
      target: main,
      detail: `its files follow ${trunk.name} from ${record?.old} to ${trunk.tip}`,
    });
  }
  steps.push(...teardownSteps(data, { followStep: false }));
  return {
    repo,
    mode: "finish",
    data,
    steps,
    hints,
    teardown: target,
    adminDir: worktree?.adminDir ?? null,
    provenTree: null,
    record,
    followPending,
    branchTip: subject.tip,
    isCurrent: worktree?.isCurrent ?? false,
  };
}

/** A branch no checkout holds: finish it when it landed, else point at a checkout that can land it. */
async function planForBranch(pc: PlanContext, branch: string, tip: string): Promise<AcceptPlan> {
  const { repo, survey, trunk } = pc;
  const record = pc.records.find((r) => r.branch === branch) ?? null;
  const prefix = repo.config.repository.branch_prefix;
  if (!survey.ancestry.isAncestor(tip, trunk.tip)) {
    const container = nearestCheckoutContaining(survey, branch, tip);
    throw new UserError(
      "unknown_target",
      `No checkout holds ${branch}, and its tip ${shortOid(tip)} is not on ${trunk.name}: accept validates and lands from a berth's checkout.` +
        (container ? ` ${container} holds its commits and can land them.` : ""),
      {
        next: container ? `berth accept ${container}` : `berth start --from ${branch}`,
        data: { branch, tip, container },
      },
    );
  }
  if (!branch.startsWith(prefix)) {
    throw refusal(
      `${branch} is already on ${trunk.name} and is not under ${prefix}; berth has nothing to finish for it.`,
      { next: "berth status" },
    );
  }
  const recordLanded = record !== null && (await onTrunk(repo, record.new, trunk.tip));
  return planFinish(pc, {
    id: record?.id ?? branch.slice(prefix.length),
    branch,
    tip,
    worktree: null,
    target: null,
    record: recordLanded ? record : null,
  });
}

/** Only a landing record is left (branch and checkout gone): finish what it says is left. */
async function planForRecord(pc: PlanContext, record: LandingRecord): Promise<AcceptPlan> {
  if (!(await onTrunk(pc.repo, record.new, pc.trunk.tip))) {
    throw new UserError(
      "unknown_target",
      `${record.branch} is gone, and its landing record says ${shortOid(record.new)} landed, which is not on ${pc.trunk.name}.`,
      { next: "berth status" },
    );
  }
  return planFinish(pc, {
    id: record.id,
    branch: null,
    tip: null,
    worktree: null,
    target: null,
    record,
  });
}

function teardownSteps(data: AcceptData, options = { followStep: true }): PlanStep[] {
  const steps: PlanStep[] = [];
  if (options.followStep && data.main_checkout.follows_trunk) {
    steps.push({
      step: "update main checkout",
      target: data.main_checkout.path,
      detail: `its files follow ${data.trunk.name} to ${data.trunk.new}`,
    });
  }
  for (const resource of data.resources) steps.push({ step: "destroy resource", target: resource });
  if (data.path !== null && !data.landing.worktree_removed) {
    steps.push({
      step: "remove worktree",
      target: data.path,
      detail: data.ignored
        ? `${data.ignored.files} ignored file(s), ${formatBytes(data.ignored.bytes)}, go with it`
        : "",
    });
  }
  if (data.delete_branch !== null && !data.landing.branch_deleted) {
    steps.push({
      step: "delete branch",
      target: data.delete_branch,
      detail: `at ${data.validated.commit}`,
    });
  }
  return steps;
}

export interface AcceptApplyOptions {
  /** Aborting stops a running gate (an interrupt). */
  signal?: AbortSignal | undefined;
  onEvent?: GateOptions["onEvent"];
}

/**
 * Applies a plan. Validation (the gate, which may be long) runs before the
 * fleet lock is taken; everything from the re-check to the branch deletion
 * runs under it. Refusals before the trunk moves throw (nothing landed);
 * afterwards every failure is a `partial` result naming what is left.
 */
export async function applyAccept(
  ctx: Context,
  plan: AcceptPlan,
  options: AcceptApplyOptions = {},
): Promise<VerbResult<AcceptData>> {
  const { repo, data } = plan;
  ctx.journal.begin({ branch: data.branch, path: data.path });
  const steps: StepOutcome[] = [];
  const hints = [...plan.hints];
  if (plan.mode === "land") {
    const refused = await validate(ctx, plan, steps, options);
    if (refused !== null) return { ...refused, hints };
  }
  const problems = await withFleetLock(repo.location.commonDir, "accept", async () => {
    const found: string[] = [];
    try {
      if (plan.mode === "land") {
        const followFailure = await landUnderLock(ctx, plan, steps);
        if (followFailure !== null) found.push(followFailure);
      } else if (plan.followPending) {
        const followFailure = await finishFollow(plan, steps);
        if (followFailure !== null) found.push(followFailure);
      }
      const teardownFailure = await tearDownAndDelete(ctx, plan, steps);
      if (teardownFailure !== null) found.push(teardownFailure);
      if (found.length === 0) await deleteLandingRecord(repo.location.commonDir, data.id);
    } catch (error) {
      // Before the trunk moved, a refusal is a refusal; after it, whatever
      // went wrong leaves work for the next `berth accept`, never a bare crash.
      if (!data.landing.trunk_landed) throw error;
      found.push(`unexpected failure: ${(error as Error).message}`);
    }
    return found;
  });

  if (data.stages.length > 0) {
    const withCheckout = data.stages.filter((s) => s.path !== null).length;
    hints.push(
      `earlier stages landed with it: ${data.stages.map((s) => s.branch).join(", ")}` +
        (withCheckout > 0 ? "; berth worktree prune clears their checkouts and branches" : ""),
    );
  }
  if (plan.isCurrent && data.landing.worktree_removed) {
    hints.push(`you were inside ${data.path}; cd ${repo.mainPath}`);
  }
  const result: VerbResult<AcceptData> = {
    ok: problems.length === 0,
    verb: "accept",
    data,
    plan: { steps: plan.steps },
    steps,
    hints,
  };
  if (problems.length > 0) {
    result.error = {
      code: "partial",
      message:
        `${data.trunk.name} is at ${shortOid(data.validated.commit)}: ${data.branch} has landed, ` +
        `but not everything after it finished.\n${problems.join("\n")}\n` +
        `Still to do: ${remainingWork(data).join(", ")}.`,
      next: `berth accept ${data.branch}`,
    };
  }
  return result;
}

/** The proof, before the lock: an honored receipt was planned, or the gate runs now. */
async function validate(
  ctx: Context,
  plan: AcceptPlan,
  steps: StepOutcome[],
  options: AcceptApplyOptions,
): Promise<VerbResult<AcceptData> | null> {
  const { repo, data } = plan;
  const commit = data.validated.commit;
  if (data.validated.by === "receipt") {
    steps.push({ step: "validate", target: commit, outcome: "done", reason: "honored receipt" });
    return null;
  }
  if (data.path === null || plan.adminDir === null) throw new Error("land plan without a checkout");
  const gatePlan = await planGate(repo, { path: data.path, adminDir: plan.adminDir });
  if (gatePlan.commit !== commit || gatePlan.branch !== data.branch) {
    throw new UserError(
      "moved",
      `${data.id} moved since the plan (${data.branch} at ${shortOid(commit)}, now ${gatePlan.branch} at ${shortOid(gatePlan.commit)}); nothing was gated, landed or torn down.`,
      { next: `berth accept ${data.id}`, data },
    );
  }
  const applied = await applyGate(ctx, repo, gatePlan, options);
  data.gate = gateData(gatePlan, applied.runs, applied);
  const error = gateError(gatePlan, applied, data.gate.failures);
  steps.push({
    step: "validate",
    target: commit,
    outcome: error === null ? "done" : "failed",
    reason: error === null ? "the gate is green" : error.message,
  });
  if (error === null) {
    plan.provenTree = gatePlan.tree;
    return null;
  }
  return {
    ok: false,
    verb: "accept",
    data,
    plan: { steps: plan.steps },
    steps,
    hints: [],
    error: {
      code: error.code,
      message: `${error.message} Nothing landed: ${data.trunk.name}, the berth and its branch are unchanged.`,
      next: error.next,
    },
  };
}

/**
 * Re-checks what the plan assumed, writes the landing record, moves the
 * trunk by compare-and-swap and brings the main checkout along. Throws while
 * nothing has landed; returns why the main checkout did not follow (or null).
 */
async function landUnderLock(
  ctx: Context,
  plan: AcceptPlan,
  steps: StepOutcome[],
): Promise<string | null> {
  const { repo, data } = plan;
  const main = repo.mainPath;
  const commit = data.validated.commit;
  const old = data.trunk.old;
  const trunkRef = `refs/heads/${data.trunk.name}`;
  const nothing = "nothing was landed or torn down";
  // A gate run by this accept has written its receipt; otherwise nothing changed at all.
  const nothingChanged = data.validated.by === "receipt";
  const changed = (what: string) =>
    new UserError("moved", `${data.id} ${what} since the plan; ${nothing}.`, {
      next: `berth accept ${data.id}`,
      data,
      nothingChanged,
    });

  const [entries, trunkTip, branchTip] = await Promise.all([
    listWorktrees(main),
    resolveCommit(main, trunkRef),
    resolveCommit(main, `refs/heads/${data.branch}`),
  ]);
  const entry = entries.find((e) => e.path === data.path);
  if (entry === undefined) throw changed("is no longer registered with git");
  if (entry.locked) {
    throw refusal(`${data.id} was locked since the plan; ${nothing}.`, {
      next: `git worktree unlock ${shellQuote(entry.path)}, then berth accept ${data.id}`,
      nothingChanged,
    });
  }
  if (entry.head !== commit || entry.branch !== data.branch || branchTip !== commit) {
    throw changed(`moved (it is at ${entry.head ? shortOid(entry.head) : "nothing"})`);
  }
  const status = await readWorktreeStatus(entry.path).catch(() => null);
  if (status === null || status.changedFiles > 0) {
    throw refusal(`${data.id} has uncommitted changes since the plan; ${nothing}.`, {
      next: `commit or stash them (git stash -u), then berth accept ${data.id}`,
      data,
      nothingChanged,
    });
  }
  const receipt = plan.adminDir === null ? null : await readReceipt(plan.adminDir);
  if (receipt === null || receipt.tree !== plan.provenTree) {
    throw refusal(`${data.id}'s gate receipt changed since the plan; ${nothing}.`, {
      next: `berth accept ${data.id} (validates again)`,
      data,
      nothingChanged,
    });
  }
  if (trunkTip !== old) {
    throw new UserError(
      "moved",
      `${data.trunk.name} moved since the plan (from ${shortOid(old)} to ${trunkTip ? shortOid(trunkTip) : "nothing"}); ${nothing}, and the trunk was left where it is.`,
      { next: `berth update, then berth accept ${data.id}`, data, nothingChanged },
    );
  }
  const holders = trunkHolders(entries, data.trunk.name, repo);
  const [linked] = holders.linked;
  if (linked !== undefined) {
    throw refusal(`${data.trunk.name} is checked out in ${linked} since the plan; ${nothing}.`, {
      next: `git -C ${shellQuote(linked)} switch --detach, then berth accept ${data.id}`,
      nothingChanged,
    });
  }
  data.main_checkout.follows_trunk = holders.mainFollows;
  data.landing.main_checkout_updated = holders.mainFollows ? false : null;
  if (holders.mainFollows) {
    const blocker = await followBlocker(main, old, commit);
    if (blocker !== null)
      throw followRefusal(main, data.trunk.name, blocker, data.id, nothingChanged);
  }

  // Durable before the trunk moves: a run that stops after this knows what landed.
  await writeLandingRecord(repo.location.commonDir, {
    version: 1,
    id: data.id,
    branch: data.branch,
    path: entry.path,
    trunk: data.trunk.name,
    old,
    new: commit,
    validated_by: data.validated.by === "gate" ? "gate" : "receipt",
    main_checkout: holders.mainFollows ? main : null,
    created_at: ctx.now().toISOString(),
  });
  try {
    await moveRef(main, trunkRef, commit, old, `berth accept ${data.id}`);
  } catch (error) {
    await deleteLandingRecord(repo.location.commonDir, data.id);
    const now = await resolveCommit(main, trunkRef);
    steps.push({
      step: "move trunk",
      target: data.trunk.name,
      outcome: "failed",
      reason: (error as Error).message,
    });
    if (now !== old) {
      throw new UserError(
        "moved",
        `${data.trunk.name} moved while landing (it is at ${now ? shortOid(now) : "nothing"}, not ${shortOid(old)}); ${nothing}, and the trunk was left where it is.`,
        { next: `berth update, then berth accept ${data.id}`, data },
      );
    }
    throw refusal(
      `git could not move ${data.trunk.name}: ${(error as Error).message}; ${nothing}.`,
      {
        next: `berth accept ${data.id}`,
        data,
      },
    );
  }
  data.landing.trunk_landed = true;
  steps.push({
    step: "move trunk",
    target: data.trunk.name,
    outcome: "done",
    reason: `${shortOid(old)} -> ${shortOid(commit)}`,
  });
  if (!holders.mainFollows) return null;
  return followAndRecord(main, old, commit, data, steps);
}

/** Finish: the main checkout's files follow the trunk the earlier run moved. */
async function finishFollow(plan: AcceptPlan, steps: StepOutcome[]): Promise<string | null> {
  const { repo, data, record } = plan;
  if (record === null) return null;
  const main = repo.mainPath;
  const [entries, tip] = await Promise.all([
    listWorktrees(main),
    resolveCommit(main, `refs/heads/${record.trunk}`),
  ]);
  if (tip === null || !trunkHolders(entries, record.trunk, repo).mainFollows) {
    steps.push({
      step: "update main checkout",
      target: main,
      outcome: "skipped",
      reason: "changed since the plan: it no longer has the trunk checked out",
    });
    data.landing.main_checkout_updated = null;
    return null;
  }
  if ((await followState(main, record.old, tip)) !== "pending") {
    steps.push({
      step: "update main checkout",
      target: main,
      outcome: "skipped",
      reason: "changed since the plan",
    });
    return null;
  }
  return followAndRecord(main, record.old, tip, data, steps);
}

/** Brings the main checkout's files from `old` to `tip`, recording the step; the problem, or null. */
async function followAndRecord(
  main: string,
  old: string,
  tip: string,
  data: AcceptData,
  steps: StepOutcome[],
): Promise<string | null> {
  const follow = await followTrunk(main, old, tip);
  data.landing.main_checkout_updated = follow.ok;
  steps.push({
    step: "update main checkout",
    target: main,
    outcome: follow.ok ? "done" : "failed",
    ...(follow.ok ? {} : { reason: follow.output }),
  });
  return follow.ok
    ? null
    : `git did not bring the main checkout's files to ${shortOid(tip)}: ${follow.output}`;
}

/** The shared teardown, then the branch by compare-and-swap on the landed tip. */
async function tearDownAndDelete(
  ctx: Context,
  plan: AcceptPlan,
  steps: StepOutcome[],
): Promise<string | null> {
  const { repo, data } = plan;
  if (plan.teardown !== null) {
    const teardown = await applyTeardown(repo, ctx, plan.teardown, {
      force: false,
      requireClean: true,
      expectHead: plan.branchTip,
    });
    steps.push(...teardown.steps);
    data.destroyed = teardown.destroyed;
    const failure = teardown.failure;
    data.landing.resources_destroyed =
      teardown.ok || failure?.stage === "remove" || failure?.stage === "verify";
    data.landing.worktree_removed = teardown.worktreeRemoved;
    if (!teardown.ok) {
      const how =
        failure?.stage === "destroy"
          ? `${failure.reason}\nThe checkout ${plan.teardown.path} was kept and still owns its remaining resources; fix the destroy command in berth.toml.`
          : `the teardown of ${data.id} stopped: ${failure?.reason ?? "unknown failure"}`;
      return how;
    }
  }
  const tip = plan.branchTip;
  if (data.delete_branch === null || tip === null || data.landing.branch_deleted) return null;
  try {
    await deleteRef(repo.mainPath, `refs/heads/${data.delete_branch}`, tip);
    data.landing.branch_deleted = true;
    steps.push({ step: "delete branch", target: data.delete_branch, outcome: "done" });
    return null;
  } catch (error) {
    const reason = (error as Error).message;
    steps.push({ step: "delete branch", target: data.delete_branch, outcome: "failed", reason });
    return `branch ${data.delete_branch} was not deleted (it moved from ${shortOid(tip)}?): ${reason}`;
  }
}

function remainingWork(data: AcceptData): string[] {
  const left: string[] = [];
  if (data.landing.main_checkout_updated === false) left.push("update the main checkout's files");
  if (!data.landing.resources_destroyed) left.push("destroy resources");
  if (!data.landing.worktree_removed) left.push("remove the checkout");
  if (data.delete_branch !== null && !data.landing.branch_deleted) {
    left.push(`delete branch ${data.delete_branch}`);
  }
  return left;
}

/**
 * Branches (other than this one and the trunk) whose tips are not on the
 * trunk yet and that this landing brings onto it, read from the survey's
 * in-memory graph: no git process per branch.
 */
function landingStages(
  survey: FleetSurvey,
  branch: string,
  commit: string,
  trunkTip: string,
): LandingStage[] {
  const stages: LandingStage[] = [];
  for (const [other, tip] of survey.branches) {
    if (other === branch || other === survey.trunk.name) continue;
    if (survey.ancestry.isAncestor(tip, trunkTip) || !survey.ancestry.isAncestor(tip, commit)) {
      continue;
    }
    const holder = survey.worktrees.find((w) => w.entry.branch === other && !w.entry.prunable);
    stages.push({ branch: other, tip, path: holder?.entry.path ?? null });
  }
  return stages.sort((a, b) => a.branch.localeCompare(b.branch));
}

/** The branch of the nearest checkout whose tip strictly contains `tip`, from the survey's graph. */
function nearestCheckoutContaining(
  survey: FleetSurvey,
  branch: string,
  tip: string,
): string | null {
  let best: { branch: string; ahead: number } | null = null;
  for (const w of survey.worktrees) {
    const other = w.entry.branch;
    const head = w.entry.head;
    if (other === null || head === null || other === branch || w.entry.prunable) continue;
    if (head === tip || !survey.ancestry.isAncestor(tip, head)) continue;
    const ahead = survey.ancestry.countExclusive(head, tip);
    if (best === null || ahead < best.ahead || (ahead === best.ahead && other < best.branch)) {
      best = { branch: other, ahead };
    }
  }
  return best?.branch ?? null;
}

async function ownedResources(
  repo: Repository,
  target: TeardownTarget,
): Promise<{ names: string[]; hints: string[] }> {
  const owned = await readOwnedEntries(repo, target.adminKey, target.id);
  return {
    names: [...owned.entries].sort((a, b) => b.order - a.order).map((e) => e.resource),
    hints: owned.problems.map((p) => `the ledger has an unreadable entry for this berth: ${p}`),
  };
}

async function ignoredIn(path: string): Promise<DiskUsage> {
  return measurePaths(path, await listIgnoredPaths(path).catch(() => []));
}

/** Whether `commit` is on the trunk; an object git no longer has is not. */
async function onTrunk(repo: Repository, commit: string, trunkTip: string): Promise<boolean> {
  return isAncestor(repo.mainPath, commit, trunkTip).catch(() => false);
}

function followRefusal(
  main: string,
  trunk: string,
  blocker: FollowBlocker,
  id: string,
  nothingChanged = true,
): UserError {
  const refuse = (message: string, next: string) =>
    new UserError("precondition_failed", message, { next, nothingChanged });
  switch (blocker.kind) {
    case "tracked":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out with ${blocker.count} uncommitted change(s) to tracked files: ` +
          `${blocker.files.join(", ")}. Landing moves ${trunk} under it, so it must be clean first.`,
        `commit or stash them in ${main} (git stash), then berth accept ${id}`,
      );
    case "in_the_way":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out, and landing would overwrite untracked file(s) there: ` +
          `${blocker.files.slice(0, 10).join(", ")}${blocker.files.length > 10 ? ` and ${blocker.files.length - 10} more` : ""}.`,
        `move them out of ${main}, then berth accept ${id}`,
      );
    case "git":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out, and git would not bring its files along: ${blocker.output}`,
        `git -C ${shellQuote(main)} status, then berth accept ${id}`,
      );
  }
}

function refusal(
  message: string,
  options: { next: string; data?: unknown; nothingChanged?: boolean },
): UserError {
  return new UserError("precondition_failed", message, options);
}
