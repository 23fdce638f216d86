import {
  type Authority,
  isFinal,
  type QueueEntry,
  type QueueState,
  type Rejection,
  readQueue,
} from "../../io/queue-store.js";

/**
 * A landing-queue entry as every reader shows it (`berth queue`, status, the
 * desk): its position among entries still to be decided, its state and why
 * it was rejected. Kept apart from the landing code so that status loads
 * nothing of it.
 */

export interface QueueEntryView {
  /** 1-based place among entries still to be decided; null once decided. */
  position: number | null;
  seq: number;
  id: string;
  branch: string;
  tip: string;
  state: QueueState;
  authority: Authority | null;
  reason: string | null;
  rejection: Rejection | null;
  landed: QueueEntry["landed"];
  gate_runs: number;
  submitted_at: string;
  /** An integration checkout made for it that could not be removed yet (`berth queue run` removes it). */
  leftover: { id: string; reason: string } | null;
}

export function viewQueue(entries: readonly QueueEntry[]): QueueEntryView[] {
  let position = 0;
  return entries.map((e) => ({
    position: isFinal(e) ? null : ++position,
    seq: e.seq,
    id: e.id,
    branch: e.branch,
    tip: e.tip,
    state: e.state,
    authority: e.authority,
    reason: e.reason,
    rejection: e.rejection,
    landed: e.landed,
    gate_runs: e.gate_runs,
    submitted_at: e.submitted_at,
    leftover: e.leftover ?? null,
  }));
}

/** One entry's view, its position counted among the whole queue as it is on disk now. */
export async function viewEntry(commonDir: string, entry: QueueEntry): Promise<QueueEntryView> {
  const all = await readQueue(commonDir).catch(() => [] as QueueEntry[]);
  const known = all.some((e) => e.seq === entry.seq);
  const views = viewQueue(known ? all.map((e) => (e.seq === entry.seq ? entry : e)) : [entry]);
  const view = views.find((v) => v.seq === entry.seq);
  if (view === undefined) throw new Error("unreachable: the entry is in its own view");
  return view;
}

/** A berth's newest entry as status shows it on its row. */
export interface StatusQueueEntry {
  state: QueueState;
  position: number | null;
  reason: string | null;
}

/** Each branch's newest entry (later entries replace earlier ones). */
export async function readQueueByBranch(commonDir: string): Promise<Map<string, StatusQueueEntry>> {
  return new Map(
    viewQueue(await readQueue(commonDir)).map((e) => [
      e.branch,
      { state: e.state, position: e.position, reason: e.reason },
    ]),
  );
}
