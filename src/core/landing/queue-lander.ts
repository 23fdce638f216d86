import { type Context, silentJournal } from "../../context.js";
import { UserError } from "../../errors.js";
import { listRefs } from "../../git/refs.js";
import type { LockOwner } from "../../io/lock.js";
import {
  archiveDecided,
  changeEntry,
  isFinal,
  type QueueEntry,
  type Rejection,
} from "../../io/queue-store.js";
import type { VerbResult } from "../../result.js";
import { shortOid } from "../../text.js";
import type { Repository } from "../repo/repository.js";
import type { AcceptApplyOptions, AcceptData } from "./accept.js";

/**
 * The lander (spec section 11): who drains the queue, and the one way an
 * entry's state changes as it does, each change written to the entry before
 * the next step (invariant 7): rejected (with why), moved since it was
 * submitted, back in the queue, or withdrawn by an interrupt. Landing
 * itself is ./queue-integrate.ts; the order, ./queue-drain.ts.
 */

/** What one landing pass carries: who lands, where results go, gate runs counted. */
export interface Lander {
  /** The submitter's own context (its logbook), used for its own entry. */
  ctx: Context;
  repo: Repository;
  options: AcceptApplyOptions;
  me: LockOwner;
  /** The entry whose result the caller returns, or null (`queue run`). */
  own: number | null;
  results: Map<number, { result?: VerbResult<AcceptData>; error?: unknown }>;
  gateRuns: number;
  /** The entries this lander decided (landed, rejected, withdrawn), in order. */
  decided: Set<number>;
}

export type GroupOutcome = "done" | "red" | "moved";

/**
 * Counts the gate an accept ran, if it ran one, for the lander and each
 * entry it proved: a gate counts whatever became of its landing (it lost the
 * lease, was refused). Before the entries' next write, which persists it.
 */
export function countGate(
  lander: Lander,
  entries: readonly QueueEntry[],
  data: AcceptData | null,
): void {
  if (data?.gate == null) return;
  lander.gateRuns++;
  for (const entry of entries) entry.gate_runs++;
}

/** A context for work done on behalf of the queue: at the main checkout, no logbook of its own. */
export function queueContext(lander: Lander, entry: QueueEntry | null): Context {
  if (entry !== null && entry.seq === lander.own) return lander.ctx;
  return { ...lander.ctx, cwd: lander.repo.mainPath, journal: silentJournal };
}

/**
 * The lander's one way to write an entry, against the entry as it is on disk
 * now (src/io/queue-store.ts `changeEntry`). A change someone else made since
 * the lander read it (a withdrawal, an approval, a resubmission at another
 * tip) wins: the lander's copy takes it and nothing is written. Returns
 * whether it wrote; taking an entry up (gating, integrating) that returns
 * false leaves the entry alone, for the next pass to read as it is.
 */
export async function updateEntry(
  lander: Lander,
  entry: QueueEntry,
  change: Partial<QueueEntry>,
): Promise<boolean> {
  const updated_at = lander.ctx.now().toISOString();
  const changed = await changeEntry(
    lander.repo.location.commonDir,
    entry.seq,
    "queue run",
    (now) => (changedSinceRead(entry, now) ? null : { ...entry, ...change, updated_at }),
  );
  if (changed === null) return false;
  Object.assign(entry, changed.entry);
  if (changed.written && isFinal(changed.entry)) lander.decided.add(entry.seq);
  return changed.written;
}

/** The fields another writer changes; the lander's own (gate runs, steps) are its copy's. */
function changedSinceRead(mine: QueueEntry, now: QueueEntry): boolean {
  return now.state !== mine.state || now.tip !== mine.tip || now.authority !== mine.authority;
}

export async function rejectEntry(
  lander: Lander,
  entry: QueueEntry,
  rejection: Rejection,
  reason: string,
  outcome: { result?: VerbResult<AcceptData>; error?: unknown } = {},
): Promise<void> {
  const written = await updateEntry(lander, entry, {
    state: "rejected",
    rejection,
    reason,
    lander: null,
    step: null,
  });
  if (written) lander.results.set(entry.seq, outcome);
}

