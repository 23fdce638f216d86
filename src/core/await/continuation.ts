import { randomBytes } from "node:crypto";
import { UserError } from "../../errors.js";
import {
  deleteContinuation,
  listContinuations,
  readContinuation,
  type StoredContinuation,
  writeContinuation,
} from "../../io/await-continuations.js";
import { shellCommand } from "../../text.js";
import type { WaitMemory } from "./probe.js";
import type { AwaitCondition } from "./request.js";

/**
 * Await continuations: the one place a wait is carried from one call to the
 * next (docs/decisions/0019). A call that ends not met (timed out, checked
 * once, interrupted) leaves its handle and its memory — the pins, the tips
 * seen, the trunk tip at the first call's start — so `--resume <handle>`
 * continues the same wait: a trunk that moved between the calls counts for
 * --trunk-moved, and a tip pinned by the first call still answers --landed.
 * In order, when one is saved: handles last written more than 7 days ago are
 * deleted, then the oldest beyond MAX_CONTINUATIONS - 1, then it is written.
 * A met wait deletes its handle. A handle older than 7 days is unknown.
 */

export const CONTINUATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const MAX_CONTINUATIONS = 512;

/** What a wait is, besides its memory: enough to resolve its target again. */
export interface WaitIdentity {
  condition: AwaitCondition;
  /** The target as the first call named it. */
  argument: string | null;
  branch: string | null;
  trunk: string;
}

export interface Continuation extends WaitIdentity {
  handle: string;
  memory: WaitMemory;
}

export function newHandle(): string {
  return randomBytes(8).toString("hex");
}

/** The continuation a handle names, or a refusal (unknown, expired). */
export async function loadContinuation(
  commonDir: string,
  handle: string,
  now: Date,
): Promise<Continuation> {
  const stored = await readContinuation(commonDir, handle);
  const age = stored === null ? Number.NaN : now.getTime() - Date.parse(stored.updated_at);
  if (stored === null || !(age <= CONTINUATION_TTL_MS)) {
    if (stored !== null) await deleteContinuation(commonDir, handle).catch(() => undefined);
    throw new UserError(
      "unknown_target",
      `No await continuation "${handle}": handles live 7 days after the call that left them and are deleted once their wait is met.`,
      { next: shellCommand(["berth", "await", "--help"]) },
    );
  }
  return {
    handle,
    condition: stored.condition,
    argument: stored.argument,
    branch: stored.branch,
    trunk: stored.trunk,
    memory: {
      pinned: stored.pinned,
      held: stored.held,
      forkPoints: stored.fork_points,
      goneAtStart: stored.gone_at_start,
      startedAt: stored.started_at,
      trunkTipAtStart: stored.trunk_tip_at_start,
    },
  };
}

/** Writes (or rewrites) the continuation, first making room under the limits. */
export async function saveContinuation(
  commonDir: string,
  continuation: Continuation,
  now: Date,
): Promise<void> {
  const listed = await listContinuations(commonDir).catch(() => []);
  const others = listed
    .filter((c) => c.handle !== continuation.handle)
    .sort((a, b) => a.updatedAt - b.updatedAt);
  const expired = others.filter((c) => now.getTime() - c.updatedAt > CONTINUATION_TTL_MS);
  const live = others.filter((c) => now.getTime() - c.updatedAt <= CONTINUATION_TTL_MS);
  const overflow = live.slice(0, Math.max(0, live.length - (MAX_CONTINUATIONS - 1)));
  for (const doomed of [...expired, ...overflow]) {
    await deleteContinuation(commonDir, doomed.handle).catch(() => undefined);
  }
  const { memory } = continuation;
  const stored: StoredContinuation = {
    version: 1,
    handle: continuation.handle,
    condition: continuation.condition,
    argument: continuation.argument,
    branch: continuation.branch,
    trunk: continuation.trunk,
    trunk_tip_at_start: memory.trunkTipAtStart,
    pinned: memory.pinned,
    held: memory.held,
    fork_points: memory.forkPoints,
    gone_at_start: memory.goneAtStart,
    started_at: memory.startedAt,
    updated_at: now.toISOString(),
  };
  await writeContinuation(commonDir, stored);
}

export async function forgetContinuation(commonDir: string, handle: string): Promise<void> {
  await deleteContinuation(commonDir, handle);
}
