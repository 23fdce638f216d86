import { type ChangedCommit, readChangedCommits } from "../../git/changed-files.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import type { Repository } from "../repo/repository.js";
import { type FleetActivity, readFleetActivity } from "./activity.js";
import { classifyContainment, type FleetContainment } from "./containment.js";
import { findOverlaps, type Overlap, type OverlapCandidate } from "./overlaps.js";
import { type ReceiptView, readReceiptViews } from "./receipt-state.js";
import { type FleetSurvey, type SurveyOptions, surveyFleet, type WorktreeFacts } from "./survey.js";

/**
 * The fleet reading: the one place a verb's picture of the fleet is put
 * together from its parts. status (and so the desk) and await read here;
 * prune's plan composes the same parts (plus its ledger). In order:
 *   1. the survey (survey.ts), with a `git status` of the worktrees asked for;
 *   2. side by side, for the worktrees in scope: their activity (activity.ts,
 *      files only) and, when asked, their gate receipts (receipt-state.ts,
 *      one cat-file for the whole set);
 *   3. the containment classification (containment.ts) over the whole
 *      survey, in memory: a worktree out of scope has no activity, so it is
 *      never idle;
 *   4. when asked (status of the fleet), the overlaps (overlaps.ts): one
 *      `git log --name-only` over the worktrees' tips, started as soon as the
 *      survey knows them, so it runs beside the statuses.
 * `classify: false` stops after step 1: await reads the survey once and then
 * follows live state itself.
 */

export interface SurveyReadingOptions {
  /** Which worktrees get a `git status` (default: all, started at once). */
  readStatusOf?: SurveyOptions["readStatusOf"];
  /** Only the survey: no activity, receipts or containment. */
  classify: false;
}

export interface FleetReadingOptions {
  /** Which worktrees get a `git status` (default: all, started at once). */
  readStatusOf?: SurveyOptions["readStatusOf"];
  /** The clock, read once the survey is in: the instant activity and the idle clause are judged at. */
  now: () => Date;
  /** Which worktrees get their activity (and receipts) read (default: all). */
  inScope?: (worktree: WorktreeFacts) => boolean;
  /** Read the gate receipts of the worktrees in scope (default: not read). */
  receipts?: boolean;
  /** Find the unlanded berths that change the same files (default: not read). */
  overlaps?: boolean;
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
  let changes: Promise<ChangedCommit[] | null> | null = null;
  const wantOverlaps = options.classify !== false && options.overlaps === true;
  const survey = await surveyFleet(repo, {
    ...(options.readStatusOf === undefined ? {} : { readStatusOf: options.readStatusOf }),
    ...(wantOverlaps
      ? {
          onRefs: ({ trunk, entries }) => {
            const tips = entries.slice(1).flatMap((e) => (e.head === null ? [] : [e.head]));
            changes =
              trunk.tip === null
                ? Promise.resolve(null)
                : readChangedCommits(repo.location.cwd, tips, trunk.tip).catch(() => null);
          },
        }
      : {}),
  });
  if (options.classify === false) return { survey };
  const now = options.now();
  const wanted = options.inScope;
  const inScope = wanted === undefined ? survey.worktrees : survey.worktrees.filter(wanted);
  // Files only (logbook, reflogs, admin dirs) plus one cat-file for receipt trees; nothing written.
  const [receipts, activity] = await Promise.all([
    options.receipts === true
      ? readReceiptViews(repo.location.cwd, inScope, gateDefinitionOf(repo.config.gate))
      : new Map<string, ReceiptView>(),
    readFleetActivity(repo, inScope, now),
  ]);
  // No git process: the survey's commit graph answers every ancestry question.
  const containment = classifyContainment({
    survey,
    activityOf: (w) => activity.worktrees.get(w.entry.path),
    now,
  });
  const overlaps = wantOverlaps
    ? overlapReading(survey, containment, await (changes ?? Promise.resolve(null)))
    : null;
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
