import { existsSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "./atomic.js";
import { acquireLockFile, type HeldLock, isOwnerAlive, type LockOwner } from "./lock.js";
import { perBerthDir, sharedStateDir } from "./paths.js";

/**
 * Gate capacity (spec section 11): at most `[gate.capacity].max_parallel`
 * gates run at once across the fleet. Each slot is a lock file
 * `<common>/berth/gate-slots/<n>` taken with the fleet lock's exclusive
 * create (src/io/lock.ts), so a slot whose holder died on this host is taken
 * over and a live holder's never is. A gate waiting for a slot leaves a
 * `gate-waiting` marker in its berth's own state folder, which status reads
 * as `running: "gate (waiting for a slot)"`.
 */

export function gateSlotsDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "gate-slots");
}

export function gateWaitingMarker(adminDir: string): string {
  return join(perBerthDir(adminDir), "gate-waiting");
}

export interface SlotWait {
  /** Called once, when every slot is held and this gate starts waiting. */
  onWait?: (() => void) | undefined;
  signal?: AbortSignal | undefined;
  /** The berth's admin dir: the waiting marker goes there. */
  adminDir: string;
}

const POLL_MS = 100;

/** Takes a free slot (waiting as long as it takes); null when the wait was aborted. */
export async function acquireGateSlot(
  commonDir: string,
  maxParallel: number,
  wait: SlotWait,
): Promise<HeldLock | null> {
  const dir = gateSlotsDir(commonDir);
  let waiting = false;
  try {
    for (;;) {
      for (let slot = 0; slot < maxParallel; slot++) {
        try {
          return await acquireLockFile(join(dir, String(slot)), "gate", { waitMs: 0 });
        } catch (error) {
          if ((error as { code?: string }).code !== "locked") throw error;
        }
      }
      if (wait.signal?.aborted) return null;
      if (!waiting) {
        waiting = true;
        await writeJsonAtomic(gateWaitingMarker(wait.adminDir), { pid: process.pid });
        wait.onWait?.();
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    if (waiting) await rm(gateWaitingMarker(wait.adminDir), { force: true });
  }
}

/** Whether a gate is waiting for a slot in this berth (its waiter still alive). */
export async function isWaitingForSlot(adminDir: string): Promise<boolean> {
  const marker = gateWaitingMarker(adminDir);
  // Status asks this of every row after the survey: a failed read (an error built) per berth costs ms.
  if (!existsSync(marker)) return false;
  const text = await readFile(marker, "utf8").catch(() => null);
  if (text === null) return false;
  try {
    const { pid } = JSON.parse(text) as { pid: number };
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The holders of the slots now, for status and tests. */
export async function slotHolders(commonDir: string): Promise<LockOwner[]> {
  const dir = gateSlotsDir(commonDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  const owners: LockOwner[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(join(dir, name), "utf8").catch(() => null);
    if (text === null) continue;
    try {
      const owner = JSON.parse(text) as LockOwner;
      if (isOwnerAlive(owner)) owners.push(owner);
    } catch {
      // A slot being written: not a holder yet.
    }
  }
  return owners;
}
