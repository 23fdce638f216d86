import type { OperationInProgress } from "../../io/in-progress.js";
import type { WorktreeSkeleton } from "./survey.js";

/**
 * THE one place that decides which branches a checkout holds: status keeps
 * them out of its kept refs, and the branch-deletion rule (accept, drop,
 * prune) never deletes one. In order:
 *   1. the branch it has checked out;
 *   2. the branch a rebase in it is rewriting: its HEAD is detached
 *      meanwhile, and the rebase writes the branch when it finishes (git
 *      refuses to delete it too);
 *   3. detached, the berth's own branch its ready marker names: the berth
 *      lives, and its advice (park, resume) names that branch.
 * A registration whose folder is gone still holds them until it is pruned.
 */

/** The operation in progress in a checkout (checkout-states.ts reads it once per checkout). */
export type OperationOf = (w: WorktreeSkeleton) => OperationInProgress | null;

export function branchesHeldBy(w: WorktreeSkeleton, operationOf: OperationOf): string[] {
  const held: string[] = [];
  if (w.entry.branch !== null) held.push(w.entry.branch);
  const rebasing = operationOf(w)?.branch ?? null;
  if (rebasing !== null) held.push(rebasing);
  if (w.entry.detached && w.marker !== null) held.push(w.marker.branch);
  return held;
}

/** Every branch some checkout holds. */
export function heldBranches(
  worktrees: readonly WorktreeSkeleton[],
  operationOf: OperationOf,
): Set<string> {
  return new Set(worktrees.flatMap((w) => branchesHeldBy(w, operationOf)));
}
