import { existsSync } from "node:fs";
import { appendFile, copyFile, mkdir, readdir, readFile, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { createFileAtomic, writeJsonAtomic } from "./atomic.js";
import { acquireLockFile, type LockOwner } from "./lock.js";
import { sharedStateDir } from "./paths.js";

/**
 * The landing queue's files (spec section 11): `<common>/berth/queue/`, one
 * JSON file per entry named `<seq>.json`, written whole and
 * renamed (src/io/atomic.ts), so a killed writer leaves the old entry or the
 * new one, never half of either. The queue's lock is `queue/lock`, held by
 * a lander for a whole drain; `queue/entry.lock` is held only while one
 * entry is read and rewritten (`changeEntry`), or a berth's entry is
 * submitted (`submitEntryFor`). Entries are read in `seq`
 * order, which is the landing order.
 */

export type QueueState =
  | "awaiting_approval"
  | "queued"
  | "integrating"
  | "gating"
  | "landed"
  | "rejected"
  | "withdrawn";

/** Who let the entry land: a person's confirmation, a standing grant, or `queue approve`. */
export type Authority = "confirmed" | "pre_authorized" | "approved";

/** The last step a lander recorded for an entry, before doing it (invariant 7). */
export type LandedVia = "fast_forward" | "integration" | "contained";

export type LandingStep = "checkout" | "merge" | "gate" | "move_trunk" | "finish" | "fast_forward";

export interface Rejection {
  kind: "conflict" | "red" | "moved" | "refused";
  /** conflict: the files git could not merge. */
  files: string[];
  /** red: the check that failed. */
  check: string | null;
}

export interface QueueEntry {
  version: 1;
  seq: number;
  id: string;
  branch: string;
  /** The berth's checkout when submitted. */
  path: string | null;
  /** The stack's tip as submitted: the entry lands exactly this commit's content. */
  tip: string;
  state: QueueState;
  authority: Authority | null;
  submitted_at: string;
  updated_at: string;
  /** The process landing it now; null when no lander holds it. */
  lander: LockOwner | null;
  step: LandingStep | null;
  /** The throwaway integration berth and the commit gated there. */
  integration: { id: string | null; trunk_tip: string; commit: string | null } | null;
  reason: string | null;
  rejection: Rejection | null;
  /** `contained`: its tip was already on the trunk, carried there by another landing. */
  landed: { old_trunk: string; new_trunk: string; via: LandedVia } | null;
  /** Gate runs this entry took part in (a batch shares them). */
  gate_runs: number;
  /**
   * An integration checkout made for this entry that could not be removed
   * (its teardown stopped): `berth queue run` removes it. Absent in entries
   * written before it existed.
   */
  leftover?: { id: string; reason: string } | null;
}

export function queueDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "queue");
}

/**
 * Keeps a copy of a gate log under `<queue>/logs/<seq>-<its name>`: an
 * integration checkout's logs go with it when it is removed, and a red
 * integration gate's log is what its submitter needs. Returns the copy's
 * path; null when it could not be copied.
 */
export async function keepQueueLog(
  commonDir: string,
  seq: number,
  log: string,
): Promise<string | null> {
  const folder = join(queueDir(commonDir), "logs");
  const kept = join(folder, `${seq}-${basename(log)}`);
  try {
    await mkdir(folder, { recursive: true });
    await copyFile(log, kept);
    return kept;
  } catch {
    return null;
  }
}

export function queueLockPath(commonDir: string): string {
  return join(queueDir(commonDir), "lock");
}

function entryLockPath(commonDir: string): string {
  return join(queueDir(commonDir), "entry.lock");
}

/** Named by the sequence number alone, so claiming a number is one exclusive create. */
export function entryFileName(entry: Pick<QueueEntry, "seq">): string {
  return `${String(entry.seq).padStart(6, "0")}.json`;
}

export const FINAL_STATES: ReadonlySet<QueueState> = new Set(["landed", "rejected", "withdrawn"]);

