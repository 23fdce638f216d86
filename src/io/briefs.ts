import { readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { visibleControls } from "../text.js";
import { readJsonFileSync, writeJsonAtomic } from "./atomic.js";
import { sharedStateDir } from "./paths.js";

/**
 * The per-branch record of a berth's title, brief and parking
 * (docs/decisions/0026-titles-briefs-parking.md): one JSON file per branch
 * under `<common>/berth/briefs/`, named by the branch, so it travels with the
 * branch and not with the checkout: a parked or reclaimed berth keeps it.
 * Written whole (temp file + rename); an unreadable file reads as absent.
 */

export interface ParkedState {
  /** When the berth was parked. */
  at: string;
  /** The id, checkout and tip it had: a resume takes the id back when it is free. */
  id: string;
  path: string;
  tip: string;
  /** From its ready marker, so a resumed berth keeps its fork point (the landed rule reads it). */
  from: string | null;
  from_tip: string;
}

export interface BriefRecord {
  version: 1;
  branch: string;
  /** One line; null when none was given. */
  title: string | null;
  /** Free text (markdown, a task description); null when none was given. */
  brief: string | null;
  /** Set while the branch is parked (its checkout torn down on purpose); null otherwise. */
  parked: ParkedState | null;
  updated_at: string;
}

const ParkedSchema = v.object({
  at: v.string(),
  id: v.string(),
  path: v.string(),
  tip: v.string(),
  from: v.nullable(v.string()),
  from_tip: v.string(),
});

const RecordSchema = v.object({
  version: v.literal(1),
  branch: v.string(),
  title: v.nullable(v.string()),
  brief: v.nullable(v.string()),
  parked: v.nullable(ParkedSchema),
  updated_at: v.string(),
});

export function briefsDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "briefs");
}

/** One file per branch; the name is the branch, percent-encoded (so `/` and `%` cannot collide). */
export function briefRecordPath(commonDir: string, branch: string): string {
  return join(briefsDir(commonDir), `${encodeURIComponent(branch)}.json`);
}

/** The record of one branch, or null when there is none (or it cannot be read). */
export function readBriefRecord(commonDir: string, branch: string): BriefRecord | null {
  return parseRecord(safeRead(briefRecordPath(commonDir, branch)), branch);
}

/**
 * Every record, keyed by branch: one readdir and a small synchronous read per
 * file (as the survey reads ready markers). Files that cannot be read, or
 * whose content names another branch than their file name, are skipped.
 */
export function readBriefRecords(commonDir: string): Map<string, BriefRecord> {
  const records = new Map<string, BriefRecord>();
  let names: string[];
  try {
    names = readdirSync(briefsDir(commonDir));
  } catch {
    return records;
  }
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    let branch: string;
    try {
      branch = decodeURIComponent(name.slice(0, -".json".length));
    } catch {
      continue;
    }
    const record = parseRecord(safeRead(join(briefsDir(commonDir), name)), branch);
    if (record !== null) records.set(branch, record);
  }
  return records;
}

export async function writeBriefRecord(commonDir: string, record: BriefRecord): Promise<void> {
  await writeJsonAtomic(briefRecordPath(commonDir, record.branch), record);
}

export async function removeBriefRecord(commonDir: string, branch: string): Promise<void> {
  await rm(briefRecordPath(commonDir, branch), { force: true });
}

function safeRead(path: string): unknown {
  try {
    return readJsonFileSync(path);
  } catch {
    return null;
  }
}

function parseRecord(raw: unknown, branch: string): BriefRecord | null {
  const parsed = v.safeParse(RecordSchema, raw);
  if (!parsed.success || parsed.output.branch !== branch) return null;
  const { title } = parsed.output;
  // berth writes no control character into a title (normaliseTitle refuses it); a
  // hand-edited file's title is printed on one line in many views, so it arrives escaped.
  return title === null
    ? parsed.output
    : { ...parsed.output, title: visibleControls(title, false) };
}
