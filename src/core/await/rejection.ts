import { type QueueEntry, readQueue } from "../../io/queue-store.js";
import type { Probe } from "./wait.js";

/**
 * `await --landed` and the landing queue (spec section 11): the one place a
 * wait learns that the branch will not land as it is. The branch's newest
 * queue entry rejected at the tip the branch holds now ends the wait, not
 * met, with reason "rejected"; a new commit (a fix) makes the wait go on.
 */

export async function queueRejection(
  commonDir: string,
  branch: string,
  tip: string | null,
): Promise<QueueEntry | null> {
  const entries = await readQueue(commonDir).catch(() => [] as QueueEntry[]);
  const newest = entries.filter((e) => e.branch === branch).at(-1);
  return newest?.state === "rejected" && newest.tip === tip ? newest : null;
}

/** The probe, answering (as if met) once the entry was rejected; `rejected()` tells which. */
export function rejectableProbe<O extends { met: boolean; tip: string | null }>(
  probe: Probe<O>,
  commonDir: string,
  branch: string | null,
): Probe<O> & { rejected(): QueueEntry | null } {
  let rejection: QueueEntry | null = null;
  return {
    observe: async () => {
      const observation = await probe.observe();
      if (observation.met || branch === null) return observation;
      rejection = await queueRejection(commonDir, branch, observation.tip);
      return rejection === null ? observation : { ...observation, met: true };
    },
    rejected: () => rejection,
  };
}
