import { UserError } from "../../errors.js";
import { listIgnoredPaths } from "../../git/ignored.js";
import type { WorktreeEntry } from "../../git/parse.js";
import { type DiskUsage, describeIgnored, measurePaths } from "../../io/disk-usage.js";
import type { LedgerProblem } from "../../io/ledger.js";
import { isBeingLanded, isFinal, readQueue } from "../../io/queue-store.js";
import { type CommandLine, commandSequence, shellCommand } from "../../text.js";
import { inDestroyOrder, readOwnedEntries } from "../berth/resources.js";
import type { WorktreeFacts } from "../fleet/survey.js";
import { INTERRUPTED_PREFIX } from "../logbook/worktree-digest.js";
import type { Repository } from "../repo/repository.js";
import type { TeardownTarget } from "./teardown.js";

/**
 * The one place the facts of removing a berth are decided, for every plan
 * that removes one (accept, drop, the landed prune, the contained reclaim)
 * and for the teardown that carries it out:
 *   1. what is torn down: a berth's teardown target (`teardownTargetOf` from
 *      the survey, `plannedTeardownTarget` from a row a plan recorded);
 *   2. whether it may be: never the main checkout, never a locked worktree,
 *      never one berth did not create (one refusal each, worded per verb);
 *   3. which resources are destroyed, in the order the real destroy runs
 *      (`plannedDestroys`: the same `inDestroyOrder` as berth/resources.ts);
 *   4. the ignored files that go with the checkout (`ignoredFilesOf`) and
 *      how a plan says so (`goesWithIt`).
 * Which branch goes with the berth is decided in ./branch-deletion.ts.
 */

/** The teardown target of a surveyed berth, or null when berth does not own it. */
export function teardownTargetOf(worktree: WorktreeFacts): TeardownTarget | null {
  if (worktree.isMain || worktree.marker === null || worktree.adminKey === null) return null;
  return { path: worktree.entry.path, adminKey: worktree.adminKey, id: worktree.marker.id };
}

/** The teardown target a plan recorded for a berth (prune's landed and contained rows). */
export function plannedTeardownTarget(row: {
  path: string;
  admin_key: string;
  id: string;
}): TeardownTarget {
  return { path: row.path, adminKey: row.admin_key, id: row.id };
}

/** The verbs that refuse up front to remove a berth; each words its refusals its own way. */
export type RemovingVerb = "accept" | "worktree drop" | "worktree park";

interface Wording {
  main: string;
  mainNext: CommandLine;
  locked: string;
  unowned: string;
  unownedNext: CommandLine;
}

const WORDING: Record<RemovingVerb, Wording> = {
  accept: {
    main: "berth accept lands a berth (berth accept <berth>; berth status lists them)",
    mainNext: shellCommand(["berth", "status"]),
    locked: "accept would tear it down, and berth never removes a locked worktree",
    unowned:
      "berth did not create it; land it with git yourself, or work in a berth (berth start <name>)",
    unownedNext: shellCommand(["berth", "status"]),
  },
  "worktree drop": {
    main: "berth never drops it (berth status lists the berths to drop)",
    mainNext: shellCommand(["berth", "status"]),
    locked: "berth never drops a locked worktree, not even with --force",
    unowned:
      "berth did not create it and will not remove it; if you mean to discard it, git worktree remove it",
    unownedNext: shellCommand(["git", "worktree", "list"]),
  },
  "worktree park": {
    main: "berth never parks it (berth status lists the berths to park)",
    mainNext: shellCommand(["berth", "status"]),
    locked: "parking removes the checkout, and berth never removes a locked worktree",
    unowned: "berth did not create it and will not remove it",
    unownedNext: shellCommand(["git", "worktree", "list"]),
  },
};

/** "locked" with git's lock reason, when it has one. */
export function lockedPhrase(entry: WorktreeEntry): string {
  return `locked${entry.lockReason ? ` (${entry.lockReason})` : ""}`;
}

export function mainCheckoutRefusal(verb: RemovingVerb, path: string): UserError {
  const wording = WORDING[verb];
  return new UserError("precondition_failed", `${path} is the main checkout; ${wording.main}.`, {
    next: wording.mainNext,
  });
}

