import { join } from "node:path";
import { isObjectId } from "../git/object-id.js";
import { appendMonthLine, listMonthFiles, readTextFrom } from "./month-files.js";
import { sharedStateDir } from "./paths.js";

/**
 * The landing log (spec section 2): `<common>/berth/landings/YYYY-MM.jsonl`,
 * one line per landing, kept 12 months. It answers "did X land, and as what?"
 * after X's branch and checkout are gone (`await --landed`, `await --green`,
 * status). Unlike the unfinished-landing file (a partial accept's resume
 * record, src/io/unfinished-landing.ts), it is never deleted when the landing
 * completes: it is history, appended once per landing
 * (src/core/landing/landings.ts decides when).
 */

export const LANDING_LOG_MONTHS_KEPT = 12;

/** An earlier stage of the train whose commits landed with the entry's branch. */
export interface LandedStage {
  branch: string;
  tip: string;
}

export interface LandingEntry {
  version: 1;
  /** The berth id, or null for a branch landed without a checkout. */
  id: string | null;
  branch: string;
  /** The branch tip that landed (the trunk now contains it). */
  tip: string;
  trunk: string;
  /** The trunk tip before and after the landing. */
  old_trunk: string;
  new_trunk: string;
  /** How the landed commit was proved: an honored receipt or a gate run by the lander. */
  proved_by: "receipt" | "gate";
  /** Earlier stages whose tips this landing brought onto the trunk (absent in older lines). */
  stages: LandedStage[];
  at: string;
}

export function landingLogDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "landings");
}

/** One `write()` on an O_APPEND descriptor (src/io/month-files.ts); throws on I/O errors. */
export function appendLandingEntry(commonDir: string, entry: LandingEntry): void {
  appendMonthLine(
    landingLogDir(commonDir),
    new Date(entry.at),
    `${JSON.stringify(entry)}\n`,
    LANDING_LOG_MONTHS_KEPT,
  );
}

export interface ReadLandingOptions {
  /** Read only the newest N month files (status's recent landings need two). */
  newestFiles?: number;
}

/** Every readable entry, oldest first; torn or foreign lines are skipped. */
export async function readLandingEntries(
  commonDir: string,
  options: ReadLandingOptions = {},
): Promise<LandingEntry[]> {
  const dir = landingLogDir(commonDir);
  let names = await listMonthFiles(dir);
  if (options.newestFiles !== undefined) names = names.slice(-options.newestFiles);
  const entries: LandingEntry[] = [];
  for (const name of names) {
    const read = await readTextFrom(join(dir, name), 0);
    if (read === null) continue;
    for (const line of read.text.split("\n")) {
      const entry = parseLandingLine(line);
      if (entry !== null) entries.push(entry);
    }
  }
  return entries;
}

export function parseLandingLine(line: string): LandingEntry | null {
  if (line.trim() === "") return null;
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (r.version !== 1) return null;
  if (!(r.id === null || typeof r.id === "string")) return null;
  if (typeof r.branch !== "string" || typeof r.trunk !== "string") return null;
  for (const key of ["tip", "old_trunk", "new_trunk"]) {
    if (typeof r[key] !== "string" || !isObjectId(r[key] as string)) return null;
  }
  if (r.proved_by !== "receipt" && r.proved_by !== "gate") return null;
  if (typeof r.at !== "string" || Number.isNaN(Date.parse(r.at))) return null;
  const stages = parseStages(r.stages);
  if (stages === null) return null;
  return {
    version: 1,
    id: r.id as string | null,
    branch: r.branch,
    tip: r.tip as string,
    trunk: r.trunk,
    old_trunk: r.old_trunk as string,
    new_trunk: r.new_trunk as string,
    proved_by: r.proved_by,
    stages,
    at: r.at,
  };
}

/** Absent (an older line) reads as none; anything but a list of {branch, tip} is not an entry. */
function parseStages(raw: unknown): LandedStage[] | null {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) return null;
  const stages: LandedStage[] = [];
  for (const item of raw) {
    if (item === null || typeof item !== "object") return null;
    const { branch, tip } = item as Record<string, unknown>;
    if (typeof branch !== "string" || typeof tip !== "string" || !isObjectId(tip)) return null;
    stages.push({ branch, tip });
  }
  return stages;
}
