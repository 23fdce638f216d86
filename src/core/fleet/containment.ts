import type { OperationInProgress } from "../../io/in-progress.js";
import { naturalCompare } from "../../text.js";
import { isIdle, type WorktreeActivity } from "./activity.js";
import { operationPhrase } from "./checkout-states.js";
import { onTrunk } from "./landed.js";
import type { FleetSurvey, WorktreeFacts } from "./survey.js";

/**
 * THE containment predicate (spec section 6, ADR 0225). prune, status, the
 * desk and await all ask this module; nothing else decides containment.
 *
 * It works on a survey already in hand: the clauses are checked cheapest
 * first, and the ancestry clause reads the survey's in-memory commit graph,
 * so classifying the whole fleet spawns no git process at all.
 */

/** Evidence a person can check: both tips and how far the container is ahead. */
export interface ContainmentEvidence {
  container: string;
  container_tip: string;
  tip: string;
  container_ahead: number;
  container_has_checkout: boolean;
}

export type WorktreeContainment =
  | { contained: true; evidence: ContainmentEvidence }
  | { contained: false; reason: string };

/** A branch under the prefix with no checkout and unlanded commits (a kept ref). */
export interface KeptRef {
  branch: string;
  tip: string;
  /** Commits not on the trunk; null when the trunk is missing. */
  ahead: number | null;
  /** Nearest container that holds a checkout, or null. */
  contained_by: string | null;
  container_tip: string | null;
  container_ahead: number | null;
  /** True only when no live container holds its commits. */
  abandoned: boolean;
}

export interface ContainmentInput {
  survey: FleetSurvey;
  /** From `readFleetActivity`; a worktree without an entry is not idle. */
  activityOf: (worktree: WorktreeFacts) => WorktreeActivity | undefined;
  /** The git operation stopped half-way in a checkout (checkout-states.ts), or null. */
  operationOf: (worktree: WorktreeFacts) => OperationInProgress | null;
  now: Date;
}

export interface FleetContainment {
  /** Keyed by worktree path. */
  worktrees: Map<string, WorktreeContainment>;
  refs: KeptRef[];
}

export function classifyContainment(input: ContainmentInput): FleetContainment {
  const finder = new ContainerFinder(input.survey);
  const worktrees = new Map<string, WorktreeContainment>();
  for (const worktree of input.survey.worktrees) {
    worktrees.set(worktree.entry.path, classifyWorktree(worktree, input, finder));
  }
  return { worktrees, refs: classifyKeptRefs(input.survey, finder) };
}

function classifyWorktree(
  w: WorktreeFacts,
  input: ContainmentInput,
  finder: ContainerFinder,
): WorktreeContainment {
  const refuse = (reason: string): WorktreeContainment => ({ contained: false, reason });
  const { trunk, ancestry } = input.survey;
  // Clause 1: never the main checkout or the one scanning; nothing locked or half-gone.
  if (w.isMain) return refuse("the main checkout");
  if (w.isCurrent) return refuse("the checkout running the scan");
  if (w.entry.locked) return refuse("locked");
  if (w.entry.prunable) return refuse("its folder is gone (stale metadata)");
  // berth only ever removes worktrees it made (spec section 7, ownership).
  if (w.marker === null) return refuse("not created by berth (no ready marker)");
  // Clause 2: readable and clean; unknown state never qualifies.
  if (w.readable !== true || w.status === null) return refuse("its state could not be read");
  if (w.status.changedFiles > 0) return refuse("uncommitted or untracked files");
  // Clause 3: on a named branch other than the trunk, not landed.
  const branch = w.entry.branch;
  const tip = w.entry.head;
  if (branch === null || tip === null || w.entry.detached) return refuse("not on a branch");
  if (branch === trunk.name) return refuse("on the trunk");
  if (onTrunk(tip, input.survey.trunkTips, ancestry)) {
    return refuse("its tip is on the trunk (landed or not yet started)");
  }
  // Clause 4: idle. A merge, rebase, am, cherry-pick, revert or bisect stopped half-way is
  // someone's work in progress whatever the logbook says (decision 0071); read last, for the
  // few rows still standing, since it lists the checkout's git dir.
  const idle = idleVerdict(input.activityOf(w), input.now);
  if (idle !== null) return refuse(idle);
  const operation = input.operationOf(w);
  if (operation !== null) return refuse(`${operationPhrase(operation)} is in progress`);
  // Clause 5: a strict ancestor of another local branch's tip.
  const evidence = finder.nearest(branch, tip, false);
  return evidence === null
    ? refuse("no other branch contains its tip")
    : { contained: true, evidence };
}

