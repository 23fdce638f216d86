import type { Repository } from "../repo/repository.js";
import { type FleetActivity, readFleetActivity } from "./activity.js";
import { classifyContainment, type FleetContainment, prepareContainment } from "./containment.js";
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
 *      activity, so it is never idle.
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
  classify?: true;
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
  });
  options.onSkeleton?.(pending);
  if (options.classify === false) return { survey: await pending.complete() };
  const now = options.now();
  const wanted = options.inScope;
  const scoped = wanted === undefined ? pending.worktrees : pending.worktrees.filter(wanted);
  prepareContainment();
  // Files only (logbook, reflogs, admin dirs) plus one cat-file for receipt
  // trees, nothing written — all while the statuses run.
  const [judgeReceipts, activity, survey] = await Promise.all([
    options.receipts === true ? prepareReceiptViews(repo.location.cwd, scoped) : null,
    readFleetActivity(repo, scoped, now),
    pending.complete(),
  ]);
  const scopedPaths = new Set(scoped.map((w) => w.entry.path));
  const inScope = survey.worktrees.filter((w) => scopedPaths.has(w.entry.path));
  const receipts = judgeReceipts === null ? new Map<string, ReceiptView>() : judgeReceipts(inScope);
  // No git process: the survey's commit graph answers every ancestry question.
  const containment = classifyContainment({
    survey,
    activityOf: (w) => activity.worktrees.get(w.entry.path),
    now,
  });
  return { survey, inScope, activity, containment, receipts };
}
