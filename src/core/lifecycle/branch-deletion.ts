import { deleteRef, resolveCommit } from "../../git/refs.js";
import { deleteBranchRecord } from "../../io/branch-records.js";
import type { ReadyMarker } from "../../io/ready-marker.js";
import type { StepOutcome } from "../../result.js";
import { shortOid } from "../../text.js";
import { checkoutStates } from "../fleet/checkout-states.js";
import { branchesHeldBy, type OperationOf } from "../fleet/held-branches.js";
import type { WorktreeFacts } from "../fleet/survey.js";

/**
 * The one place berth decides whether a berth's branch may be deleted, and
 * the one way it deletes one. accept, drop and the landed prune all ask
 * here; none of them restates the rule or reads git's stderr.
 *
 * Whether (`branchVerdict`, pure), in this order:
 *   1. there is a branch: a detached checkout has none to delete;
 *   2. it is under the branch prefix: berth keeps branches it did not name;
 *   3. it is not the trunk, ever;
 *   4. berth made it: a record under `<common>/berth/branches/`, or the
 *      ready marker of the berth being removed (spec section 2; a branch
 *      made by hand under the prefix is never berth's to delete);
 *   5. no other checkout holds it (fleet/held-branches.ts): deleting a ref
 *      under a checkout leaves it on an unborn branch, under a rebase breaks
 *      its `--continue`, and a detached berth's advice names its branch;
 *   6. its commits survive: its tip is on the trunk (or lands there before
 *      the delete, accept), or a recovery ref holds it (a forced drop).
 *
 * How (`deleteBranch`): a compare-and-swap on the tip the plan saw
 * (`git update-ref -d <ref> <tip>`), then one typed fate, told apart by
 * reading the ref once when git refused:
 *   deleted  the ref was at the tip and is gone;
 *   absent   there was no such ref any more (someone else deleted it);
 *   raced    the ref points elsewhere now (`now`): it moved since the plan;
 *   failed   the ref is still at the tip and git would not delete it
 *            (a lock, a permission): git's message says why.
 */

export interface BranchReading {
  /** The branch the berth is on; null when its HEAD is detached. */
  branch: string | null;
  /** The trunk's name; null when the repository has none configured or found. */
  trunk: string | null;
  /** `[repository].branch_prefix`. */
  prefix: string;
  /** berth made this branch (`madeByBerth`). */
  madeByBerth: boolean;
  /** A checkout other than the one being removed has it checked out. */
  heldByAnotherCheckout: boolean;
  /** Its tip is on the trunk, or this removal lands it there before the delete. */
  landed: boolean;
  /** A recovery ref holds its tip (written before the delete: a forced drop). */
  recovered: boolean;
}

export type KeptBecause =
  | "detached"
  | "outside_prefix"
  | "trunk"
  | "not_made_by_berth"
  | "checked_out"
  | "unlanded";

export type BranchVerdict =
  | { delete: true; branch: string }
  | { delete: false; branch: string | null; because: KeptBecause };

export function branchVerdict(reading: BranchReading): BranchVerdict {
  const { branch } = reading;
  const keep = (because: KeptBecause): BranchVerdict => ({ delete: false, branch, because });
  if (branch === null) return keep("detached");
  if (!branch.startsWith(reading.prefix)) return keep("outside_prefix");
  if (branch === reading.trunk) return keep("trunk");
  if (!reading.madeByBerth) return keep("not_made_by_berth");
  if (reading.heldByAnotherCheckout) return keep("checked_out");
  if (!reading.landed && !reading.recovered) return keep("unlanded");
  return { delete: true, branch };
}

/**
 * Whether berth made `branch`: a branch record says so, or the ready marker of
 * the berth being removed names it (the marker is berth's own proof, so a berth
 * started before branch records existed counts as recorded when first seen).
 */
export function madeByBerth(
  records: ReadonlySet<string>,
  branch: string | null,
  marker: Pick<ReadyMarker, "branch"> | null,
): boolean {
  if (branch === null) return false;
  return records.has(branch) || marker?.branch === branch;
}

/**
 * Whether a checkout other than `except` (registered, even with its folder
 * gone) holds `branch` (fleet/held-branches.ts: checked out, being rebased,
 * or a detached berth's own). `operationOf` defaults to reading each git dir now.
 */
export function checkedOutElsewhere(
  worktrees: readonly WorktreeFacts[],
  branch: string | null,
  except: WorktreeFacts | null,
  operationOf: OperationOf = checkoutStates().operation,
): boolean {
  return (
    branch !== null &&
    worktrees.some((w) => w !== except && branchesHeldBy(w, operationOf).includes(branch))
  );
}

/** The branch to delete, or null when berth keeps it. */
export function branchToDelete(reading: BranchReading): string | null {
  const verdict = branchVerdict(reading);
  return verdict.delete ? verdict.branch : null;
}

/** The hint a plan shows for a branch it keeps; `name` names the berth. */
export function keptBranchHint(
  verdict: BranchVerdict,
  reading: BranchReading,
  name: string,
): string | null {
  if (verdict.delete) return null;
  const branch = verdict.branch;
  switch (verdict.because) {
    case "detached":
      return `${name} is detached; no branch is deleted`;
    case "outside_prefix":
      return `branch ${branch} is not under ${reading.prefix}; berth keeps it`;
    case "trunk":
      return `branch ${branch} is the trunk; berth keeps it`;
    case "not_made_by_berth":
      return `branch ${branch} was not made by berth (no record of it); berth keeps it`;
    case "checked_out":
      return `branch ${branch} is checked out in another worktree; berth keeps it`;
    case "unlanded":
      return `branch ${branch} has commits that are not on the trunk; berth keeps it`;
  }
}

export type BranchFate =
  | { fate: "deleted" }
  | { fate: "absent" }
  | { fate: "raced"; now: string }
  | { fate: "failed"; message: string };

/**
 * Deletes `branch` only if it still points at `tip`; what happened, as a fate.
 * A branch that is gone (deleted or absent) is forgotten from the branch records.
 */
export async function deleteBranch(
  cwd: string,
  commonDir: string,
  branch: string,
  tip: string,
): Promise<BranchFate> {
  const ref = `refs/heads/${branch}`;
  try {
    await deleteRef(cwd, ref, tip);
    await deleteBranchRecord(commonDir, branch);
    return { fate: "deleted" };
  } catch (error) {
    const message = (error as Error).message;
    const now = await resolveCommit(cwd, ref).catch(() => undefined);
    if (now === null) {
      await deleteBranchRecord(commonDir, branch);
      return { fate: "absent" };
    }
    if (now !== undefined && now !== tip) return { fate: "raced", now };
    return { fate: "failed", message };
  }
}

/** The step a deletion's fate records: the same words whichever verb deleted. */
export function deletionStep(branch: string, fate: BranchFate): StepOutcome {
  const step = "delete branch";
  switch (fate.fate) {
    case "deleted":
      return { step, target: branch, outcome: "done" };
    case "absent":
      return { step, target: branch, outcome: "skipped", reason: "already gone" };
    case "raced":
      return {
        step,
        target: branch,
        outcome: "failed",
        reason: `it moved to ${shortOid(fate.now)}`,
      };
    case "failed":
      return { step, target: branch, outcome: "failed", reason: fate.message };
  }
}
