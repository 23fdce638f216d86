import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import {
  describeHiddenChanges,
  readHiddenChanges,
  revealCommand,
} from "../../git/hidden-changes.js";
import { readRefTips } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { readBriefRecord } from "../../io/briefs.js";
import type { DiskUsage } from "../../io/disk-usage.js";
import { readOperationInProgress } from "../../io/in-progress.js";
import { withFleetLock } from "../../io/lock.js";
import { adminDirFor } from "../../io/paths.js";
import {
  appliedResult,
  type PlanApplyResult,
  type PlanStep,
  type StepOutcome,
} from "../../result.js";
import { type CommandLine, commandSequence, shellCommand } from "../../text.js";
import { mergeRecord, storeRecord } from "../berth/briefs.js";
import { describeLedgerProblems } from "../berth/resources.js";
import { readFleetActivity } from "../fleet/activity.js";
import { describeOperation } from "../fleet/checkout-states.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { resolveTarget } from "../repo/berth-target.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { describeNestedWork, nestedWorkAtRisk } from "./nested-work.js";
import { reattachment, rebranching } from "./reattach.js";
import {
  describeVerbInFlight,
  goesWithIt,
  ignoredFilesOf,
  lockedRefusal,
  mainCheckoutRefusal,
  plannedDestroys,
  refuseQueueCheckout,
  teardownTargetOf,
  unownedRefusal,
  youWereInside,
} from "./removal-facts.js";
import { applyTeardown, type TeardownTarget, teardownError } from "./teardown.js";

/**
 * `berth worktree park <berth>` (spec section 8, docs/decisions/0026): shelve
 * a berth. Its resources are destroyed and its checkout removed through THE
 * teardown (teardown.ts); its branch, title and brief are kept, and its
 * record says it is parked, so status lists the branch as parked (not
 * abandoned) and `berth start --from <branch>` resumes it. In order:
 *   1. plan (reads only): refuse the main checkout, a locked worktree, one
 *      berth did not make, one a verb is in flight in, one off a branch or on
 *      the trunk, and a dirty one (untracked files count: the teardown would
 *      lose them);
 *   2. apply, under the fleet lock: mark the branch parked first (a crash
 *      after the teardown leaves a parked branch, never an abandoned one),
 *      then the teardown, which re-checks clean and HEAD right before it
 *      destroys anything; a teardown that did not remove the checkout puts
 *      the record back as it was.
 * This module moves and deletes no ref: the branch is the thing kept.
 */

export interface ParkData {
  id: string;
  path: string;
  branch: string;
  head: string;
  /** Commits not on the trunk (kept on the branch); null when unknown. */
  ahead: number | null;
  title: string | null;
  has_brief: boolean;
  /** Recorded resources, in the order they will be destroyed. */
  resources: string[];
  /** Ignored files that go with the checkout (build output, local databases). */
  ignored: DiskUsage;
  /** How to get it back. */
  resume: string;
  resources_destroyed: string[];
  worktree_removed: boolean;
  parked: boolean;
}

export interface ParkPlan {
  repo: Repository;
  worktree: WorktreeFacts;
  target: TeardownTarget;
  data: ParkData;
  steps: PlanStep[];
  hints: string[];
}

const NAMED_FILES = 10;

