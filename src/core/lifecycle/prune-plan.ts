import type { Context } from "../../context.js";
import { branchesMadeByBerth } from "../../io/branch-records.js";
import { type BriefRecord, readBriefRecords } from "../../io/briefs.js";
import { addDiskUsage, type DiskUsage, NO_DISK_USAGE } from "../../io/disk-usage.js";
import { type LedgerEntry, readWholeLedger } from "../../io/ledger.js";
import type { PlanStep } from "../../result.js";
import { naturalCompare, shortOid } from "../../text.js";
import { checkoutStates } from "../fleet/checkout-states.js";
import type { ContainmentEvidence } from "../fleet/containment.js";
import type { OperationOf } from "../fleet/held-branches.js";
import { onTrunk } from "../fleet/landed.js";
import { readFleet } from "../fleet/reading.js";
import type { FleetSurvey, WorktreeFacts } from "../fleet/survey.js";
import { openRepository, type Repository } from "../repo/repository.js";
import {
  branchToDelete,
  branchVerdict,
  checkedOutElsewhere,
  madeByBerth,
} from "./branch-deletion.js";
import { findHeadsOnNoRef, landedWithheld, withholdNestedWork } from "./prune-guards.js";
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
  /** Its HEAD commit is on no ref (a detached commit): a recovery ref is written before the registration goes. */
  head_on_no_ref: boolean;
}

export interface LandedWorktreeRow {
  kind: "worktree";
  id: string;
  path: string;
  branch: string | null;
  tip: string;
  admin_key: string;
  resources: string[];
  /** Integrated, not landed (squash or rebase merged): a recovery ref is written before removal. */
  integrated: boolean;
  /** Deleted after the teardown (compare-and-swap, re-checked merged). */
  delete_branch: string | null;
  /** The ignored files that go with the checkout (spec 7), measured for the plan. */
  ignored: DiskUsage;
}

export interface LandedBranchRow {
  kind: "branch";
  branch: string;
  tip: string;
  /** Integrated, not landed: a recovery ref is written before the delete. */
  integrated: boolean;
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
  /** The ignored files that go with the checkout (spec 7), measured for the plan. */
  ignored: DiskUsage;
}

/** A landed branch under the prefix that berth has no record of making: a person deletes it. */
export interface UnrecordedBranchRow {
  branch: string;
  tip: string;
}

export interface PruneSections {
  stale: StaleRow[];
  landed: LandedRow[];
  orphaned: OrphanRow[];
  contained: ContainedRow[];
  /** Listed only: landed branches berth did not make (spec section 2); never deleted. */
  not_made_by_berth: UnrecordedBranchRow[];
}

export interface PrunePlan extends PruneReading {
  steps: PlanStep[];
}

/** Everything the classification needs, read fresh: the plan and the apply's re-check share it. */
export interface PruneReading {
  repo: Repository;
  survey: FleetSurvey;
  sections: PruneSections;
  hints: string[];
  /** Why a checkout is not contained (the containment predicate's clause), by path. */
  notContained: ReadonlyMap<string, string>;
}

export async function planPrune(ctx: Context): Promise<PrunePlan> {
  const repo = await openRepository(ctx);
  const reading = await readPruneReading(ctx, repo);
  await measureIgnoredOfRemovals(reading.sections);
  return { ...reading, steps: planSteps(reading.sections) };
}

/** The fleet reading (fleet/reading.ts) plus the ledger and the branch records: the whole picture. */
export async function readPruneReading(ctx: Context, repo: Repository): Promise<PruneReading> {
  // Each checkout's git dir read once: which branch it rebases, what operation it is in.
  const operationOf = checkoutStates().operation;
  const [{ survey, activity, containment }, ledger] = await Promise.all([
    readFleet(repo, { now: () => ctx.now(), operationOf }),
    readWholeLedger(repo.location.commonDir),
  ]);
  const made = branchesMadeByBerth(repo.location.commonDir);
  const hints: string[] = [];
  const resourcesOf = (w: WorktreeFacts): string[] => {
    if (w.adminKey === null || w.marker === null) return [];
    const entries = ledger.get(w.adminKey)?.entries ?? [];
    return entries.filter((e) => e.id === w.marker?.id).map((e) => e.resource);
  };

  const sections: PruneSections = {
    stale: [],
    landed: [],
    orphaned: [],
    contained: [],
    not_made_by_berth: [],
  };
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
          head_on_no_ref: false,
        });
      }
      continue;
    }
    if ((w.landed || w.integrated) && owned && w.entry.head !== null) {
      const why = landedWithheld(w, activity.worktrees.get(w.entry.path), operationOf(w));
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
        integrated: !w.landed,
        delete_branch: branchToDelete({
          branch,
          trunk: survey.trunk.name,
          prefix: repo.config.repository.branch_prefix,
          madeByBerth: madeByBerth(made, branch, w.marker),
          heldByAnotherCheckout: checkedOutElsewhere(survey.worktrees, branch, w, operationOf),
          landed: w.landed,
          // An integrated berth's commits are not on the trunk: the apply writes a recovery ref first.
          recovered: !w.landed,
        }),
        ignored: NO_DISK_USAGE,
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
        ignored: NO_DISK_USAGE,
        ...verdict.evidence,
      });
    }
  }
  await withholdNestedWork(repo, sections, hints);
  await findHeadsOnNoRef(repo, survey, sections.stale);
  const records = readBriefRecords(repo.location.commonDir);
  const branches = landedBranches(repo, survey, made, records, operationOf);
  sections.landed.push(...branches.deletable);
  sections.not_made_by_berth = branches.unrecorded;
  sections.orphaned = orphanedEntries(survey, ledger);
  for (const listing of ledger.values()) {
    for (const problem of listing.problems) {
      hints.push(`unreadable ledger file ${problem.file}: ${problem.reason} (left alone)`);
    }
  }
  const notContained = new Map<string, string>();
  for (const [path, verdict] of containment.worktrees) {
    if (!verdict.contained) notContained.set(path, verdict.reason);
  }
  return { repo, survey, sections, hints, notContained };
}

