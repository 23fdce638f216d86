import { readFileSync } from "node:fs";
import { mkdir, readFile, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { UserError } from "../errors.js";
import { shellQuote } from "../text.js";

import { createFileAtomic } from "./atomic.js";
import { sharedStateDir } from "./paths.js";

/**
 * The fleet lock (spec sections 2 and 9.6): `<common>/berth/lock`, held by a
 * mutating verb while it applies. The file is written whole under a temporary
 * name and hard-linked into place, so taking it is one atomic exclusive
 * create and a reader never sees half a lock. A second verb waits briefly,
 * then refuses with `locked`. A lock left by a process that died on this host
 * is taken over; one from another host is never guessed at.
 */

export interface LockOwner {
  pid: number;
  hostname: string;
  verb: string;
  acquired_at: string;
  /** Kernel start time of the holder (Linux), so a recycled pid is not mistaken for it. */
  pid_start: string | null;
}

export interface LockOptions {
  /** How long to wait for a live holder before refusing (default DEFAULT_LOCK_WAIT_MS). */
  waitMs?: number;
  now?: () => Date;
}

export const DEFAULT_LOCK_WAIT_MS = 10_000;
/** A stale-lock takeover takes milliseconds; a marker older than this was left by a crash. */
const TAKEOVER_STALE_MS = 10_000;

export function fleetLockPath(commonDir: string): string {
  return join(sharedStateDir(commonDir), "lock");
}

/** Runs `fn` holding the fleet lock; the lock is released however `fn` ends. */
export async function withFleetLock<T>(
  commonDir: string,
  verb: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const held = await acquireFleetLock(commonDir, verb, options);
  try {
    return await fn();
  } finally {
    await held.release();
  }
}

export interface HeldLock {
  owner: LockOwner;
  release(): Promise<void>;
}

export async function acquireFleetLock(
  commonDir: string,
  verb: string,
  options: LockOptions = {},
): Promise<HeldLock> {
  return acquireLockFile(fleetLockPath(commonDir), verb, options);
}

/**
 * The same lock at another path (the landing queue's lock, spec section 11):
 * one exclusive create, a dead holder on this host taken over.
 */
export async function acquireLockFile(
  path: string,
  verb: string,
  options: LockOptions = {},
): Promise<HeldLock> {
  await mkdir(dirname(path), { recursive: true });
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    verb,
    acquired_at: (options.now ?? (() => new Date()))().toISOString(),
    pid_start: processStartTime(process.pid),
  };
  const content = `${JSON.stringify(owner)}\n`;
  const deadline = Date.now() + (options.waitMs ?? DEFAULT_LOCK_WAIT_MS);
  let pause = 50;
  for (;;) {
    if (await tryCreate(path, content)) {
      return { owner, release: () => releaseIfOurs(path, content) };
    }
    const holder = await readHolder(path);
    if (holder.kind === "stale") {
      await takeOverStale(path, holder.text);
      continue;
    }
    if (holder.kind === "gone") continue;
    if (Date.now() >= deadline) throw lockedError(path, holder);
    await sleep(Math.min(pause, Math.max(1, deadline - Date.now())));
    pause = Math.min(pause * 2, 500);
  }
}

type Holder =
  | { kind: "gone" }
  | { kind: "stale"; text: string; owner: LockOwner | null }
  | { kind: "live"; text: string; owner: LockOwner | null };

async function tryCreate(path: string, content: string): Promise<boolean> {
  try {
    await createFileAtomic(path, content);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

async function readHolder(path: string): Promise<Holder> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "gone" };
    throw error;
  }
  const owner = parseOwner(text);
  if (owner === null) {
    // Unreadable content: treat as a crash only once it is clearly old.
    const age = await ageOf(path);
    return age !== null && age > TAKEOVER_STALE_MS
      ? { kind: "stale", text, owner }
      : { kind: "live", text, owner };
  }
  return isOwnerAlive(owner) ? { kind: "live", text, owner } : { kind: "stale", text, owner };
}

function parseOwner(text: string): LockOwner | null {
  try {
    const raw = JSON.parse(text) as Partial<LockOwner>;
    if (typeof raw.pid !== "number" || typeof raw.hostname !== "string") return null;
    return {
      pid: raw.pid,
      hostname: raw.hostname,
      verb: typeof raw.verb === "string" ? raw.verb : "?",
      acquired_at: typeof raw.acquired_at === "string" ? raw.acquired_at : "?",
      pid_start: typeof raw.pid_start === "string" ? raw.pid_start : null,
    };
  } catch {
    return null;
  }
}

/** Alive unless provably dead: same host, and no such process (or a recycled pid). */
export function isOwnerAlive(owner: LockOwner): boolean {
  if (owner.hostname !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  if (owner.pid_start !== null) {
    const now = processStartTime(owner.pid);
    if (now !== null && now !== owner.pid_start) return false;
  }
  return true;
}

/** This process as a holder (of a lock, a gate slot, a queue entry it is landing). */
export function thisProcessOwner(verb: string, now: Date): LockOwner {
  return {
    pid: process.pid,
    hostname: hostname(),
    verb,
    acquired_at: now.toISOString(),
    pid_start: processStartTime(process.pid),
  };
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); null where there is no /proc. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Removes a dead holder's lock. Takeovers are serialised by a second
 * exclusive file so that two waiters cannot both decide the lock is stale and
 * one of them delete the fresh lock the other has just taken: holding the
 * marker, the lock is removed only if it still has the stale content.
 */
async function takeOverStale(path: string, staleText: string): Promise<void> {
  const marker = `${path}.takeover`;
  if (!(await tryCreate(marker, `${process.pid}\n`))) {
    const age = await ageOf(marker);
    if (age !== null && age > TAKEOVER_STALE_MS) await unlink(marker).catch(() => undefined);
    await sleep(20);
    return;
  }
  try {
    const current = await readFile(path, "utf8").catch(() => null);
    if (current === staleText) await unlink(path).catch(() => undefined);
  } finally {
    await unlink(marker).catch(() => undefined);
  }
}

async function releaseIfOurs(path: string, content: string): Promise<void> {
  const current = await readFile(path, "utf8").catch(() => null);
  if (current === content) await unlink(path).catch(() => undefined);
}

async function ageOf(path: string): Promise<number | null> {
  try {
    return Date.now() - (await stat(path)).mtimeMs;
  } catch {
    return null;
  }
}

function lockedError(path: string, holder: Holder): UserError {
  const owner = holder.kind === "gone" ? null : holder.owner;
  const who = owner
    ? `berth ${owner.verb} (pid ${owner.pid} on ${owner.hostname}, since ${owner.acquired_at})`
    : "another process";
  return new UserError(
    "locked",
    `The fleet is locked by ${who}; nothing changed. Wait for it to finish and retry (if no berth is running, remove ${shellQuote(path)}).`,
    { data: { lock: path, holder: owner } },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits (up to `maxMs`) until no verb holds the fleet lock: a reader that
 * saw a change mid-apply (a checkout removed, its branch not yet deleted)
 * then reads the state the verb leaves. Only a wait; never takes the lock.
 */
export async function fleetLockReleased(commonDir: string, maxMs: number): Promise<boolean> {
  const path = fleetLockPath(commonDir);
  const deadline = Date.now() + maxMs;
  for (;;) {
    const held = await stat(path).then(
      () => true,
      () => false,
    );
    if (!held) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
