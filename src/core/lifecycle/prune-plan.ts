import type { Context } from "../../context.js";
import type { DiskUsage } from "../../io/disk-usage.js";
import { type LedgerEntry, readWholeLedger } from "../../io/ledger.js";
import type { PlanStep } from "../../result.js";
import { shortOid } from "../../text.js";
import { readFleetActivity } from "../fleet/activity.js";
import { type ContainmentEvidence, classifyContainment } from "../fleet/containment.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { branchToDelete, checkedOutElsewhere } from "./branch-deletion.js";
import { ignoredFilesOf } from "./removal-facts.js";

/**
 * The prune plan (spec section 5, `worktree prune`), built from reads only.
 * Four labelled sections: stale metadata, landed, orphaned resources, and the
 * contained offer, which the default apply skips (ADR 0225).
 */

export interface StaleRow {
  id: string;
  path: string;
  branch: string | null;
  head: string | null;
  admin_key: string;
  /** Resources its ledger still records, destroyed before the registration goes. */
  resources: string[];
}

export interface LandedWorktreeRow {
  kind: "worktree";
  id: string;
  path: string;
  branch: string | null;
  tip: string;
  admin_key: string;
  resources: string[];
  /** Deleted after the teardown (compare-and-swap, re-checked merged). */
  delete_branch: string | null;
}

export interface LandedBranchRow {
  kind: "branch";
  branch: string;
  tip: string;
}

export type LandedRow = LandedWorktreeRow | LandedBranchRow;

export interface OrphanRow {
  admin_key: string;
  id: string;
  resource: string;
  /** Where its berth was. */
  path: string;
  branch: string;
  gc: boolean;
}

/** Spec section 5: `{id, path, branch, tip, container, container_tip, container_ahead, container_has_checkout}`. */
export interface ContainedRow extends ContainmentEvidence {
  id: string;
  path: string;
  branch: string;
  admin_key: string;
  resources: string[];
}

export interface PruneSections {
  stale: StaleRow[];
  landed: LandedRow[];
  orphaned: OrphanRow[];
  contained: ContainedRow[];
}

export interface PrunePlan {
  repo: Repository;
  survey: FleetSurvey;
  sections: PruneSections;
  steps: PlanStep[];
  hints: string[];
}

/** Everything the classification needs, read fresh: the plan and the apply's re-check share it. */
export interface FleetReading {
  repo: Repository;
  survey: FleetSurvey;
  sections: PruneSections;
  hints: string[];
}

export async function planPrune(ctx: Context): Promise<PrunePlan> {
  const repo = await openRepository(ctx);
  const reading = await readFleet(ctx, repo);
  return { ...reading, steps: planSteps(reading.sections) };
}

/** One survey, the activity files, the containment module and the ledger: the whole picture. */
export async function readFleet(ctx: Context, repo: Repository): Promise<FleetReading> {
  const now = ctx.now();
  const survey = await surveyFleet(repo);
  const [activity, ledger] = await Promise.all([
    readFleetActivity(repo, survey.worktrees, now),
    readWholeLedger(repo.location.commonDir),
  ]);
  const containment = classifyContainment({
    survey,
    activityOf: (w) => activity.worktrees.get(w.entry.path),
    now,
  });
  const hints: string[] = [];
  const resourcesOf = (w: WorktreeFacts): string[] => {
    if (w.adminKey === null || w.marker === null) return [];
    const entries = ledger.get(w.adminKey)?.entries ?? [];
    return entries.filter((e) => e.id === w.marker?.id).map((e) => e.resource);
  };

  const sections: PruneSections = { stale: [], landed: [], orphaned: [], contained: [] };
  for (const w of survey.worktrees) {
    if (w.isMain) continue;
    const owned = w.marker !== null && w.adminKey !== null;
    if (w.entry.prunable) {
      if (w.entry.locked) {
        hints.push(
          `${w.entry.path} is gone but locked; unlock it to prune it (git worktree unlock)`,
        );
      } else if (!owned) {
        hints.push(
          `${w.entry.path} is gone but was not made by berth; git worktree prune removes it`,
        );
      } else {
        sections.stale.push({
          id: w.marker?.id as string,
          path: w.entry.path,
          branch: w.entry.branch,
          head: w.entry.head,
          admin_key: w.adminKey as string,
          resources: resourcesOf(w),
        });
      }
      continue;
    }
    if (w.landed && owned && w.entry.head !== null) {
      const why = landedWithheld(w);
      if (why !== null) {
        hints.push(`${w.marker?.id} has landed but is kept: ${why}`);
        continue;
      }
      const branch = w.entry.branch;
      sections.landed.push({
        kind: "worktree",
        id: w.marker?.id as string,
        path: w.entry.path,
        branch,
        tip: w.entry.head,
        admin_key: w.adminKey as string,
        resources: resourcesOf(w),
        delete_branch: branchToDelete({
          branch,
          trunk: survey.trunk.name,
          prefix: repo.config.repository.branch_prefix,
          heldByAnotherCheckout: checkedOutElsewhere(survey.worktrees, branch, w),
          landed: w.landed,
          recovered: false,
        }),
      });
      continue;
    }
    const verdict = containment.worktrees.get(w.entry.path);
    if (verdict?.contained) {
      sections.contained.push({
        id: w.marker?.id as string,
        path: w.entry.path,
        branch: w.entry.branch as string,
        admin_key: w.adminKey as string,
        resources: resourcesOf(w),
        ...verdict.evidence,
      });
    }
  }
  sections.landed.push(...landedBranches(repo, survey));
  sections.orphaned = orphanedEntries(survey, ledger);
  for (const [key, listing] of ledger) {
    for (const problem of listing.problems) {
      hints.push(`unreadable ledger file ${key}/${problem.file}: ${problem.reason} (left alone)`);
    }
  }
  return { repo, survey, sections, hints };
}