/**
 * Rejects an entry whose branch no longer holds the tip it was submitted at:
 * what lands is what was submitted (and confirmed), never a commit made
 * since, such as one made while its gate ran; and a moved berth cannot be
 * torn down. `now`: the branch's tip now, null when it is gone.
 */
export function rejectMoved(lander: Lander, entry: QueueEntry, now: string | null): Promise<void> {
  return rejectEntry(
    lander,
    entry,
    { kind: "moved", files: [], check: null },
    now === null
      ? `its branch ${entry.branch} is gone`
      : `${entry.branch} moved since it was submitted (to ${shortOid(now)}), so what it holds now was never submitted; accept it again`,
  );
}

export function refused(): Rejection {
  return { kind: "refused", files: [], check: null };
}

/** An unreachable remote judged nothing: the entries stay queued and the drain stops with its refusal. */
export function isRemoteFailure(error: unknown): error is UserError {
  return error instanceof UserError && error.code === "remote_failed";
}

export async function requeueAndThrow(
  lander: Lander,
  entries: QueueEntry[],
  error: UserError,
): Promise<never> {
  await requeue(lander, entries);
  throw stillQueued(entries, error);
}

/**
 * The remote's refusal, saying what it left behind: the entries wait in the
 * queue for the next lander, so the refusal is not "nothing changed".
 */
export function stillQueued(entries: QueueEntry[], error: UserError): UserError {
  const ids = entries.map((entry) => entry.id).join(", ");
  const seqs = entries.map((entry) => entry.seq).join(", ");
  const stays =
    entries.length === 1 ? `stays queued as entry ${seqs}` : `stay queued as entries ${seqs}`;
  const message = `${error.message} ${ids} ${stays}: the next berth queue run tries again.`;
  return new UserError(error.code, message, {
    next: error.next,
    data: error.data,
    plan: error.plan,
    nothingChanged: false,
    cause: error,
  });
}

/**
 * A landing stopped by an interrupt (Ctrl-C, SIGTERM) judged nothing, so it
 * rejects nothing (a rejection is a conflict or a red gate): the entry of
 * the accept that was interrupted is withdrawn, as its submitter chose to
 * stop; any other goes back in the queue for the next lander. The drain
 * stops (./queue-drain.ts).
 */
export async function setAsideInterrupted(
  lander: Lander,
  entries: QueueEntry[],
  result: VerbResult<AcceptData>,
): Promise<GroupOutcome> {
  for (const entry of entries) {
    if (entry.seq !== lander.own) {
      await requeue(lander, [entry]);
      continue;
    }
    await updateEntry(lander, entry, {
      state: "withdrawn",
      reason: "interrupted: the accept landing it was stopped before its gate finished",
      step: null,
      lander: null,
      integration: null,
    });
    lander.results.set(entry.seq, { result });
  }
  return "done";
}

export async function requeue(lander: Lander, entries: QueueEntry[]): Promise<GroupOutcome> {
  for (const entry of entries) {
    await updateEntry(lander, entry, {
      state: "queued",
      step: null,
      lander: null,
      integration: null,
    });
  }
  return "moved";
}

/**
 * Housekeeping after a drain (io/queue-store.ts `archiveDecided`): decided
 * entries no reader needs leave the queue folder. A failure here is left for
 * the next drain: it loses nothing and must not fail the landings made.
 */
export async function archiveOldEntries(repo: Repository, now: Date): Promise<void> {
  try {
    const branches = await listRefs(repo.mainPath, ["refs/heads"]);
    const live = new Set(branches.map((b) => b.ref.slice("refs/heads/".length)));
    await archiveDecided(repo.location.commonDir, live, now);
  } catch {
    // The entries stay where they are; the next drain tries again.
  }
}
