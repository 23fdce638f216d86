import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import type { LandingEntry } from "../../io/landing-log.js";
import { shellCommand, shortOid } from "../../text.js";
import { nearestLiveContainer } from "../fleet/containment.js";
import type { FleetSurvey, WorktreeFacts } from "../fleet/survey.js";
import { landingsOf } from "../landing/landings.js";
import { deletedBranchRefusal } from "../lifecycle/reattach.js";
import { findRecoveryRef } from "../lifecycle/recovery-refs.js";
import { resolveTarget } from "../repo/berth-target.js";
import type { AwaitCondition } from "./request.js";

/**
 * The await target: the one place `--green <t>` and `--landed <t>` become
 * the branch to follow, refused when it can never answer. A fresh call and a
 * wait whose target changed under it (dropped, reclaimed) both ask here, so
 * they give the same answer. In order:
 *   1. a checkout by the shared resolver, or a berth with a detached HEAD by
 *      its id, path or branch (its ready marker names its branch);
 *   2. a branch no checkout holds (as named, or with the branch prefix);
 *   3. a branch that is gone but that the landing log names: answered from
 *      the landing records;
 *   4. a berth that was dropped (a recovery ref holds its tip): refused,
 *      naming the nearest checkout that carries its commits;
 *   5. anything else: unknown_target.
 * Never both 1 and 2, never the trunk. The refusals that need the first
 * evaluation (no commit of its own, green without a checkout) are here too.
 */

/** The branch an await follows, and the checkout holding it (null when none does). */
export interface AwaitTarget {
  branch: string;
  /** The tip at call start; for a branch that is gone, the tip its newest landing names. */
  tip: string | null;
  worktree: WorktreeFacts | null;
  /** The branch no longer exists: the landing records answer. */
  gone: boolean;
}

/** What resolving needs besides the survey: the landing log, and git for recovery refs. */
export interface TargetHistory {
  landings: readonly LandingEntry[];
  /** Where git runs (a directory that exists: the common dir). */
  gitCwd: string;
}

/**
 * `<t>` as a berth id, path or branch. A checkout is found by the shared
 * resolver; a branch no checkout holds is found by name (as given, or with
 * the branch prefix: a reclaimed berth's id). Never guesses between them.
 */
