import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { OBJECT_ID } from "../git/object-id.js";
import { readJsonFile, writeJsonAtomic } from "./atomic.js";
import { sharedStateDir } from "./paths.js";

/**
 * Await continuations (spec section 2): `<common>/berth/await/<handle>.json`,
 * one file per wait that ended without its condition, so `berth await
 * --resume <handle>` continues it with the same pins. Written whole (temp
 * file + rename); how long they live and how many are kept is decided in
 * src/core/await/continuation.ts.
 */

export interface StoredContinuation {
  version: 1;
  handle: string;
  condition: "green" | "landed" | "trunk-moved";
  /** The target as the first call named it (null for --trunk-moved). */
  argument: string | null;
  /** The branch followed (null for --trunk-moved). */
  branch: string | null;
  trunk: string;
  trunk_tip_at_start: string | null;
  /** Tips the branch held while unlanded, oldest first. */
  pinned: string[];
  /** Every tip the branch was seen at, oldest first (a landing record at one of them answers). */
  held: string[];
  /** The fork points its ready marker named. */
  fork_points: string[];
  /** The branch was already gone when the wait began: any landing record naming it answers. */
  gone_at_start: boolean;
  /** When the first call of the wait began. */
  started_at: string;
  /** When a call last left it (the 7 days run from here). */
  updated_at: string;
}

const OID = v.pipe(v.string(), v.regex(OBJECT_ID));

const ContinuationSchema = v.object({
  version: v.literal(1),
  handle: v.string(),
  condition: v.picklist(["green", "landed", "trunk-moved"]),
  argument: v.nullable(v.string()),
  branch: v.nullable(v.string()),
  trunk: v.string(),
  trunk_tip_at_start: v.nullable(OID),
  pinned: v.array(OID),
  held: v.array(OID),
  fork_points: v.array(OID),
  gone_at_start: v.boolean(),
  started_at: v.string(),
  updated_at: v.string(),
});

export function continuationDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "await");
}

function continuationPath(commonDir: string, handle: string): string {
  return join(continuationDir(commonDir), `${handle}.json`);
}

export async function writeContinuation(
  commonDir: string,
  continuation: StoredContinuation,
): Promise<void> {
  await writeJsonAtomic(continuationPath(commonDir, continuation.handle), continuation);
}

/** The continuation, or null when there is none (or it is not one: it proves nothing). */
export async function readContinuation(
  commonDir: string,
  handle: string,
): Promise<StoredContinuation | null> {
  const raw = await readJsonFile(continuationPath(commonDir, handle)).catch(() => null);
  const parsed = v.safeParse(ContinuationSchema, raw);
  return parsed.success && parsed.output.handle === handle ? parsed.output : null;
}

export async function deleteContinuation(commonDir: string, handle: string): Promise<void> {
  await rm(continuationPath(commonDir, handle), { force: true });
}

/**
 * Every stored handle with when it was last left: its `updated_at` (the
 * verb's clock), or its file's mtime when the file is not a continuation.
 */
export async function listContinuations(
  commonDir: string,
): Promise<{ handle: string; updatedAt: number }[]> {
  let names: string[];
  try {
    names = await readdir(continuationDir(commonDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const handles = names.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5));
  const listed = await Promise.all(
    handles.map(async (handle) => {
      const stored = await readContinuation(commonDir, handle);
      const written = stored === null ? Number.NaN : Date.parse(stored.updated_at);
      if (!Number.isNaN(written)) return { handle, updatedAt: written };
      const stats = await stat(continuationPath(commonDir, handle)).catch(() => null);
      return stats === null ? null : { handle, updatedAt: stats.mtimeMs };
    }),
  );
  return listed.filter((entry) => entry !== null);
}