/** Reads only. Refuses (throws) what parking would lose or may not touch. */
export async function planPark(ctx: Context, options: { target: string }): Promise<ParkPlan> {
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  refuseParkedAlready(repo, survey, options.target);
  const worktree = resolveTarget(survey, repo.location.cwd, options.target, "worktree park");
  const { entry } = worktree;
  const name = worktree.marker?.id ?? entry.path;
  const refuse = (message: string, next: CommandLine): never => {
    throw new UserError("precondition_failed", message, { next });
  };
  const parkAgain = (id: string) => shellCommand(["berth", "worktree", "park", id]);

  if (worktree.isMain) throw mainCheckoutRefusal("worktree park", entry.path);
  if (entry.locked) throw lockedRefusal("worktree park", name, entry);
  const target = teardownTargetOf(worktree);
  if (target === null) throw unownedRefusal("worktree park", entry.path);
  await refuseQueueCheckout("worktree park", repo, target.id);
  // A verb working in the berth (a gate's checks writing there): parking would remove its folder under it.
  const activity = await readFleetActivity(repo, [worktree], ctx.now());
  const inFlight = describeVerbInFlight(activity.worktrees.get(entry.path));
  if (inFlight !== null) {
    refuse(
      `${target.id}: ${inFlight}; parking removes the checkout under it. Park it once that verb has finished.`,
      parkAgain(target.id),
    );
  }
  if (entry.prunable) {
    refuse(
      `${target.id}'s folder is gone; there is no checkout to park. berth worktree prune clears its registration; the branch stays.`,
      shellCommand(["berth", "worktree", "prune"]),
    );
  }
  const branch = entry.branch;
  const head = entry.head;
  if (branch === null || head === null || entry.detached) {
    const own = worktree.marker?.branch ?? `berth/${target.id}`;
    const back =
      head === null
        ? rebranching(entry.path, worktree.adminDir, own)
        : await reattachment(entry.path, head, own);
    refuse(
      `${target.id} ${head === null ? "has no commit checked out" : "is not on a branch"}, so parking would keep nothing to resume from; its own branch is ${own}` +
        `${back?.detail ? `; ${back.detail}` : ""}.`,
      commandSequence(
        back?.command ?? shellCommand(["git", "-C", entry.path, "switch", own]),
        parkAgain(target.id),
      ),
    );
  }
  if (branch === survey.trunk.name) {
    refuse(
      `${target.id} has the trunk checked out; berth parks only a berth's own branch.`,
      shellCommand(["berth", "status"]),
    );
  }

  const [status, hidden] = await Promise.all([
    readWorktreeStatus(entry.path).catch(() => null),
    readHiddenChanges(entry.path).catch(() => null),
  ]);
  if (status === null || hidden === null) {
    refuse(
      `${target.id}'s working tree cannot be read, so berth cannot tell it holds no uncommitted work.`,
      shellCommand(["git", "-C", entry.path, "status"]),
    );
  } else if (status.changedFiles > 0) {
    const files = status.paths.slice(0, NAMED_FILES).join(", ");
    const more =
      status.changedFiles > NAMED_FILES ? `, and ${status.changedFiles - NAMED_FILES} more` : "";
    refuse(
      `${target.id} has ${status.changedFiles} uncommitted change(s) (untracked files count): ${files}${more}. ` +
        "Parking removes the checkout, so they would be lost; commit them first (the branch keeps commits).",
      commandSequence(commitCommand(entry.path), parkAgain(target.id)),
    );
  } else if (hidden.length > 0) {
    refuse(
      `${target.id} has ${hidden.length} uncommitted change(s) git status does not show: ${describeHiddenChanges(hidden, NAMED_FILES)}. ` +
        "Parking removes the checkout, so they would be lost; let git see them again, then commit them (the branch keeps commits) or restore them.",
      commandSequence(
        revealCommand(entry.path, hidden),
        shellCommand(["git", "-C", entry.path, "status"]),
      ),
    );
  }
  const adminDir = adminDirFor(repo.location.commonDir, target.adminKey);
  const operation = readOperationInProgress(adminDir);
  if (operation !== null) {
    refuse(
      `${target.id}: ${describeOperation(operation, entry.path)}. Parking removes the checkout, and the ${operation.kind}'s state with it.`,
      shellCommand([
        "git",
        "-C",
        entry.path,
        ...(operation.continueArgs ?? operation.abortArgs).slice(1),
      ]),
    );
  }
  const nested = await nestedWorkAtRisk(entry.path, adminDir);
  if (nested.length > 0) {
    refuse(
      `${target.id}: ${describeNestedWork(nested)}. Parking removes the checkout, and those repositories with it.`,
      parkAgain(target.id),
    );
  }

  const [planned, ignored] = await Promise.all([
    plannedDestroys(repo, target),
    ignoredFilesOf(entry.path),
  ]);
  const hints: string[] = [];
  if (planned.problems.length > 0) {
    hints.push(
      `the ledger has unreadable entries for this berth: ${describeLedgerProblems(planned.problems)}`,
    );
  }
  const resources = planned.resources;
  const record = readBriefRecord(repo.location.commonDir, branch as string);
  const data: ParkData = {
    id: target.id,
    path: entry.path,
    branch: branch as string,
    head: head as string,
    ahead: worktree.ahead,
    title: record?.title ?? null,
    has_brief: record?.brief != null,
    resources,
    ignored,
    resume: shellCommand(["berth", "start", "--from", branch as string]),
    resources_destroyed: [],
    worktree_removed: false,
    parked: false,
  };
  const steps: PlanStep[] = [
    { step: "mark parked", target: data.branch, detail: `at ${data.head}` },
    ...resources.map((resource) => ({ step: "destroy resource", target: resource })),
    {
      step: "remove worktree",
      target: entry.path,
      detail: goesWithIt(ignored),
    },
    {
      step: "keep branch",
      target: data.branch,
      detail: `at ${data.head}, with its title and brief`,
    },
  ];
  return { repo, worktree, target, data, steps, hints };
}