/** null when idle (activity.ts owns the rule), else why not, for the row's evidence. */
function idleVerdict(activity: WorktreeActivity | undefined, now: Date): string | null {
  if (activity === undefined) return "its last activity is unknown";
  if (isIdle(activity, now)) return null;
  if (activity.running !== null) return `a verb is in flight (${activity.running})`;
  if (activity.gitActivity === null) return "its last activity is unknown";
  return "active within the last hour";
}

/**
 * The nearest branch holding a checkout whose tip strictly contains `branch`'s
 * tip (or `tip`, for a branch that is gone: a dropped berth's last tip), or
 * null. await's refusal pointer: a branch with no checkout can never turn
 * green, but the stage that carries its commits can. A given tip must be in
 * the survey's commit graph (reachable from a branch, not from the trunk).
 */
export function nearestLiveContainer(
  survey: FleetSurvey,
  branch: string,
  tip: string | undefined = survey.branches.get(branch),
): ContainmentEvidence | null {
  return tip === undefined ? null : new ContainerFinder(survey).nearest(branch, tip, true);
}

function classifyKeptRefs(survey: FleetSurvey, finder: ContainerFinder): KeptRef[] {
  const prefix = survey.repo.config.repository.branch_prefix;
  const refs: KeptRef[] = [];
  for (const [branch, tip] of survey.branches) {
    if (!branch.startsWith(prefix) || finder.hasCheckout(branch)) continue;
    if (onTrunk(tip, survey.trunkTips, survey.ancestry)) continue;
    // Its work is in the trunk (a squash or rebase merge): landed class, prune's to clear.
    if (survey.integratedBranches.has(branch)) continue;
    const live = finder.nearest(branch, tip, true);
    refs.push({
      branch,
      tip,
      ahead:
        survey.trunk.tip === null ? null : survey.ancestry.countExclusive(tip, survey.trunk.tip),
      contained_by: live?.container ?? null,
      container_tip: live?.container_tip ?? null,
      container_ahead: live?.container_ahead ?? null,
      abandoned: live === null,
    });
  }
  return refs.sort((a, b) => naturalCompare(a.branch, b.branch));
}

/**
 * Finds the nearest live descendant of a tip among the local branches, in
 * memory. The survey reads its commit graph from every branch tip, so the
 * graph names each tip's descendants among them directly: finding one tip's
 * containers costs what it has, never a comparison with every other branch,
 * and classifying the whole fleet stays linear in it.
 */
class ContainerFinder {
  private readonly checkedOut = new Set<string>();
  /** Local branches by tip (several may share one). */
  private readonly byTip = new Map<string, string[]>();

  constructor(private readonly survey: FleetSurvey) {
    for (const w of survey.worktrees) {
      if (w.entry.branch !== null && !w.entry.prunable) this.checkedOut.add(w.entry.branch);
    }
    for (const [branch, tip] of survey.branches) {
      const sharing = this.byTip.get(tip);
      if (sharing) sharing.push(branch);
      else this.byTip.set(tip, [branch]);
    }
  }

  hasCheckout(branch: string): boolean {
    return this.checkedOut.has(branch);
  }

  /**
   * Nearest container: one holding a checkout preferred, then fewest commits
   * ahead, then name. Equal tips are twins, never containers.
   */
  nearest(branch: string, tip: string, checkoutRequired: boolean): ContainmentEvidence | null {
    const { ancestry, trunk } = this.survey;
    let best: ContainmentEvidence | null = null;
    for (const otherTip of ancestry.rootsReaching(tip)) {
      if (otherTip === tip) continue;
      let ahead: number | null = null;
      for (const other of this.byTip.get(otherTip) ?? []) {
        if (other === branch || other === trunk.name) continue;
        const hasCheckout = this.checkedOut.has(other);
        if (checkoutRequired && !hasCheckout) continue;
        ahead ??= ancestry.countExclusive(otherTip, tip);
        const candidate: ContainmentEvidence = {
          container: other,
          container_tip: otherTip,
          tip,
          container_ahead: ahead,
          container_has_checkout: hasCheckout,
        };
        if (best === null || isNearer(candidate, best)) best = candidate;
      }
    }
    return best;
  }
}

function isNearer(a: ContainmentEvidence, b: ContainmentEvidence): boolean {
  if (a.container_has_checkout !== b.container_has_checkout) return a.container_has_checkout;
  if (a.container_ahead !== b.container_ahead) return a.container_ahead < b.container_ahead;
  return a.container < b.container;
}
