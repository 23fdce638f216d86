import { isOnAnyRef } from "../../git/refs.js";
import type { OperationInProgress } from "../../io/in-progress.js";
import { adminDirFor } from "../../io/paths.js";
import type { WorktreeActivity } from "../fleet/activity.js";
import { describeOperation } from "../fleet/checkout-states.js";
import type { FleetSurvey, WorktreeFacts } from "../fleet/survey.js";
import type { Repository } from "../repo/repository.js";
import { describeNestedWork, nestedWorkAtRisk } from "./nested-work.js";
import type { PruneSections, StaleRow } from "./prune-plan.js";
import { describeVerbInFlight } from "./removal-facts.js";

/**
 * What prune's plan must not lose, decided here for it:
 *   1. a landed berth is kept while someone works in it (`landedWithheld`):
 *      locked, the current checkout, a verb in flight, a git operation in
 *      progress, unreadable, or uncommitted changes, in that order;
 *   2. a stale registration whose HEAD commit is on no ref gets a recovery
 *      ref before it goes (`findHeadsOnNoRef`): its registration is the last
 *      thing keeping that commit reachable;
 *   3. a stale or landed berth whose submodules or embedded repositories hold
 *      commits no other repository has is kept (`withholdNestedWork`): they
 *      go with its admin dir and checkout (./nested-work.ts).
 */

/**
 * Invariant 1 for stale registrations: removing one drops the only thing that
 * keeps a detached HEAD's commit reachable. A HEAD its own branch points at
 * needs no git process; an unanswered question counts as on no ref.
 */
export async function findHeadsOnNoRef(
  repo: Repository,
  survey: FleetSurvey,
  rows: StaleRow[],
): Promise<void> {
  await Promise.all(
    rows.map(async (row) => {
      const head = row.head;
      if (head === null || (row.branch !== null && survey.branches.get(row.branch) === head))
        return;
      row.head_on_no_ref = !(await isOnAnyRef(repo.location.cwd, head).catch(() => false));
    }),
  );
}

/**
 * Why a landed berth is not removed, or null. Prune never discards uncommitted
 * work, nor a berth a verb or a git operation is working in (a bisect or a
 * rebase detaches HEAD on a trunk commit; the logbook only narrows).
 */
export function landedWithheld(
  w: WorktreeFacts,
  activity: WorktreeActivity | undefined,
  operation: OperationInProgress | null,
): string | null {
  if (w.entry.locked) return "locked";
  if (w.isCurrent) return "you are inside it";
  const inFlight = describeVerbInFlight(activity);
  if (inFlight !== null) return inFlight;
  if (operation !== null) return describeOperation(operation, w.entry.path);
  if (w.readable !== true || w.status === null) return "its state could not be read";
  if (w.status.changedFiles > 0) return `${w.status.changedFiles} uncommitted or untracked file(s)`;
  return null;
}

/** Takes out of the plan the stale and landed berths removing which would delete nested work. */
export async function withholdNestedWork(
  repo: Repository,
  sections: Pick<PruneSections, "stale" | "landed">,
  hints: string[],
): Promise<void> {
  const atRisk = async (row: { id: string; path: string; admin_key: string }) => {
    const nested = await nestedWorkAtRisk(
      row.path,
      adminDirFor(repo.location.commonDir, row.admin_key),
    );
    if (nested.length > 0) hints.push(`${row.id} is kept: ${describeNestedWork(nested)}`);
    return nested.length > 0;
  };
  const staleRisks = await Promise.all(sections.stale.map(atRisk));
  sections.stale = sections.stale.filter((_, i) => !staleRisks[i]);
  const landedRisks = await Promise.all(
    sections.landed.map((row) => (row.kind === "worktree" ? atRisk(row) : false)),
  );
  sections.landed = sections.landed.filter((_, i) => !landedRisks[i]);
}