export function isFinal(entry: QueueEntry): boolean {
  return FINAL_STATES.has(entry.state);
}

/** A lander holds the entry now: it is being merged or gated, and may move the trunk. */
export function isBeingLanded(entry: QueueEntry): boolean {
  return entry.state === "integrating" || entry.state === "gating";
}

/** An entry's file: its sequence number, zero-padded (entryFileName). */
const ENTRY_FILE = /^\d{6,}\.json$/;

/** Every readable entry, in landing order; a torn or foreign file is skipped. */
export async function readQueue(commonDir: string): Promise<QueueEntry[]> {
  return (await readQueueFiles(commonDir)).entries;
}

/** readQueue, and the entry files it skipped (a newer berth's, torn, edited by hand). */
export async function readQueueFiles(
  commonDir: string,
): Promise<{ entries: QueueEntry[]; unreadable: string[] }> {
  const dir = queueDir(commonDir);
  // Status reads the queue of every fleet, and most have none: no failed readdir (an error built).
  if (!existsSync(dir)) return { entries: [], unreadable: [] };
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) =>
    ENTRY_FILE.test(name),
  );
  const texts = await Promise.all(
    names.map((name) => readFile(join(dir, name), "utf8").catch(() => null)),
  );
  const entries: QueueEntry[] = [];
  const unreadable: string[] = [];
  texts.forEach((text, i) => {
    const entry = text === null ? null : parseEntry(text);
    if (entry !== null) entries.push(entry);
    else unreadable.push(join(dir, names[i] as string));
  });
  return { entries: entries.sort((a, b) => a.seq - b.seq), unreadable: unreadable.sort() };
}

async function readEntry(commonDir: string, seq: number): Promise<QueueEntry | null> {
  const text = await readFile(join(queueDir(commonDir), entryFileName({ seq })), "utf8").catch(
    () => null,
  );
  return text === null ? null : parseEntry(text);
}

function parseEntry(text: string): QueueEntry | null {
  try {
    const raw = JSON.parse(text) as Partial<QueueEntry>;
    if (raw.version !== 1 || typeof raw.seq !== "number" || typeof raw.id !== "string") return null;
    if (typeof raw.tip !== "string" || typeof raw.state !== "string") return null;
    return raw as QueueEntry;
  } catch {
    return null;
  }
}

export async function writeEntry(commonDir: string, entry: QueueEntry): Promise<void> {
  await writeJsonAtomic(join(queueDir(commonDir), entryFileName(entry)), entry);
}

/**
 * Rewrites entry `seq` under the queue's entry lock: `change` gets the entry
 * as it is on disk now and returns what to write, or null to leave it (it
 * may throw: nothing is written). Every write after the append goes through
 * here (the lander, `queue withdraw|approve`, a resubmission), so no writer
 * puts back a copy older than another's change. Returns the entry as it is
 * afterwards and whether it was written; null when there is no such entry.
 */
export async function changeEntry(
  commonDir: string,
  seq: number,
  verb: string,
  change: (now: QueueEntry) => QueueEntry | null,
): Promise<{ entry: QueueEntry; written: boolean } | null> {
  const held = await acquireLockFile(entryLockPath(commonDir), verb);
  try {
    const now = await readEntry(commonDir, seq);
    if (now === null) return null;
    const next = change(now);
    if (next === null) return { entry: now, written: false };
    await writeEntry(commonDir, next);
    return { entry: next, written: true };
  } finally {
    await held.release();
  }
}

/**
 * Submits berth `id` under the entry lock, so two submitters of one berth
 * never make two open entries: its open entry, if there is one, is
 * rewritten by `refresh` (null: leave it, a lander holds it); else a new
 * entry is added at the end. Returns the berth's open entry afterwards.
 */
