import { UserError } from "../../errors.js";
import {
  describeHiddenChanges,
  readHiddenChanges,
  revealCommand,
} from "../../git/hidden-changes.js";
import type { StatusSummary } from "../../git/parse.js";
import { readWorktreeStatus } from "../../git/status.js";
import type { LandingRecord } from "../../io/unfinished-landing.js";
import { type CommandLine, commandSequence, shellCommand, shortOid } from "../../text.js";
import { nearestLiveContainer } from "../fleet/containment.js";
import type { FleetSurvey, WorktreeFacts } from "../fleet/survey.js";
import { describeNestedWork, nestedWorkAtRisk } from "../lifecycle/nested-work.js";
import { reattachment, rebranching } from "../lifecycle/reattach.js";
import {
  lockedRefusal,
  mainCheckoutRefusal,
  teardownTargetOf,
  unownedRefusal,
} from "../lifecycle/removal-facts.js";
import type { TeardownTarget } from "../lifecycle/teardown.js";
import { resolveTarget } from "../repo/berth-target.js";
import { refuseOperationInProgress } from "../repo/checkout.js";
import type { Repository } from "../repo/repository.js";

/**
 * What `berth accept [<berth>]` is about, step by step:
 *   1. the argument: a checkout (as `resolveTarget` reads it), else a local
 *      branch no checkout holds (a berth a partial accept already removed),
 *      else an unfinished landing record (its branch is gone too);
 *   2. for a checkout, whether it can be accepted at all: a linked worktree
 *      berth made, unlocked, on its berth branch, with a clean tree;
 *   3. for a branch, whether there is anything to finish: its tip on the
 *      trunk (else the nearest checkout holding its commits, from
 *      fleet/containment.ts) and the branch under the prefix.
 * Whether it lands or only finishes is planned in ./accept-plan.ts.
 */

export type Subject =
  | { kind: "worktree"; worktree: WorktreeFacts }
  | { kind: "branch"; branch: string; tip: string }
  | { kind: "record"; record: LandingRecord };

export function resolveSubject(
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
        `berth accept lands the berth you are in, and this is ${current ? "the main checkout" : "not a checkout of this repository"}: name one (berth accept <berth>; berth status lists them).`,
        { next: shellCommand(["berth", "status"]) },
      );
    }
    return { kind: "worktree", worktree: refuseIntegrated(current, survey) };
  }
  let found: WorktreeFacts;
  try {
    found = resolveTarget(survey, repo.location.cwd, argument, "accept");
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
  return { kind: "worktree", worktree: refuseIntegrated(found, survey) };
}

/**
 * An integrated berth (fleet/integration.ts) is in the trunk by a squash or
 * rebase merge: landing it would put its commits there a second time.
 */
function refuseIntegrated(w: WorktreeFacts, survey: FleetSurvey): WorktreeFacts {
  if (!w.integrated) return w;
  throw new UserError(
    "precondition_failed",
    `${w.marker?.id ?? w.entry.path}'s work is already in ${survey.trunk.name ?? "the trunk"} (integrated by a squash or rebase merge); accepting it would land its commits a second time. berth worktree prune removes it, keeping a recovery ref.`,
    { next: shellCommand(["berth", "worktree", "prune"]) },
  );
}

/** A checkout accept may land or finish, with what the checks read. */
export interface AcceptableWorktree {
  worktree: WorktreeFacts;
  target: TeardownTarget;
  adminDir: string;
  branch: string;
  head: string;
  status: StatusSummary;
}

