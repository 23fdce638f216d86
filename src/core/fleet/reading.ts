import { gateDefinitionOf } from "../landing/gate-definition.js";
import type { Repository } from "../repo/repository.js";
import { type FleetActivity, readFleetActivity } from "./activity.js";
import { classifyContainment, type FleetContainment } from "./containment.js";
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
 *      never idle.
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
  const survey = await surveyFleet(
    repo,
    options.readStatusOf === undefined ? {} : { readStatusOf: options.readStatusOf },
  );
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
  return { survey, inScope, activity, containment, receipts };
}
