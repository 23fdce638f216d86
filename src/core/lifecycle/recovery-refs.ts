import { createRef, deleteRef, listRefs } from "../../git/refs.js";

/**
 * Recovery refs (spec section 2): `refs/berth/recovery/<utc>-<id>`, written
 * before a forced drop deletes a branch, or prune removes an integrated
 * berth (its commits are not on the trunk), so the commits it held stay
 * reachable. The newest RECOVERY_REFS_KEPT are kept.
 */

export const RECOVERY_PREFIX = "refs/berth/recovery/";
export const RECOVERY_REFS_KEPT = 32;

/** `20260601T120000.000Z`: sorts by time as text, valid in a ref name. */
export function recoveryStamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, "");
}

export function recoveryRefName(now: Date, id: string): string {
  return `${RECOVERY_PREFIX}${recoveryStamp(now)}-${id}`;
}

/**
 * Creates the recovery ref for `commit` (refusing to replace an existing
 * one) and returns its name; throws when it cannot be written.
 */
export async function writeRecoveryRef(
  cwd: string,
  id: string,
  commit: string,
  now: Date,
  before = "dropping",
): Promise<string> {
  const ref = recoveryRefName(now, id);
  await createRef(cwd, ref, commit, `berth: recovery ref before ${before} ${id}`);
  return ref;
}

/** The newest recovery ref written for berth `id`, or null (names end in `-<id>`, sort by time). */
export async function findRecoveryRef(
  cwd: string,
  id: string,
): Promise<{ ref: string; oid: string } | null> {
  const refs = await listRefs(cwd, [RECOVERY_PREFIX.replace(/\/$/, "")]);
  // The stamp has no "-": what follows the first one is the id.
  const idOf = (ref: string) => {
    const name = ref.slice(RECOVERY_PREFIX.length);
    return name.slice(name.indexOf("-") + 1);
  };
  const mine = refs
    .filter((r) => r.ref.startsWith(RECOVERY_PREFIX) && idOf(r.ref) === id)
    .sort((a, b) => (a.ref < b.ref ? 1 : -1));
  const newest = mine[0];
  return newest === undefined ? null : { ref: newest.ref, oid: newest.oid };
}

/** Which refs fall outside the newest `keep` (names sort by time). Pure. */
export function recoveryRefsBeyond(
  refs: readonly { ref: string; oid: string }[],
  keep: number,
): { ref: string; oid: string }[] {
  const newestFirst = refs
    .filter((r) => r.ref.startsWith(RECOVERY_PREFIX))
    .sort((a, b) => (a.ref < b.ref ? 1 : a.ref > b.ref ? -1 : 0));
  return newestFirst.slice(keep);
}

/** Deletes recovery refs beyond the newest RECOVERY_REFS_KEPT, each by compare-and-swap. */
export async function pruneRecoveryRefs(cwd: string, keep = RECOVERY_REFS_KEPT): Promise<string[]> {
  const refs = await listRefs(cwd, [RECOVERY_PREFIX.replace(/\/$/, "")]);
  const old = recoveryRefsBeyond(refs, keep);
  const deleted: string[] = [];
  for (const { ref, oid } of old) {
    try {
      await deleteRef(cwd, ref, oid);
      deleted.push(ref);
    } catch {
      // Moved or already gone: someone else is tending it.
    }
  }
  return deleted;
}
