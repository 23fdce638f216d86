import type { ReadyMarker } from "../../io/ready-marker.js";
import type { Trunk } from "../repo/trunk.js";
import type { Ancestry } from "./commit-graph.js";

/**
 * THE landed rule: the one place that decides whether a branch's work is on
 * the trunk. The survey's `landed` (status, prune, the desk) and await's
 * --landed ask here. In order:
 *   1. a tip and a trunk tip are known, and the branch is not the trunk;
 *   2. the tip is not the commit the berth forked from: a berth that never
 *      gained a commit is fresh work, not landed work;
 *   3. the tip is reachable from the trunk tip, or (with `[remote].name`)
 *      from the remote's trunk as last fetched: the remote's trunk is the
 *      trunk (spec section 13), so work another clone landed there with its
 *      commits is landed here once fetched, before the local trunk follows.
 * Steps 1 and 2 need only the facts; `landedQuestion` answers them and names
 * the ancestry question of step 3, which the caller's commit graph answers
 * (the survey's in memory, await's live).
 */
export function landedQuestion(
  tip: string | null,
  forkPoint: string | null,
  branch: string | null,
  trunk: Pick<Trunk, "name" | "tip">,
): { tip: string; trunkTip: string } | null {
  if (tip === null || trunk.tip === null || branch === trunk.name) return null;
  if (forkPoint !== null && forkPoint === tip) return null;
  return { tip, trunkTip: trunk.tip };
}

/** The landed rule over the survey's commit graph (the fork point is the ready marker's). */
export function isLanded(
  head: string | null,
  marker: ReadyMarker | null,
  branch: string | null,
  trunk: Trunk,
  trunkTips: readonly string[],
  ancestry: Ancestry,
): boolean {
  const question = landedQuestion(head, marker?.from_tip ?? null, branch, trunk);
  return question !== null && onTrunk(question.tip, trunkTips, ancestry);
}

/**
 * Step 3 over a commit graph read from every one of `trunkTips` (the survey's:
 * the trunk's tip and the remote's trunk as last fetched).
 */
export function onTrunk(tip: string, trunkTips: readonly string[], ancestry: Ancestry): boolean {
  return trunkTips.some((trunkTip) => ancestry.isAncestor(tip, trunkTip));
}
