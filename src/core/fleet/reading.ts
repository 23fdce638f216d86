import { type ChangedCommit, readChangedCommits } from "../../git/changed-files.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import type { Repository } from "../repo/repository.js";
import { type FleetActivity, readFleetActivity } from "./activity.js";
import { type CheckoutStates, checkoutStates } from "./checkout-states.js";
import { classifyContainment, type FleetContainment } from "./containment.js";
import { findOverlaps, type Overlap, type OverlapCandidate } from "./overlaps.js";
import { prepareReceiptViews, type ReceiptView } from "./receipt-state.js";
import {
  beginSurvey,
  type FleetSurvey,
  type PendingSurvey,
  type SurveyOptions,
  type WorktreeFacts,
  type WorktreeSkeleton,
} from "./survey.js";

/**
 * The fleet reading: the one place a verb's picture of the fleet is put
 * together from its parts. status (and so the desk) and await read here;
 * prune's plan composes the same parts (plus its ledger). In order:
 *   1. the survey (survey.ts) starts: a `git status` of the worktrees asked
 *      for, the worktree list, the branches and the commit graph;
 *   2. as soon as the worktrees are known, and while their statuses still
 *      run: the activity of the worktrees in scope (activity.ts, files only)
 *      and, when asked, their gate receipts (receipt-state.ts: the files and
 *      one cat-file for the whole set);
 *   3. once the last status is in: each receipt judged against its tree's
 *      cleanliness, and the containment classification (containment.ts)
 *      over the whole survey, in memory: a worktree out of scope has no
 *      activity, so it is never idle;
 *   4. when asked (status of the fleet), the overlaps (overlaps.ts): one
 *      `git log --name-only` over the worktrees' tips, started as soon as the
 *      worktrees are known, so it runs beside the statuses.
 * Nothing but in-memory work follows the last status (docs/decisions/0030).
 * `classify: false` stops after step 1: await reads the survey once and then
 * follows live state itself.
 */

interface ReadingHooks {
  /** Which worktrees get a `git status` (default: all, started at once). */
  readStatusOf?: SurveyOptions["readStatusOf"];
  /** Told each `git status` as it arrives (for a table drawn while the survey runs). */
  onStatus?: SurveyOptions["onStatus"];
  /** Told the survey's skeleton once the worktrees are known, before their statuses are in. */
  onSkeleton?: (pending: PendingSurvey) => void;
  /** The status of the checkout berth runs in, already under way (survey.ts). */
  currentStatus?: SurveyOptions["currentStatus"];
  /** The worktree list and the branches, already under way (survey.ts). */
  lists?: SurveyOptions["lists"];
  /** The fleet's statuses, already under way (early-statuses.ts). */
  early?: SurveyOptions["early"];
}

export interface SurveyReadingOptions extends ReadingHooks {
  /** Only the survey: no activity, receipts or containment. */
  classify: false;
}

export interface FleetReadingOptions extends ReadingHooks {
  /**
   * The clock, read once the worktrees are known (before their statuses are
   * in): the instant activity and the idle clause are judged at. Read that
   * early it can only make a worktree look more recently active, never idle
   * sooner.
   */
  now: () => Date;
  /** Which worktrees get their activity (and receipts) read (default: all). */
  inScope?: (worktree: WorktreeSkeleton) => boolean;
  /** Read the gate receipts of the worktrees in scope (default: not read). */
  receipts?: boolean;
  /** Find the unlanded berths that change the same files (default: not read). */
  overlaps?: boolean;
  /** Where the idle clause reads each checkout's git operation (default: read here, once each). */
  operationOf?: CheckoutStates["operation"];
  classify?: true;
}

/** The overlaps, when asked: `unreadable` when git could not list the changes (then none are listed). */
export interface OverlapReading {
  groups: Overlap[];
  unreadable: boolean;
}

export interface SurveyReading {
  survey: FleetSurvey;
}