export async function resolveAwaitTarget(
  survey: FleetSurvey,
  cwd: string,
  argument: string,
  condition: Exclude<AwaitCondition, "trunk-moved">,
  history: TargetHistory,
): Promise<AwaitTarget> {
  const verb = `await --${condition}`;
  const prefix = survey.repo.config.repository.branch_prefix;
  const name = argument.replace(/^refs\/heads\//, "");
  const names = [...new Set([name, `${prefix}${name}`])];
  // A detached berth holds its marker's branch: it is still that berth's.
  const detachedBerths = survey.worktrees.filter(
    (w) => w.entry.detached && w.marker !== null && !w.isMain,
  );
  const held = new Set([
    ...survey.worktrees.flatMap((w) => (w.entry.branch ? [w.entry.branch] : [])),
    ...detachedBerths.map((w) => w.marker?.branch as string),
  ]);
  const unheld = names.filter((b) => survey.branches.has(b) && !held.has(b));

  let worktree: WorktreeFacts | null = null;
  try {
    worktree = resolveTarget(survey, cwd, argument, verb);
  } catch (error) {
    if (!(error instanceof UserError && error.code === "unknown_target")) throw error;
    worktree = detachedBerths.find((w) => names.includes(w.marker?.branch as string)) ?? null;
    if (worktree === null && unheld.length === 0) {
      return resolveGone(survey, argument, names, condition, history, error);
    }
  }
  const branchOf = (w: WorktreeFacts) =>
    w.entry.detached && w.marker !== null ? w.marker.branch : w.entry.branch;
  const own = worktree === null ? null : branchOf(worktree);
  const candidates = [...(own === null ? [] : [own]), ...unheld.filter((b) => b !== own)];
  if (candidates.length > 1) {
    throw new UserError(
      "ambiguous_target",
      `"${argument}" matches ${candidates.length} branches: ${candidates.join(", ")}${
        worktree ? ` (${own ?? "a detached HEAD"} is checked out at ${worktree.entry.path})` : ""
      }. Name the full branch: berth ${verb} <branch>.`,
      { next: shellCommand(["berth", "status"]), data: { candidates } },
    );
  }

  const branch = worktree === null ? (unheld[0] as string) : own;
  if (branch === null) {
    throw new UserError(
      "precondition_failed",
      `${worktree?.entry.path ?? argument} has a detached HEAD and no ready marker naming its branch; await follows a branch (berth ${verb} <branch>).`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  if (branch === survey.trunk.name) {
    throw new UserError(
      "precondition_failed",
      `${branch} is the trunk; --${condition} follows a berth's branch onto the trunk.`,
      { next: shellCommand(["berth", "await", "--trunk-moved"]) },
    );
  }
  const tip = survey.branches.get(branch) ?? null;
  // A registration whose folder is gone holds the branch in name only.
  const live = worktree !== null && !worktree.entry.prunable ? worktree : null;
  if (tip === null) {
    if (worktree?.entry.detached) {
      // The detached berth's branch was deleted: what the landing log says, if anything.
      return resolveGone(survey, argument, [branch], condition, history, null);
    }
    // A berth whose own branch was deleted under it: made again where its HEAD log says.
    const marker = worktree?.marker ?? null;
    const refusal =
      worktree !== null && marker?.branch === branch
        ? deletedBranchRefusal(marker.id, worktree.entry.path, worktree.adminDir, branch, {
            command: shellCommand(["berth", "await", `--${condition}`, argument]),
            said: "",
          })
        : null;
    if (refusal !== null) throw refusal;
    throw new UserError("precondition_failed", `${branch} has no commits yet.`, {
      next: shellCommand(["berth", "status"]),
    });
  }
  return { branch, tip, worktree: live, gone: false };
}

/**
 * The name is no checkout and no branch: the newest landing naming it
 * answers; else a dropped berth's recovery ref says where its commits went;
 * else it is unknown.
 */
async function resolveGone(
  survey: FleetSurvey,
  argument: string,
  names: readonly string[],
  condition: Exclude<AwaitCondition, "trunk-moved">,
  history: TargetHistory,
  unknown: UserError | null,
): Promise<AwaitTarget> {
  const prefix = survey.repo.config.repository.branch_prefix;
  for (const branch of names) {
    const landed = landingsOf(history.landings, branch)[0];
    if (landed !== undefined) return { branch, tip: landed.tip, worktree: null, gone: true };
  }
  const byId = history.landings.filter((e) => e.id !== null && names.includes(e.id));
  const newest = byId.sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0];
  if (newest !== undefined) {
    return { branch: newest.branch, tip: newest.tip, worktree: null, gone: true };
  }
  for (const name of names) {
    const id = name.startsWith(prefix) ? name.slice(prefix.length) : name;
    const recovery = await findRecoveryRef(history.gitCwd, id).catch(() => null);
    if (recovery !== null) {
      throw await droppedRefusal(survey, `${prefix}${id}`, recovery, condition, history.gitCwd);
    }
  }
  throw new UserError(
    "unknown_target",
    `No berth, worktree or branch of this repository is "${argument}" (by id, path or branch), and no landing names it.`,
    {
      next: unknown?.next ?? shellCommand(["berth", "status"]),
      data: unknown?.data ?? { candidates: [] },
    },
  );
}

/**
 * A berth dropped with unlanded commits: its branch is gone, a recovery ref
 * holds its tip. Point at the nearest checkout whose branch carries them.
 */
async function droppedRefusal(
  survey: FleetSurvey,
  branch: string,
  recovery: { ref: string; oid: string },
  condition: Exclude<AwaitCondition, "trunk-moved">,
  gitCwd: string,
): Promise<UserError> {
  const tip = recovery.oid;
  const trunkTip = survey.trunk.tip;
  const onTrunk = trunkTip !== null && (await isAncestor(gitCwd, tip, trunkTip).catch(() => false));
  let container = onTrunk ? null : nearestLiveContainer(survey, branch, tip);
  // The survey's graph knows only tips some branch reaches: make sure git agrees.
  if (container !== null && !(await isAncestor(gitCwd, tip, container.container_tip))) {
    container = null;
  }
  const why = `${branch} was dropped: no checkout or branch holds it any more (${recovery.ref} keeps its tip ${shortOid(tip)}).`;
  const pointer = onTrunk
    ? ` Its commits are on ${survey.trunk.name}.`
    : container === null
      ? " No branch with a checkout contains its commits."
      : ` Its commits travel inside ${container.container} (${container.container_ahead} commit(s) further), ` +
        `which has a checkout: await --${condition} ${container.container} instead.`;
  return new UserError("unknown_target", `${why}${pointer}`, {
    next:
      container === null
        ? shellCommand(["berth", "start", "--from", recovery.ref])
        : shellCommand(["berth", "await", `--${condition}`, container.container]),
    data: {
      branch,
      tip,
      recovery_ref: recovery.ref,
      contained_by: container?.container ?? null,
      container_tip: container?.container_tip ?? null,
      container_ahead: container?.container_ahead ?? null,
    },
  });
}

/**
 * A branch no checkout holds has no receipt and can never turn green (its
 * receipt died with its checkout, ADR 0225). Point at the stage that carries
 * its commits, and at --landed for the arrival question.
 */
export function refuseGreenWithoutCheckout(survey: FleetSurvey, target: AwaitTarget): never {
  const container = nearestLiveContainer(survey, target.branch);
  const why =
    `No checkout holds ${target.branch} (never started, dropped, or reclaimed as a contained stage), ` +
    "so it has no gate receipt and can never turn green.";
  const pointer =
    container === null
      ? " No branch with a checkout contains its commits."
      : ` Its commits travel inside ${container.container} (${container.container_ahead} commit(s) further), ` +
        `which has a checkout: await --green ${container.container} instead.`;
  throw new UserError(
    "unknown_target",
    `${why}${pointer} To wait for its commits to reach the trunk, use --landed ${target.branch}.`,
    {
      next: shellCommand(
        container === null
          ? ["berth", "await", "--landed", target.branch]
          : ["berth", "await", "--green", container.container],
      ),

      data: {
        branch: target.branch,
        tip: target.tip,
        contained_by: container?.container ?? null,
        container_tip: container?.container_tip ?? null,
        container_ahead: container?.container_ahead ?? null,
      },
    },
  );
}

/**
 * A branch with no commit of its own — its tip is on the trunk, no landing
 * names it, and the wait has pinned nothing — is never green: what its
 * waiter wants to know is whether it lands.
 */
export function refuseGreenWithoutWork(
  survey: FleetSurvey,
  target: AwaitTarget,
  tip: string | null,
): never {
  throw new UserError(
    "precondition_failed",
    `${target.branch} has no commit of its own: its tip ${shortOid(tip)} is already on ${survey.trunk.name ?? "the trunk"} and no landing names it, so there is nothing for a gate to prove. ` +
      `To wait for it to gain a commit and land, use --landed ${target.branch}.`,
    {
      next: shellCommand(["berth", "await", "--landed", target.branch]),
      data: { branch: target.branch, tip, trunk_tip: survey.trunk.tip },
    },
  );
}