/** Why a landed berth is not removed, or null. Prune never discards uncommitted work. */
function landedWithheld(w: WorktreeFacts): string | null {
  if (w.entry.locked) return "locked";
  if (w.isCurrent) return "you are inside it";
  if (w.readable !== true || w.status === null) return "its state could not be read";
  if (w.status.changedFiles > 0) return `${w.status.changedFiles} uncommitted or untracked file(s)`;
  return null;
}

/** Branches no checkout holds that berth may delete because their tip is on the trunk. */
function landedBranches(repo: Repository, survey: FleetSurvey): LandedBranchRow[] {
  const { trunk, ancestry } = survey;
  const trunkTip = trunk.tip;
  if (trunkTip === null) return [];
  const rows: LandedBranchRow[] = [];
  for (const [branch, tip] of survey.branches) {
    const deletable = branchToDelete({
      branch,
      trunk: trunk.name,
      prefix: repo.config.repository.branch_prefix,
      heldByAnotherCheckout: checkedOutElsewhere(survey.worktrees, branch, null),
      landed: ancestry.isAncestor(tip, trunkTip),
      recovered: false,
    });
    if (deletable !== null) rows.push({ kind: "branch", branch, tip });
  }
  return rows.sort((a, b) => a.branch.localeCompare(b.branch));
}

/**
 * Ledger entries whose berth no longer exists: no registration under their
 * admin key, or one that belongs to a different berth (git reused the name).
 * A registration whose folder is gone still owns its entries: stale metadata.
 */
function orphanedEntries(
  survey: FleetSurvey,
  ledger: Map<string, { entries: LedgerEntry[] }>,
): OrphanRow[] {
  const owners = new Map(
    survey.worktrees.flatMap((w) =>
      w.adminKey === null ? [] : [[w.adminKey, w.marker?.id ?? null] as const],
    ),
  );
  const rows: OrphanRow[] = [];
  for (const [key, listing] of ledger) {
    for (const entry of listing.entries) {
      if (owners.has(key) && owners.get(key) === entry.id) continue;
      rows.push({
        admin_key: key,
        id: entry.id,
        resource: entry.resource,
        path: entry.path,
        branch: entry.branch,
        gc: entry.gc,
      });
    }
  }
  return rows;
}

function planSteps(sections: PruneSections): PlanStep[] {
  const steps: PlanStep[] = [];
  for (const row of sections.stale) {
    for (const resource of row.resources)
      steps.push({ step: "destroy resource", target: `${row.id}/${resource}` });
    steps.push({ step: "remove stale registration", target: row.path });
  }
  for (const row of sections.landed) {
    if (row.kind === "worktree") {
      steps.push({
        step: "tear down landed berth",
        target: row.path,
        detail: `at ${shortOid(row.tip)}`,
      });
      if (row.delete_branch)
        steps.push({ step: "delete landed branch", target: row.delete_branch });
    } else {
      steps.push({
        step: "delete landed branch",
        target: row.branch,
        detail: `at ${shortOid(row.tip)}`,
      });
    }
  }
  for (const row of sections.orphaned) {
    steps.push({
      step: row.gc ? "destroy orphaned resource" : "keep orphaned resource (gc = false)",
      target: `${row.id}/${row.resource}`,
    });
  }
  for (const row of sections.contained) {
    steps.push({
      step: "offer: reclaim contained berth (only with --contained)",
      target: row.path,
      detail: `${row.branch} at ${shortOid(row.tip)} is inside ${row.container} at ${shortOid(row.container_tip)} (+${row.container_ahead}); the branch ref is kept`,
    });
  }
  return steps;
}

/** Ignored files and bytes in the checkouts an apply would remove: they go with them (spec 7). */
export async function measureIgnored(paths: readonly string[]): Promise<DiskUsage> {
  const total: DiskUsage = { files: 0, bytes: 0 };
  for (const path of paths) {
    const usage = await ignoredFilesOf(path);
    total.files += usage.files;
    total.bytes += usage.bytes;
  }
  return total;
}