/** `name` is how the berth is named to the person (its id, or its path). */
export function lockedRefusal(verb: RemovingVerb, name: string, entry: WorktreeEntry): UserError {
  return new UserError(
    "precondition_failed",
    `${name} is ${lockedPhrase(entry)}; ${WORDING[verb].locked}.`,
    {
      next: commandSequence(
        shellCommand(["git", "worktree", "unlock", entry.path]),
        shellCommand(["berth", ...verb.split(" "), name]),
      ),
    },
  );
}

/**
 * Refuses to remove a checkout the landing queue is working with: the
 * throwaway integration berth of an entry being merged or gated
 * (core/landing/queue-integrate.ts), whose removal under the lander would turn
 * that entry's landing into a false rejection (the lander removes it itself
 * when the landing ends); and a berth whose own entry is being landed now,
 * whose work the lander goes on to land whatever happens to its checkout, as
 * `queue withdraw` refuses it then too.
 */
export async function refuseQueueCheckout(
  verb: RemovingVerb,
  repo: Repository,
  id: string,
): Promise<void> {
  const open = (await readQueue(repo.location.commonDir)).filter((e) => !isFinal(e));
  const removing = verb === "worktree park" ? "parking" : "removing";
  const integration = open.find((e) => e.integration?.id === id);
  if (integration !== undefined) {
    throw new UserError(
      "precondition_failed",
      `${id} is the landing queue's integration checkout for ${integration.id} (${integration.state}); ${removing} it would break that landing, and the queue removes it when the landing ends.`,
      { next: shellCommand(["berth", "queue"]) },
    );
  }
  const landing = open.find((e) => e.id === id && isBeingLanded(e));
  if (landing !== undefined) {
    throw new UserError(
      "precondition_failed",
      `${id} is being landed by the landing queue now (${landing.state}); the lander lands its work whatever happens to the checkout, so ${removing} it would not stop that. Wait until the landing ends, then run this again if the berth is still there.`,
      { next: shellCommand(["berth", "await", "--landed", id]) },
    );
  }
}

export function unownedRefusal(verb: RemovingVerb, path: string): UserError {
  const wording = WORDING[verb];
  return new UserError(
    "precondition_failed",
    `${path} has no berth ready marker: ${wording.unowned}.`,
    { next: wording.unownedNext },
  );
}

/**
 * The resources a teardown of this berth destroys, in the order it destroys
 * them, and the ledger files it cannot read ("file: reason").
 */
export async function plannedDestroys(
  repo: Repository,
  owner: { adminKey: string; id: string },
): Promise<{ resources: string[]; problems: LedgerProblem[] }> {
  const owned = await readOwnedEntries(repo, owner.adminKey, owner.id);
  return {
    resources: inDestroyOrder(owned.entries).map((e) => e.resource),
    problems: owned.problems,
  };
}

/** The reason an apply gives for an item it skips because live state differs from its plan. */
export const CHANGED_SINCE_PLAN = "changed since the plan";

/** "changed since the plan: <why>", said once even when `why` already says it. */
export function changedSincePlan(why?: string): string {
  if (why === undefined || why === "") return CHANGED_SINCE_PLAN;
  return why.startsWith(CHANGED_SINCE_PLAN) ? why : `${CHANGED_SINCE_PLAN}: ${why}`;
}

/**
 * Why a berth with a verb in flight is not removed, or null (spec 7 and the
 * ADR: the logbook only ever makes removal more conservative). An interrupted
 * verb (its process gone from this host) holds nothing.
 */
export function describeVerbInFlight(
  activity: { running: string | null } | undefined,
): string | null {
  const running = activity?.running ?? null;
  if (running === null || running.startsWith(INTERRUPTED_PREFIX)) return null;
  return `a verb is in flight there (running ${running})`;
}

/** Ignored files and bytes in a checkout: they go with it (spec 7). Unreadable counts as none. */
export async function ignoredFilesOf(path: string): Promise<DiskUsage> {
  return measurePaths(path, await listIgnoredPaths(path).catch(() => []));
}

/** How a plan's "remove worktree" step says what goes with the checkout. */
export function goesWithIt(ignored: DiskUsage): string {
  return `${describeIgnored(ignored)} go with it`;
}

/** The hint after removing the checkout the verb ran in: where to go now. */
export function youWereInside(removedPath: string | null, mainPath: string): string {
  return `you were inside ${removedPath ?? "the removed checkout"}; ${shellCommand(["cd", mainPath])}`;
}