export interface FleetReading extends SurveyReading {
  /** The worktrees in scope, in survey order. */
  inScope: WorktreeFacts[];
  /** Activity of the worktrees in scope, keyed by path. */
  activity: FleetActivity;
  containment: FleetContainment;
  /** Receipt views of the worktrees in scope, keyed by path; empty unless asked. */
  receipts: Map<string, ReceiptView>;
  /** null unless asked. */
  overlaps: OverlapReading | null;
}

export function readFleet(repo: Repository, options: SurveyReadingOptions): Promise<SurveyReading>;
export function readFleet(repo: Repository, options: FleetReadingOptions): Promise<FleetReading>;
export async function readFleet(
  repo: Repository,
  options: SurveyReadingOptions | FleetReadingOptions,
): Promise<SurveyReading | FleetReading> {
  const pending = await beginSurvey(repo, {
    ...(options.readStatusOf === undefined ? {} : { readStatusOf: options.readStatusOf }),
    ...(options.onStatus === undefined ? {} : { onStatus: options.onStatus }),
    ...(options.currentStatus === undefined ? {} : { currentStatus: options.currentStatus }),
    ...(options.lists === undefined ? {} : { lists: options.lists }),
    ...(options.early === undefined ? {} : { early: options.early }),
  });
  options.onSkeleton?.(pending);
  if (options.classify === false) return { survey: await pending.complete() };
  const now = options.now();
  const wanted = options.inScope;
  const scoped = wanted === undefined ? pending.worktrees : pending.worktrees.filter(wanted);
  const trunkTip = pending.trunk.tip;
  const changes: Promise<ChangedCommit[] | null> =
    options.overlaps !== true || trunkTip === null
      ? Promise.resolve(null)
      : readChangedCommits(
          repo.location.cwd,
          pending.worktrees.slice(1).flatMap((w) => (w.entry.head === null ? [] : [w.entry.head])),
          trunkTip,
        ).catch(() => null);
  // Files only (logbook, reflogs, admin dirs) plus one cat-file for receipt
  // trees, nothing written — all while the statuses run.
  const [judgeReceipts, activity, survey, changed] = await Promise.all([
    options.receipts === true
      ? prepareReceiptViews(repo.location.cwd, scoped, gateDefinitionOf(repo.config.gate))
      : null,
    readFleetActivity(repo, scoped, now),
    pending.complete(),
    changes,
  ]);
  const scopedPaths = new Set(scoped.map((w) => w.entry.path));
  const inScope = survey.worktrees.filter((w) => scopedPaths.has(w.entry.path));
  const receipts = judgeReceipts === null ? new Map<string, ReceiptView>() : judgeReceipts(inScope);
  // No git process: the survey's commit graph answers every ancestry question.
  const containment = classifyContainment({
    survey,
    activityOf: (w) => activity.worktrees.get(w.entry.path),
    operationOf: options.operationOf ?? checkoutStates().operation,
    now,
  });
  const overlaps = options.overlaps === true ? overlapReading(survey, containment, changed) : null;
  return { survey, inScope, activity, containment, receipts, overlaps };
}

/**
 * The candidates: live berths (a ready marker, on a branch) with commits of
 * their own, not landed; contained stages are left out, their work travels
 * inside their container.
 */
function overlapReading(
  survey: FleetSurvey,
  containment: FleetContainment,
  commits: ChangedCommit[] | null,
): OverlapReading {
  if (commits === null) return { groups: [], unreadable: survey.trunk.tip !== null };
  const candidates: OverlapCandidate[] = [];
  for (const w of survey.worktrees) {
    const { entry, marker } = w;
    if (w.isMain || marker === null || entry.prunable || w.landed) continue;
    if (entry.branch === null || entry.head === null || w.ahead === null || w.ahead === 0) continue;
    if (containment.worktrees.get(entry.path)?.contained) continue;
    candidates.push({ id: marker.id, branch: entry.branch, tip: entry.head });
  }
  return { groups: findOverlaps(candidates, commits), unreadable: false };
}
