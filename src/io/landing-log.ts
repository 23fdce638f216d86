import { join } from "node:path";
import { appendMonthLine, listMonthFiles, readTextFrom } from "./month-files.js";
import { sharedStateDir } from "./paths.js";

/**
 * The landing log (spec section 2): `<common>/berth/landings/YYYY-MM.jsonl`,
 * one line per landing, kept 12 months. It answers "did X land, and as what?"
 * after X's branch and checkout are gone (`await --landed`, `await --green`,
 * status). Unlike the unfinished-landing file, it is never deleted when the
 * landing completes: it is history, appended once per landed branch.
 */

export const LANDING_LOG_MONTHS_KEPT = 12;

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
  at: string;
}

export function landingLogDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "landings");
}

export function appendLandingEntry(commonDir: string, entry: LandingEntry): void {
  appendMonthLine(
    landingLogDir(commonDir),
    new Date(entry.at),
    `${JSON.stringify(entry)}\n`,
    LANDING_LOG_MONTHS_KEPT,
  );
}

/** Every readable entry, oldest first; torn or foreign lines are skipped. */
export async function readLandingEntries(commonDir: string): Promise<LandingEntry[]> {
  const dir = landingLogDir(commonDir);
  const entries: LandingEntry[] = [];
  for (const name of await listMonthFiles(dir)) {
    const read = await readTextFrom(join(dir, name), 0);
    if (read === null) continue;
    for (const line of read.text.split("\n")) {
      const entry = parseLandingLine(line);
      if (entry !== null) entries.push(entry);
    }
  }
  return entries;
}

const OID = /^[0-9a-f]{40}$/;

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
    if (typeof r[key] !== "string" || !OID.test(r[key] as string)) return null;
  }
  if (r.proved_by !== "receipt" && r.proved_by !== "gate") return null;
  if (typeof r.at !== "string" || Number.isNaN(Date.parse(r.at))) return null;
  return {
    version: 1,
    id: r.id as string | null,
    branch: r.branch,
    tip: r.tip as string,
    trunk: r.trunk,
    old_trunk: r.old_trunk as string,
    new_trunk: r.new_trunk as string,
    proved_by: r.proved_by,
    at: r.at,
  };
}
