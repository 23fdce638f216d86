import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { listCommitsNotIn } from "../../git/commits.js";
import { branchesMadeByBerth } from "../../io/branch-records.js";
import type { LedgerProblem } from "../../io/ledger.js";
import { type LandingRecord, readLandingRecords } from "../../io/unfinished-landing.js";
import type { PlanStep } from "../../result.js";
import { commandSequence, naturalCompare, shellCommand, shortOid } from "../../text.js";
import { describeLedgerProblems } from "../berth/resources.js";
import { readReceiptView } from "../fleet/receipt-state.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import {
  type BranchReading,
  branchVerdict,
  checkedOutElsewhere,
  keptBranchHint,
  madeByBerth,
} from "../lifecycle/branch-deletion.js";
import { goesWithIt, ignoredFilesOf, plannedDestroys } from "../lifecycle/removal-facts.js";
import type { TeardownTarget } from "../lifecycle/teardown.js";
import { requireTrunk } from "../repo/checkout.js";
import { openRepository, type Repository } from "../repo/repository.js";
import type { AcceptData, AcceptOptions, AcceptPlan, LandingStage } from "./accept.js";
import { asIntegration } from "./accept-integration-plan.js";
import {
  type AcceptableWorktree,
  acceptableBranch,
  acceptableWorktree,
  refusal,
  resolveSubject,
  subjectBranch,
} from "./accept-subject.js";
import { NO_CHECKS_LABEL } from "./gate.js";
import { gateDefinitionOf } from "./gate-definition.js";
import { followState, refuseUnlessFollows, trunkHolders } from "./main-checkout-follow.js";

/**
 * The accept plan, from reads only; it throws every refusal before anything
 * changes. Its steps:
 *   1. read the fleet, the trunk and the unfinished landing records;
 *   2. resolve the subject (./accept-subject.ts);
 *   3. land when the berth's tip is ahead of the trunk and contains it: the
 *      trunk held by no linked worktree, the main checkout able to follow,
 *      the proof (an honored receipt, else the gate to run), the commits and
 *      stages landing, the resources, ignored files and branch that go;
 *      (when the trunk moved on, the same plan becomes an integration:
 *      ./accept-integration-plan.ts);
 *   4. finish when the tip is already on the trunk (an earlier accept landed
 *      it): only the main checkout's files, the teardown and the branch remain.
 */

const MAX_COMMITS = 200;

interface PlanContext {
  repo: Repository;
  survey: FleetSurvey;
  trunk: { name: string; tip: string };
  records: LandingRecord[];
}

export async function planAccept(ctx: Context, options: AcceptOptions): Promise<AcceptPlan> {
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const trunk = requireTrunk(
    survey.trunk,
    `there is nothing to land on (set [repository].trunk in ${repo.config.file ?? "berth.toml"})`,
    shellCommand(["git", "-C", repo.mainPath, "branch", "--list"]),
  );
  const records = await readLandingRecords(repo.location.commonDir);
  const subject = resolveSubject(survey, repo, options.target, records);
  // Before any refusal: the logbook names the berth this accept was about.
  ctx.journal.aim?.(subjectBranch(subject));
  const context: PlanContext = { repo, survey, trunk, records };
  switch (subject.kind) {
    case "worktree":
      return planForWorktree(context, await acceptableWorktree(subject.worktree));
    case "branch":
      acceptableBranch(survey, repo, trunk, subject.branch, subject.tip);
      return planForBranch(context, subject.branch, subject.tip);
    case "record":
      return planForRecord(context, subject.record);
  }
}

async function planForWorktree(pc: PlanContext, subject: AcceptableWorktree): Promise<AcceptPlan> {
  const { repo, survey, trunk } = pc;
  const { worktree: w, target, branch, head } = subject;
  const record = pc.records.find((r) => r.id === target.id || r.path === w.entry.path) ?? null;
  if (survey.ancestry.isAncestor(head, trunk.tip)) {
    const recordLanded = record !== null && (await onTrunk(repo, record.new, trunk.tip));
    if (!w.landed && !recordLanded) {
      throw refusal(
        `${target.id} has nothing to land: its tip ${shortOid(head)} is already on ${trunk.name} and it has no commits of its own (drop it to discard the berth).`,
        { next: shellCommand(["berth", "worktree", "drop", target.id]) },
      );
    }
    return planFinish(pc, {
      id: target.id,
      branch,
      tip: head,
      worktree: w,
      target,
      record: recordLanded ? record : null,
    });
  }
  // The trunk moved on: the queue lands it through an integration commit (./queue-integrate.ts).
  const plan = await planLand(pc, subject);
  return survey.ancestry.isAncestor(trunk.tip, head) ? plan : asIntegration(plan);
}