/** Every refusal of a checkout as such, in order; the trunk is not looked at yet. */
export async function acceptableWorktree(w: WorktreeFacts): Promise<AcceptableWorktree> {
  const { entry } = w;
  const name = w.marker?.id ?? entry.path;
  if (w.isMain) throw mainCheckoutRefusal("accept", entry.path);
  if (entry.prunable) {
    throw refusal(
      `${name}'s checkout folder is gone (${entry.path}); there is nothing to validate.`,
      { next: shellCommand(["berth", "worktree", "prune"]) },
    );
  }
  const target = teardownTargetOf(w);
  if (target === null || w.marker === null || w.adminDir === null) {
    throw unownedRefusal("accept", entry.path);
  }
  if (entry.locked) throw lockedRefusal("accept", name, entry);
  const branch = entry.branch;
  const head = entry.head;
  if (branch === null || head === null || entry.detached) {
    const back =
      head === null
        ? rebranching(entry.path, w.adminDir, w.marker.branch)
        : await reattachment(entry.path, head, w.marker.branch);
    throw refusal(
      `${name} is not on a branch with commits (detached or unborn HEAD)${back?.detail ? `; ${back.detail}` : ""}.`,
      { next: back?.command ?? shellCommand(["git", "-C", entry.path, "switch", w.marker.branch]) },
    );
  }
  if (branch !== w.marker.branch) {
    throw refusal(`${name} has ${branch} checked out, not its berth branch ${w.marker.branch}.`, {
      next: shellCommand(["git", "-C", entry.path, "switch", w.marker.branch]),
    });
  }
  // Landing would tear the checkout down mid-operation, and its teardown refuses that: refused
  // now, so the trunk never moves for a landing that could not finish.
  refuseOperationInProgress(
    { path: entry.path, adminDir: w.adminDir },
    `accept ${name}`,
    "accept lands the branch and then tears the checkout down, which would lose it",
  );
  const [status, hidden] = await Promise.all([
    readWorktreeStatus(entry.path).catch(() => null),
    readHiddenChanges(entry.path).catch(() => null),
  ]);
  if (status === null || hidden === null) {
    throw refusal(`git cannot read ${entry.path}; unknown never counts as clean.`, {
      next: shellCommand(["git", "-C", entry.path, "status"]),
    });
  }
  if (status.changedFiles > 0) {
    const shown = status.paths.slice(0, 5).join(", ");
    const more = status.paths.length > 5 ? ` and ${status.paths.length - 5} more` : "";
    const untracked = status.untrackedFiles > 0 ? ` (${status.untrackedFiles} untracked)` : "";
    throw refusal(
      `${name} has ${status.changedFiles} uncommitted change(s)${untracked}: ${shown}${more}. ` +
        "Accept lands a commit and tears the checkout down, so the tree must be clean (untracked files count): commit or stash them.",
      {
        next: commandSequence(
          shellCommand(["git", "-C", entry.path, "stash", "-u"]),
          shellCommand(["berth", "accept", name]),
        ),
      },
    );
  }
  if (hidden.length > 0) {
    // A receipt proves the commit; the teardown would still destroy these edits.
    throw refusal(
      `${name} has ${hidden.length} uncommitted change(s) git status does not show: ${describeHiddenChanges(hidden)}. ` +
        "Accept lands a commit and tears the checkout down, so they would be lost: let git see them again, then commit or stash them.",
      {
        next: commandSequence(
          revealCommand(entry.path, hidden),
          shellCommand(["git", "-C", entry.path, "stash", "-u"]),
          shellCommand(["berth", "accept", name]),
        ),
      },
    );
  }
  // Its submodules' and embedded repositories' own commits would go with the checkout.
  const nested = await nestedWorkAtRisk(entry.path, w.adminDir);
  if (nested.length > 0) {
    throw refusal(
      `${name}: ${describeNestedWork(nested)}. Accept tears the checkout down after it lands, and those repositories with it.`,
      { next: shellCommand(["berth", "accept", name]) },
    );
  }
  return { worktree: w, target, adminDir: w.adminDir, branch, head, status };
}

/**
 * A branch no checkout holds can only be finished: refused unless its tip is
 * on the trunk (pointing at the nearest checkout that holds its commits) and
 * it is under the branch prefix.
 */
export function acceptableBranch(
  survey: FleetSurvey,
  repo: Repository,
  trunk: { name: string; tip: string },
  branch: string,
  tip: string,
): void {
  const prefix = repo.config.repository.branch_prefix;
  if (!survey.ancestry.isAncestor(tip, trunk.tip)) {
    const container = nearestLiveContainer(survey, branch)?.container ?? null;
    throw new UserError(
      "unknown_target",
      `No checkout holds ${branch}, and its tip ${shortOid(tip)} is not on ${trunk.name}: accept validates and lands from a berth's checkout.` +
        (container ? ` ${container} holds its commits and can land them.` : ""),
      {
        next: shellCommand(
          container ? ["berth", "accept", container] : ["berth", "start", "--from", branch],
        ),
        data: { branch, tip, container },
      },
    );
  }
  if (!branch.startsWith(prefix)) {
    throw refusal(
      `${branch} is already on ${trunk.name} and is not under ${prefix}; berth has nothing to finish for it.`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
}

/** accept's refusal: `precondition_failed`, with the command to run next. */
export function refusal(
  message: string,
  options: { next: CommandLine; data?: unknown; nothingChanged?: boolean },
): UserError {
  return new UserError("precondition_failed", message, options);
}

/**
 * With `[acceptance].queue = false` (spec section 5) a branch that does not contain
 * the trunk's tip is refused, never integrated: the person merges the trunk first.
 */
export function behindTrunk(
  branch: string,
  trunk: { name: string; tip: string },
  berth: { path: string | null; id: string },
  data?: unknown,
): UserError {
  // A queue entry made without a checkout has none to update in.
  const next =
    berth.path === null
      ? shellCommand(["berth", "accept", berth.id])
      : updateThenAccept(berth.path, berth.id);
  return refusal(
    `${branch} does not contain the tip of ${trunk.name} (${shortOid(trunk.tip)}), and with ` +
      "[acceptance].queue = false berth does not land it through an integration commit; " +
      "merge the trunk into it first. Nothing changed.",
    { next, data },
  );
}

/** `cd <berth> && berth update && berth accept <id>`: update merges into the checkout it runs in. */
export function updateThenAccept(path: string, id: string): CommandLine {
  return commandSequence(
    shellCommand(["cd", path]),
    shellCommand(["berth", "update"]),
    shellCommand(["berth", "accept", id]),
  );
}

/** The branch an accept subject is about, for the logbook. */
export function subjectBranch(subject: ReturnType<typeof resolveSubject>): string | null {
  switch (subject.kind) {
    case "worktree":
      return subject.worktree.entry.branch ?? subject.worktree.marker?.branch ?? null;
    case "branch":
      return subject.branch;
    case "record":
      return subject.record.branch;
  }
}
