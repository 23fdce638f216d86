import { appendNote } from "../../git/notes.js";
import { appendLandingEntry, type LandingEntry, readLandingEntries } from "../../io/landing-log.js";
import type { LandingRecord } from "../../io/unfinished-landing.js";
import { shortOid } from "../../text.js";
import type { Repository } from "../repo/repository.js";
import { publishNotes } from "./receipt-notes.js";

/**
 * Landings as history: the one place a landing is recorded, and the one
 * place "did branch X land, and as what?" is read back (await, status).
 * Recording, in order:
 *   1. nothing when the log already names this landing (the same branch, tip
 *      and new trunk tip): a partial accept's finish never records twice;
 *   2. one line in the landing log (src/io/landing-log.ts);
 *   3. a note on the landed commit under `refs/notes/berth-landings`, so the
 *      fact travels with a push of that ref.
 * The trunk has already moved when this runs, so nothing here can fail the
 * landing: a write that fails, or a note git cannot sign for lack of a
 * committer identity, becomes a hint.
 */

/** `refs/notes/<this>`: the notes ref landings are attached under. */
export const LANDING_NOTES_REF = "berth-landings";

/** `recordLanding` for a fleet: with `[remote].publish_receipts`, the landing note is pushed too. */
export function recordLandingFor(
  repo: Repository,
  gitCwd: string,
  entry: LandingEntry,
): Promise<string[]> {
  const { name, publish_receipts } = repo.config.remote;
  return recordLanding(repo.location.commonDir, gitCwd, entry, publish_receipts ? name : null);
}

/** Records one landing once; returns the hints for whatever could not be written. */
export async function recordLanding(
  commonDir: string,
  gitCwd: string,
  entry: LandingEntry,
  /** `[remote].name` when `publish_receipts` is on: the landing note is pushed there too (0053). */
  publishTo: string | null = null,
): Promise<string[]> {
  const known = await readLandingEntries(commonDir).catch(() => []);
  if (known.some((e) => sameLanding(e, entry))) return [];
  const hints: string[] = [];
  try {
    appendLandingEntry(commonDir, entry);
  } catch (error) {
    hints.push(
      `the landing log could not be written (${(error as Error).message}); await answers from the trunk meanwhile`,
    );
  }
  const note = await appendNote(
    gitCwd,
    LANDING_NOTES_REF,
    entry.new_trunk,
    `${JSON.stringify(entry)}\n`,
  );
  if (note.fate === "no_identity") {
    hints.push(
      `no git identity is configured, so the landing note on ${shortOid(entry.new_trunk)} (refs/notes/${LANDING_NOTES_REF}) was skipped; the landing log has it (git config user.name / user.email)`,
    );
  } else if (note.fate === "failed") {
    hints.push(
      `the landing note on ${shortOid(entry.new_trunk)} (refs/notes/${LANDING_NOTES_REF}) was not written: ${note.message}`,
    );
  } else if (publishTo !== null) {
    const published = await publishNotes(gitCwd, publishTo, LANDING_NOTES_REF);
    if (!published.startsWith("published")) hints.push(`the landing note was ${published}`);
  }
  return hints;
}

function sameLanding(a: LandingEntry, b: LandingEntry): boolean {
  return a.branch === b.branch && a.tip === b.tip && a.new_trunk === b.new_trunk;
}

/** One landing as seen from one branch: the entry's own branch, or an earlier stage of it. */
export interface BranchLanding {
  id: string | null;
  /** The asked-about branch. */
  branch: string;
  /** Its tip that landed. */
  tip: string;
  /** The trunk tip the landing moved to (it contains `tip`). */
  new_trunk: string;
  at: string;
  /** The branch landed as an earlier stage of `landed_with`; null when it was the one accepted. */
  landed_with: string | null;
}

/** Every landing that names `branch`, as itself or as a stage, newest first. */
export function landingsOf(entries: readonly LandingEntry[], branch: string): BranchLanding[] {
  const found: BranchLanding[] = [];
  for (const entry of entries) {
    const { new_trunk, at } = entry;
    if (entry.branch === branch) {
      found.push({ id: entry.id, branch, tip: entry.tip, new_trunk, at, landed_with: null });
    }
    for (const stage of entry.stages) {
      if (stage.branch === branch) {
        found.push({ id: null, branch, tip: stage.tip, new_trunk, at, landed_with: entry.branch });
      }
    }
  }
  return newestFirst(found);
}

/** By time, newest first; equal times keep the log's order reversed (a later line is newer). */
function newestFirst<T extends { at: string }>(items: readonly T[]): T[] {
  return [...items].reverse().sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
}

/** A recent landing, as status lists it. */
export interface RecentLanding {
  id: string | null;
  branch: string;
  tip: string;
  new_trunk: string;
  at: string;
}

/** How far back status lists landings. */
export const RECENT_LANDINGS_MS = 24 * 60 * 60 * 1000;
/** The window spans at most two month files. */
const RECENT_MONTH_FILES = 2;

/** Landings of the last RECENT_LANDINGS_MS before `now`, newest first; none when unreadable. */
export async function readRecentLandings(commonDir: string, now: Date): Promise<RecentLanding[]> {
  const entries = await readLandingEntries(commonDir, { newestFiles: RECENT_MONTH_FILES }).catch(
    () => [],
  );
  const since = now.getTime() - RECENT_LANDINGS_MS;
  return newestFirst(entries.filter((e) => Date.parse(e.at) >= since)).map((e) => ({
    id: e.id,
    branch: e.branch,
    tip: e.tip,
    new_trunk: e.new_trunk,
    at: e.at,
  }));
}

/** The landing an unfinished-landing record describes, recorded unless it already is. */
export function recordUnfinishedLanding(
  repo: Repository,
  record: LandingRecord,
): Promise<string[]> {
  return recordLandingFor(repo, repo.mainPath, {
    version: 1,
    id: record.id,
    branch: record.branch,
    tip: record.tip ?? record.new,
    trunk: record.trunk,
    old_trunk: record.old,
    new_trunk: record.new,
    proved_by: record.validated_by,
    stages: [],
    // Written just before the trunk moved: the landing's time, within moments.
    at: record.created_at,
  });
}
