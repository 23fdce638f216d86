import { readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { readJsonFileSync, writeJsonAtomic } from "./atomic.js";
import { sharedStateDir } from "./paths.js";
import type { ReadyMarker } from "./ready-marker.js";

/**
 * Branches berth made (spec section 2): `<common>/berth/branches/<id>.json`,
 * written when `start` creates a branch (or when berth first removes the
 * checkout of an older berth whose ready marker proves it made the branch),
 * deleted when berth deletes that branch. berth deletes no branch without
 * one: a branch someone made by hand under the prefix is never berth's.
 */

export interface BranchRecord {
  version: 1;
  branch: string;
  id: string;
  /** The commit the branch was created at. */
  created_tip: string;
  created_at: string;
}

const RecordSchema = v.object({
  version: v.literal(1),
  branch: v.string(),
  id: v.string(),
  created_tip: v.string(),
  created_at: v.string(),
});

export function branchRecordsDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "branches");
}

function recordPath(commonDir: string, id: string): string {
  return join(branchRecordsDir(commonDir), `${id}.json`);
}

export async function writeBranchRecord(commonDir: string, record: BranchRecord): Promise<void> {
  await writeJsonAtomic(recordPath(commonDir, record.id), record);
}

/** Forgets every record of `branch` (there is one, unless a file was copied by hand). */
export async function deleteBranchRecord(commonDir: string, branch: string): Promise<void> {
  const records = readBranchRecords(commonDir);
  for (const record of records.filter((r) => r.branch === branch)) {
    await rm(recordPath(commonDir, record.id), { force: true });
  }
}

/**
 * Every readable record, keyed by branch. Synchronous: a plan reads the whole
 * (small) folder once. A file that is not a record proves nothing and is skipped.
 */
export function readBranchRecords(commonDir: string): BranchRecord[] {
  let names: string[];
  try {
    names = readdirSync(branchRecordsDir(commonDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const records: BranchRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    let raw: unknown;
    try {
      raw = readJsonFileSync(join(branchRecordsDir(commonDir), name));
    } catch {
      continue;
    }
    const parsed = v.safeParse(RecordSchema, raw);
    if (parsed.success && `${parsed.output.id}.json` === name) records.push(parsed.output);
  }
  return records;
}

export function branchesMadeByBerth(commonDir: string): Set<string> {
  return new Set(readBranchRecords(commonDir).map((r) => r.branch));
}

/**
 * Records, from its ready marker, the branch of a berth started before branch
 * records existed, before its checkout (and so the marker) goes: a reclaimed
 * stage's kept ref stays deletable by the landed prune once its train lands.
 */
export async function recordBranchFirstSeen(
  commonDir: string,
  marker: Pick<ReadyMarker, "branch" | "id" | "from_tip" | "created_at">,
): Promise<void> {
  if (branchesMadeByBerth(commonDir).has(marker.branch)) return;
  await writeBranchRecord(commonDir, {
    version: 1,
    branch: marker.branch,
    id: marker.id,
    created_tip: marker.from_tip,
    created_at: marker.created_at,
  });
}
