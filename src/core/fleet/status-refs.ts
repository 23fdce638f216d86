import type { BriefRecord } from "../../io/briefs.js";
import { naturalCompare } from "../../text.js";
import type { KeptRef } from "./containment.js";
import type { FleetSurvey } from "./survey.js";

/**
 * A branch with no checkout. `parked`: shelved on purpose (`berth worktree
 * park`), listed even with no commits of its own; `contained`: inside a live
 * container (a calm fact); `abandoned`: no live branch holds its commits.
 */
export type RefState = "parked" | "contained" | "abandoned";

export interface StatusRef extends KeptRef {
  state: RefState;
  title: string | null;
}

/**
 * The kept refs as the containment module classified them, each with its
 * title, and a parked branch marked `parked` (never abandoned: it was shelved
 * on purpose). A parked branch with no commits of its own is listed too, or
 * it would vanish from view.
 */
export function statusRefs(
  survey: FleetSurvey,
  kept: readonly KeptRef[],
  records: ReadonlyMap<string, BriefRecord>,
): StatusRef[] {
  const parkedOf = (branch: string) => records.get(branch)?.parked != null;
  const refs: StatusRef[] = kept.map((ref) => {
    const parked = parkedOf(ref.branch);
    return {
      ...ref,
      abandoned: ref.abandoned && !parked,
      state: parked ? "parked" : ref.abandoned ? "abandoned" : "contained",
      title: records.get(ref.branch)?.title ?? null,
    };
  });
  const listed = new Set(kept.map((ref) => ref.branch));
  const checkedOut = new Set(
    survey.worktrees.flatMap((w) => (w.entry.branch ? [w.entry.branch] : [])),
  );
  for (const [branch, record] of records) {
    const tip = survey.branches.get(branch);
    if (
      record.parked === null ||
      tip === undefined ||
      listed.has(branch) ||
      checkedOut.has(branch)
    ) {
      continue;
    }
    const trunkTip = survey.trunk.tip;
    refs.push({
      branch,
      tip,
      ahead: trunkTip === null ? null : survey.ancestry.countExclusive(tip, trunkTip),
      contained_by: null,
      container_tip: null,
      container_ahead: null,
      abandoned: false,
      state: "parked",
      title: record.title,
    });
  }
  return refs.sort((a, b) => naturalCompare(a.branch, b.branch));
}
