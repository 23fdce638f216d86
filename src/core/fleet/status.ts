import type { Context } from "../../context.js";
import { type BriefRecord, readBriefRecords } from "../../io/briefs.js";
import type { VerbResult } from "../../result.js";
import { portFor } from "../berth/identity.js";
import type { LastAction } from "../logbook/worktree-digest.js";
import { openRepository } from "../repo/repository.js";
import type { FleetActivity } from "./activity.js";
import type { ContainmentEvidence, KeptRef } from "./containment.js";
import type { Overlap } from "./overlaps.js";
import { readFleet } from "./reading.js";
import type { ReceiptState, ReceiptView } from "./receipt-state.js";
import type { FleetSurvey, WorktreeFacts } from "./survey.js";

export type WorktreeState =
  | "main"
  | "active"
  | "landed"
  | "contained"
  | "broken"
  | "unreadable"
  | "prunable"
  | "locked";

export type { ReceiptState } from "./receipt-state.js";

/** One row of `berth status --json` (spec section 5). */
export interface StatusRow {
  id: string;
  /** The berth's one-line title (`berth start --title`, `berth describe`); null when none. */
  title: string | null;
  path: string;
  branch: string | null;
  head: string | null;
  is_main: boolean;
  is_current: boolean;
  locked: boolean;
  prunable: boolean;
  readable: boolean | null;
  clean: boolean | null;
  changed_files: number | null;
  ahead: number | null;
  behind: number | null;
  port: number | null;
  receipt: ReceiptState;
  /** Checks the receipt records; 0 = "no checks declared" (it proves a clean tree only); null = no receipt. */
  receipt_checks: number | null;
  last_activity: string | null;
  running: string | null;
  /** The newest finished verb about this worktree per the logbook. */
  last_action: LastAction | null;
  state: WorktreeState;
  /** The containment evidence for `state: "contained"` rows; null otherwise. */
  contained: ContainmentEvidence | null;
}

export interface StatusData {
  trunk: { name: string | null; tip: string | null };
  /** "fleet" from the main checkout or with --all; "local" for one berth. */
  scope: "fleet" | "local";
  worktrees: StatusRow[];
  /** Branches under the prefix with no checkout and unlanded commits (kept refs), and parked branches. */
  refs: StatusRef[];
  /** Unlanded berths changing the same files (fleet scope only; empty for one berth). */
  overlaps: Overlap[];
}

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

export interface StatusOptions {
  /** Only the checkout berth runs in. */
  local?: boolean;
  /** The whole fleet, even from inside a berth. */
  all?: boolean;
}

/** Pure observation: reads git and files, writes nothing. */
export async function readStatus(
  ctx: Context,
  options: StatusOptions,
): Promise<VerbResult<StatusData>> {
  const repo = await openRepository(ctx);
  const inMain = repo.location.toplevel === repo.mainPath;
  const scope = options.all || (!options.local && inMain) ? "fleet" : "local";
  const { survey, inScope, receipts, activity, containment, overlaps } = await readFleet(repo, {
    now: () => ctx.now(),
    ...(scope === "fleet" ? {} : { readStatusOf: (w) => w.isCurrent }),
    inScope: (w) => scope === "fleet" || w.isCurrent,
    receipts: true,
    overlaps: scope === "fleet",
  });
  // Files only: one readdir and a small read per record.
  const records = readBriefRecords(repo.location.commonDir);
  const rows = inScope.map((w) => {
    const verdict = containment.worktrees.get(w.entry.path);
    const evidence = verdict?.contained ? verdict.evidence : null;
    const row = toStatusRow(survey, w, receipts.get(w.entry.path), evidence);
    row.title = w.entry.branch === null ? null : (records.get(w.entry.branch)?.title ?? null);
    return withActivity(row, activity);
  });
  const hints: string[] = [];
  if (survey.trunk.tip === null) {
    hints.push(
      survey.trunk.name === null
        ? "no trunk found (no origin/HEAD, main or master): set [repository].trunk in berth.toml"
        : `trunk ${survey.trunk.name} does not exist yet; ahead/behind are unknown`,
    );
  }
  if (activity.logbook === "unreadable") {
    hints.push("the logbook could not be read: running and last_action are unknown");
  }
  if (overlaps?.unreadable) {
    hints.push("git could not list the berths' changed files: overlaps are unknown");
  }
  return {
    ok: true,
    verb: "status",
    data: {
      trunk: { name: survey.trunk.name, tip: survey.trunk.tip },
      scope,
      worktrees: rows,
      refs: scope === "fleet" ? statusRefs(survey, containment.refs, records) : [],
      overlaps: overlaps?.groups ?? [],
    },
    hints,
  };
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
  return refs.sort((a, b) => a.branch.localeCompare(b.branch));
}

export function toStatusRow(
  survey: FleetSurvey,
  w: WorktreeFacts,
  receipt?: ReceiptView,
  contained: ContainmentEvidence | null = null,
): StatusRow {
  const { config } = survey.repo;
  const id = w.marker?.id ?? basenameOf(w.entry.path);
  return {
    id,
    title: null,
    path: w.entry.path,
    branch: w.entry.branch,
    head: w.entry.head,
    is_main: w.isMain,
    is_current: w.isCurrent,
    locked: w.entry.locked,
    prunable: w.entry.prunable,
    readable: w.readable,
    clean: w.status ? w.status.changedFiles === 0 : null,
    changed_files: w.status ? w.status.changedFiles : null,
    ahead: w.ahead,
    behind: w.behind,
    port: w.marker
      ? portFor(w.marker.id, config.worktree.port_base, config.worktree.port_span)
      : null,
    receipt: receipt?.state ?? "missing",
    receipt_checks: receipt?.receipt ? receipt.receipt.checks.length : null,
    last_activity: null,
    running: null,
    last_action: null,
    state: classifyState(w, survey, contained !== null),
    contained,
  };
}

/** The row's `running`, `last_action` and `last_activity`, from the activity reader. */
export function withActivity(row: StatusRow, activity: FleetActivity): StatusRow {
  const facts = activity.worktrees.get(row.path);
  if (facts === undefined) return row;
  return {
    ...row,
    last_activity: facts.lastActivity?.toISOString() ?? null,
    running: facts.running,
    last_action: facts.lastAction,
  };
}

/** The single state a row shows, most urgent first. */
export function classifyState(
  w: WorktreeFacts,
  survey: FleetSurvey,
  contained = false,
): WorktreeState {
  if (w.isMain) return "main";
  if (w.entry.prunable) return "prunable";
  if (w.readable === false) return "unreadable";
  if (w.entry.locked) return "locked";
  if (w.landed) return "landed";
  if (contained) return "contained";
  if (isBroken(w, survey)) return "broken";
  return "active";
}

/** A berth whose checkout no longer matches what berth made: detached, or on another branch. */
function isBroken(w: WorktreeFacts, survey: FleetSurvey): boolean {
  if (w.marker === null) return false;
  if (w.entry.detached || w.entry.branch === null) return true;
  return w.entry.branch !== w.marker.branch || !survey.branches.has(w.entry.branch);
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
