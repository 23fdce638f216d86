import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { readJsonFile, writeJsonAtomic } from "./atomic.js";
import { sharedStateDir } from "./paths.js";

/**
 * Landing records: `<common>/berth/landing/<id>.json`, written by `accept`
 * before it moves the trunk and removed once the berth is fully torn down.
 * A run that stops after the trunk moved (a failed destroy, a crash) leaves
 * the record, so the next `berth accept` knows what landed, from what, and
 * whether the main checkout's files still have to follow the trunk.
 */

export interface LandingRecord {
  version: 1;
  id: string;
  branch: string;
  /** The berth's checkout as registered. */
  path: string;
  trunk: string;
  /** The trunk tip the landing moved from (the compare-and-swap's old value). */
  old: string;
  /** The validated commit the trunk moved to. */
  new: string;
  /** The branch's own tip that landed, when the trunk moved to a commit holding it (an integration). */
  tip?: string;
  validated_by: "receipt" | "gate";
  /** The main checkout, when it had the trunk checked out: its files follow the trunk. */
  main_checkout: string | null;
  created_at: string;
}

const RecordSchema = v.object({
  version: v.literal(1),
  id: v.string(),
  branch: v.string(),
  path: v.string(),
  trunk: v.string(),
  old: v.string(),
  new: v.string(),
  tip: v.exactOptional(v.string()),
  validated_by: v.picklist(["receipt", "gate"]),
  main_checkout: v.nullable(v.string()),
  created_at: v.string(),
});

export function landingDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "landing");
}

function recordPath(commonDir: string, id: string): string {
  return join(landingDir(commonDir), `${id}.json`);
}

/** Temp file + rename: a reader sees the whole record or none. */
export async function writeLandingRecord(commonDir: string, record: LandingRecord): Promise<void> {
  await writeJsonAtomic(recordPath(commonDir, record.id), record);
}

export async function deleteLandingRecord(commonDir: string, id: string): Promise<void> {
  await rm(recordPath(commonDir, id), { force: true });
}

/** Every readable record; a file that is not one is skipped (it proves nothing). */
export async function readLandingRecords(commonDir: string): Promise<LandingRecord[]> {
  let names: string[];
  try {
    names = await readdir(landingDir(commonDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const records: LandingRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const raw = await readJsonFile(join(landingDir(commonDir), name)).catch(() => null);
    const parsed = v.safeParse(RecordSchema, raw);
    if (parsed.success) records.push(parsed.output);
  }
  return records;
}