async function planLand(pc: PlanContext, subject: AcceptableWorktree): Promise<AcceptPlan> {
  const { worktree: w, adminDir, target, status, head, branch } = subject;
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
        "berth moves the trunk only under the main checkout; detach it there (or switch to another branch).",
      {
        next: commandSequence(
          shellCommand(["git", "-C", linked, "switch", "--detach"]),
          shellCommand(["berth", "accept", target.id]),
        ),
      },
    );
  }
  if (holders.mainFollows) {
    await refuseUnlessFollows(main, trunk.name, { from: trunk.tip, to: head }, target.id);
  }

  const gate = gateDefinitionOf(repo.config.gate);
  const receipt = await readReceiptView(repo.location.cwd, { ...w, status, readable: true }, gate);
  const honored = receipt.state === "honored" && receipt.receipt !== null;
  const checks = honored ? (receipt.receipt?.checks.length ?? 0) : repo.config.gate.checks.length;
  const [commits, destroys, ignored] = await Promise.all([
    listCommitsNotIn(main, head, trunk.tip, MAX_COMMITS),
    plannedDestroys(repo, target),
    ignoredFilesOf(w.entry.path),
  ]);
  const hints = destroys.problems.map(unreadableHint);
  const branchRule = branchRemoval(pc, branch, w);
  if (branchRule.hint !== null) hints.push(branchRule.hint);
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
    resources: destroys.resources,
    ignored,
    delete_branch: branchRule.deleteBranch,
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
  const proof = checks === 0 ? NO_CHECKS_LABEL : `${checks} check(s)`;
  const steps: PlanStep[] = [
    {
      step: "validate",
      target: head,
      detail: honored
        ? `honored gate receipt (${proof})`
        : `run the gate now on this commit (${proof})`,
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
  const branch = subject.branch;
  // A branch that is gone already has nothing to delete.
  const branchRule =
    branch === null ? { deleteBranch: null, hint: null } : branchRemoval(pc, branch, worktree);
  if (branchRule.hint !== null) hints.push(branchRule.hint);
  const destroys =
    target === null ? { resources: [], problems: [] } : await plannedDestroys(repo, target);
  hints.push(...destroys.problems.map(unreadableHint));
  const ignored = worktree === null ? null : await ignoredFilesOf(worktree.entry.path);
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
    resources: destroys.resources,
    ignored,
    delete_branch: branchRule.deleteBranch,
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

/** A landed branch no checkout holds (./accept-subject.ts refused the rest): finish it. */
async function planForBranch(pc: PlanContext, branch: string, tip: string): Promise<AcceptPlan> {
  const record = pc.records.find((r) => r.branch === branch) ?? null;
  const recordLanded = record !== null && (await onTrunk(pc.repo, record.new, pc.trunk.tip));
  return planFinish(pc, {
    id: record?.id ?? branch.slice(pc.repo.config.repository.branch_prefix.length),
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
      { next: shellCommand(["berth", "status"]) },
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

/**
 * The branch rule (lifecycle/branch-deletion.ts) for the berth's branch: it
 * lands (or has landed) before the delete, so its commits are on the trunk.
 */
function branchRemoval(
  pc: PlanContext,
  branch: string,
  holder: WorktreeFacts | null,
): { deleteBranch: string | null; hint: string | null } {
  // A branch whose landing berth began (an unfinished-landing record) is berth's too.
  const landing = pc.records.some((r) => r.branch === branch);
  const reading: BranchReading = {
    branch,
    trunk: pc.trunk.name,
    prefix: pc.repo.config.repository.branch_prefix,
    madeByBerth:
      landing ||
      madeByBerth(branchesMadeByBerth(pc.repo.location.commonDir), branch, holder?.marker ?? null),
    heldByAnotherCheckout: checkedOutElsewhere(pc.survey.worktrees, branch, holder),
    landed: true,
    recovered: false,
  };
  const verdict = branchVerdict(reading);
  return {
    deleteBranch: verdict.delete ? verdict.branch : null,
    hint: keptBranchHint(verdict, reading, branch),
  };
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
      detail: data.ignored ? goesWithIt(data.ignored) : "",
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
  return stages.sort((a, b) => naturalCompare(a.branch, b.branch));
}

function unreadableHint(problem: LedgerProblem): string {
  return `the ledger has an unreadable entry for this berth: ${describeLedgerProblems([problem])}`;
}

/** Whether `commit` is on the trunk; an object git no longer has is not. */
async function onTrunk(repo: Repository, commit: string, trunkTip: string): Promise<boolean> {
  return isAncestor(repo.mainPath, commit, trunkTip).catch(() => false);
}