export async function submitEntryFor(
  commonDir: string,
  id: string,
  verb: string,
  refresh: (open: QueueEntry) => QueueEntry | null,
  make: (seq: number) => QueueEntry,
): Promise<QueueEntry> {
  const held = await acquireLockFile(entryLockPath(commonDir), verb);
  try {
    const entries = await readQueue(commonDir);
    const open = entries.find((entry) => entry.id === id && !isFinal(entry));
    if (open === undefined) return await appendEntry(commonDir, entries, make);
    const next = refresh(open);
    if (next === null) return open;
    await writeEntry(commonDir, next);
    return next;
  } finally {
    await held.release();
  }
}

/**
 * Adds an entry at the end: the next free sequence number, claimed by an
 * exclusive create, so even a writer that skipped the lock never shares one.
 * Numbered past every entry file, read or not: a file berth cannot parse (a
 * newer version's, one edited by hand) still holds its number.
 */
async function appendEntry(
  commonDir: string,
  read: QueueEntry[],
  make: (seq: number) => QueueEntry,
): Promise<QueueEntry> {
  let seq = Math.max(read.at(-1)?.seq ?? 0, await highestEntryFile(commonDir)) + 1;
  for (;;) {
    const entry = make(seq);
    try {
      await createFileAtomic(
        join(queueDir(commonDir), entryFileName(entry)),
        `${JSON.stringify(entry, null, 2)}\n`,
      );
      return entry;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    seq = Math.max(seq, await highestEntryFile(commonDir)) + 1;
  }
}

/** The highest number an entry file in the queue folder is named by (0 for none). */
async function highestEntryFile(commonDir: string): Promise<number> {
  const names = await readdir(queueDir(commonDir)).catch(() => [] as string[]);
  return Math.max(0, ...names.filter((n) => ENTRY_FILE.test(n)).map((n) => Number.parseInt(n, 10)));
}

/** Decided entries always kept in the queue folder, newest first, for `berth queue` to show. */
export const RECENT_DECIDED = 20;
/** A decided entry younger than this stays: a waiting accept or await may be about to read it. */
const DECIDED_KEPT_MS = 24 * 60 * 60 * 1000;

/** Where decided entries go once no reader needs them: one JSON line each, oldest first. */
export function decidedArchivePath(commonDir: string): string {
  return join(queueDir(commonDir), "decided.jsonl");
}

/**
 * Moves the decided entries no reader needs any more out of the queue folder
 * into decidedArchivePath, so every read of the queue (status, each poll of
 * `await`, each round of a lander) costs what the entries still in play
 * cost, however long the fleet has been landing. Kept: open entries, the
 * RECENT_DECIDED newest decided ones, any decided within a day, the newest
 * entry of each berth whose branch is in `liveBranches` (status shows it;
 * `await --landed` answers a rejection from it), and the newest entry of all
 * (the next sequence number follows it). Under the entry lock. A line is
 * appended before its file goes: a crash between leaves it twice, never lost.
 * Returns how many moved.
 */
export async function archiveDecided(
  commonDir: string,
  liveBranches: ReadonlySet<string>,
  now: Date,
): Promise<number> {
  const held = await acquireLockFile(entryLockPath(commonDir), "queue archive");
  try {
    const entries = await readQueue(commonDir);
    const decided = entries.filter(isFinal);
    if (decided.length <= RECENT_DECIDED) return 0;
    const keep = new Set(decided.slice(-RECENT_DECIDED).map((e) => e.seq));
    const newestOf = new Map(entries.map((e) => [e.id, e]));
    for (const e of newestOf.values()) if (liveBranches.has(e.branch)) keep.add(e.seq);
    const last = entries.at(-1);
    if (last !== undefined) keep.add(last.seq);
    const cutoff = now.getTime() - DECIDED_KEPT_MS;
    const moving = decided.filter((e) => !keep.has(e.seq) && !(Date.parse(e.updated_at) >= cutoff));
    if (moving.length === 0) return 0;
    await appendFile(
      decidedArchivePath(commonDir),
      moving.map((e) => `${JSON.stringify(e)}\n`).join(""),
    );
    const dir = queueDir(commonDir);
    await Promise.all(moving.map((e) => rm(join(dir, entryFileName(e)), { force: true })));
    return moving.length;
  } finally {
    await held.release();
  }
}