/**
 * Branches no checkout holds whose tip is on the trunk (local or remote): berth deletes those it
 * made; the ones it has no record of making are listed for a person.
 */
function landedBranches(
  repo: Repository,
  survey: FleetSurvey,
  made: ReadonlySet<string>,
  records: ReadonlyMap<string, BriefRecord>,
  operationOf: OperationOf,
): { deletable: LandedBranchRow[]; unrecorded: UnrecordedBranchRow[] } {
  const { trunk, ancestry } = survey;
  const deletable: LandedBranchRow[] = [];
  const unrecorded: UnrecordedBranchRow[] = [];
  if (trunk.tip === null) return { deletable, unrecorded };
  for (const [branch, tip] of survey.branches) {
    // Parked before its first commit: on the trunk, but nothing of it landed. Its branch,
    // title and brief are what park promised to keep (status lists it as parked).
    if (records.get(branch)?.parked?.from_tip === tip) continue;
    const integrated = survey.integratedBranches.has(branch);
    const held = checkedOutElsewhere(survey.worktrees, branch, null, operationOf);
    const verdict = branchVerdict({
      branch,
      trunk: trunk.name,
      prefix: repo.config.repository.branch_prefix,
      madeByBerth: made.has(branch),
      heldByAnotherCheckout: held,
      landed: onTrunk(tip, survey.trunkTips, ancestry),
      recovered: integrated,
    });
    if (verdict.delete) deletable.push({ kind: "branch", branch, tip, integrated });
    // Listed with `git branch -d` for a person: never one a checkout holds, where git refuses that.
    else if (verdict.because === "not_made_by_berth" && !held) unrecorded.push({ branch, tip });
  }
  const byName = (a: { branch: string }, b: { branch: string }) =>
    naturalCompare(a.branch, b.branch);
  return { deletable: deletable.sort(byName), unrecorded: unrecorded.sort(byName) };
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
    if (row.head_on_no_ref && row.head !== null) {
      steps.push({
        step: "write recovery ref",
        target: row.head,
        detail: "its HEAD commit is on no branch or tag",
      });
    }
    for (const resource of row.resources)
      steps.push({ step: "destroy resource", target: `${row.id}/${resource}` });
    steps.push({ step: "remove stale registration", target: row.path });
  }
  for (const row of sections.landed) {
    if (row.kind === "worktree") {
      if (row.integrated) steps.push({ step: "write recovery ref", target: row.tip });
      steps.push({
        step: "tear down landed berth",
        target: row.path,
        detail: `at ${shortOid(row.tip)}`,
      });
      if (row.delete_branch)
        steps.push({ step: "delete landed branch", target: row.delete_branch });
    } else {
      if (row.integrated) steps.push({ step: "write recovery ref", target: row.tip });
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

/**
 * Measures, for the plan only, the ignored files of every checkout it would
 * remove (spec 7: every plan that removes a checkout names them, per berth).
 * The apply's re-check reads the fleet again without measuring.
 */
async function measureIgnoredOfRemovals(sections: PruneSections): Promise<void> {
  const rows = [
    ...sections.landed.flatMap((r) => (r.kind === "worktree" ? [r] : [])),
    ...sections.contained,
  ];
  await Promise.all(
    rows.map(async (row) => {
      row.ignored = await ignoredFilesOf(row.path);
    }),
  );
}

/** The ignored files that go with the checkouts an apply removes, added up. */
export function ignoredOfRemovals(sections: PruneSections, contained: boolean): DiskUsage {
  const rows = [
    ...sections.landed.flatMap((r) => (r.kind === "worktree" ? [r] : [])),
    ...(contained ? sections.contained : []),
  ];
  return addDiskUsage(rows.map((r) => ({ root: r.id, usage: r.ignored })));
}
