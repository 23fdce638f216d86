import * as v from "valibot";
import { readJsonFileSync, writeJsonAtomic } from "./atomic.js";
import { readyMarkerPath } from "./paths.js";

/** Proof that berth created a worktree (spec section 7, ownership). */
export interface ReadyMarker {
  id: string;
  branch: string;
  created_at: string;
  berth_version: string;
  /** The base as the user named it (null = the trunk by default). */
  from: string | null;
  /** The commit the berth forked from; a branch still there has gained nothing. */
  from_tip: string;
}

const MarkerSchema = v.object({
  id: v.string(),
  branch: v.string(),
  created_at: v.string(),
  berth_version: v.string(),
  from: v.nullable(v.string()),
  from_tip: v.string(),
});

export async function writeReadyMarker(adminDir: string, marker: ReadyMarker): Promise<void> {
  await writeJsonAtomic(readyMarkerPath(adminDir), marker);
}

/** The marker, or null when absent or unreadable (then berth does not own the worktree). */
export async function readReadyMarker(adminDir: string): Promise<ReadyMarker | null> {
  return readReadyMarkerSync(adminDir);
}

/** Synchronous: the survey reads one per worktree (see readJsonFileSync). */
export function readReadyMarkerSync(adminDir: string): ReadyMarker | null {
  let raw: unknown;
  try {
    raw = readJsonFileSync(readyMarkerPath(adminDir));
  } catch {
    return null;
  }
  const parsed = v.safeParse(MarkerSchema, raw);
  return parsed.success ? parsed.output : null;
}