/** The command that commits everything in a checkout (what a dirty berth must do before parking). */
export function commitCommand(path: string): CommandLine {
  return commandSequence(
    shellCommand(["cd", path]),
    shellCommand(["git", "add", "-A"]),
    shellCommand(["git", "commit", "-m", "work in progress"]),
  );
}

/**
 * Applies a plan under the fleet lock. The queue is asked again (its lander may
 * have taken the berth up while the plan awaited its confirmation), and the
 * teardown re-checks the berth.
 */
export async function applyPark(ctx: Context, plan: ParkPlan): Promise<PlanApplyResult<ParkData>> {
  const { repo, target, data, worktree } = plan;
  const commonDir = repo.location.commonDir;
  const marker = worktree.marker as NonNullable<typeof worktree.marker>;
  ctx.journal.begin({ branch: data.branch, path: data.path });
  const steps: StepOutcome[] = [];
  const hints = [...plan.hints];
  await withFleetLock(commonDir, "worktree park", async () => {
    await refuseQueueCheckout("worktree park", repo, target.id);
    const before = readBriefRecord(commonDir, data.branch);
    await storeRecord(
      commonDir,
      data.branch,
      mergeRecord(
        data.branch,
        before,
        {
          parked: {
            at: ctx.now().toISOString(),
            id: data.id,
            path: data.path,
            tip: data.head,
            from: marker.from,
            from_tip: marker.from_tip,
          },
        },
        ctx.now(),
      ),
    );
    steps.push({ step: "mark parked", target: data.branch, outcome: "done" });
    const teardown = await applyTeardown(repo, ctx, target, {
      force: false,
      requireClean: true,
      expectHead: data.head,
    });
    steps.push(...teardown.steps);
    data.resources_destroyed = teardown.destroyed;
    data.worktree_removed = teardown.worktreeRemoved;
    if (!teardown.ok) {
      // The checkout is still there: the branch is not parked after all.
      await storeRecord(commonDir, data.branch, before);
      steps.push({
        step: "mark parked",
        target: data.branch,
        outcome: "skipped",
        reason: "undone",
      });
      if (teardown.failure?.stage === "changed" && teardown.destroyed.length === 0) {
        throw new UserError("precondition_failed", `${data.id}: ${teardown.failure.reason}.`, {
          next: shellCommand(["berth", "worktree", "park", data.id]),
          data,
        });
      }
      throw teardownError(["worktree", "park", data.id, "--yes"], target, teardown, data);
    }
    data.parked = true;
    // Checked, not assumed: the branch is what parking promises to keep.
    const tip = (await readRefTips(repo.mainPath, [`refs/heads/${data.branch}`])).get(
      `refs/heads/${data.branch}`,
    );
    steps.push(
      tip === data.head
        ? { step: "keep branch", target: data.branch, outcome: "done" }
        : {
            step: "keep branch",
            target: data.branch,
            outcome: "failed",
            reason: `the branch is now ${tip ?? "gone"}, not ${data.head}`,
          },
    );
  });
  if (worktree.isCurrent) hints.push(youWereInside(data.path, repo.mainPath));
  return appliedResult("worktree park", data, plan.steps, steps, { hints });
}

/**
 * A branch already parked (no checkout holds it, its record says parked):
 * there is nothing to park, and the way on is to resume it. By the branch,
 * or by the id it was parked under.
 */
function refuseParkedAlready(repo: Repository, survey: FleetSurvey, target: string): void {
  const prefix = repo.config.repository.branch_prefix;
  const wanted = target.replace(/^refs\/heads\//, "");
  for (const branch of new Set([wanted, `${prefix}${wanted}`])) {
    const parked = readBriefRecord(repo.location.commonDir, branch)?.parked;
    if (!parked || !survey.branches.has(branch)) continue;
    if (survey.worktrees.some((w) => w.entry.branch === branch)) continue;
    throw new UserError(
      "precondition_failed",
      `${branch} is parked already (since ${parked.at}); nothing changed. Resume it to work on it again.`,
      { next: shellCommand(["berth", "start", "--from", branch]) },
    );
  }
}
