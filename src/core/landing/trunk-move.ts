import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { moveRef, readRefTips, resolveCommit } from "../../git/refs.js";
import { lsRemote, pushWithLease } from "../../git/remote.js";
import { shellCommand, shortOid } from "../../text.js";
import { remoteTrunkRef } from "../fleet/integration.js";
import { updateThenAccept } from "./accept-subject.js";

/**
 * THE trunk move (spec sections 5 and 13, docs/decisions/0051): the one
 * place a landing moves the trunk, so the queue and accept share it. In order:
 *   without `[remote].name`: a compare-and-swap of `refs/heads/<trunk>` from
 *   `old` to the proved commit;
 *   with one:
 *     1. the remote's trunk as last fetched is the lease (`old` when never
 *        fetched); the commit must contain it, so the remote moves only by
 *        fast-forward (invariant 3);
 *     2. `git push --force-with-lease=refs/heads/<trunk>:<lease> <remote>
 *        <commit>:refs/heads/<trunk>`: exactly the proved commit, never a name;
 *     3. only after the remote took it, the local trunk by compare-and-swap
 *        from `old`, so the local trunk is never ahead of what the remote accepted.
 * A remote that moved is `raced`; one whose own rules declined the push (a
 * pre-receive hook, a protected branch) `declined`, which no retry changes;
 * one that cannot be reached, or refused the push without its trunk having
 * moved, `remote_failed`: nothing changed locally in any case.
 */

export type TrunkMove =
  | { fate: "moved"; reason: string }
  | { fate: "raced"; message: string }
  | { fate: "failed"; message: string }
  | { fate: "declined"; remote: string; message: string }
  | { fate: "remote_failed"; remote: string; message: string };

export async function moveTrunk(
  cwd: string,
  remote: string | null,
  trunk: string,
  commit: string,
  old: string,
  reason: string,
): Promise<TrunkMove> {
  const trunkRef = `refs/heads/${trunk}`;
  const moved = { fate: "moved", reason: `${shortOid(old)} -> ${shortOid(commit)}` } as const;
  if (remote === null) return (await moveLocal(cwd, trunkRef, commit, old, reason)) ?? moved;

  const tracking = remoteTrunkRef(remote, trunk) as string;
  const lease = (await readRefTips(cwd, [tracking])).get(tracking) ?? old;
  if (!(await isAncestor(cwd, lease, commit))) {
    return {
      fate: "raced",
      message: `${remote}'s ${trunk} is at ${shortOid(lease)}, which ${shortOid(commit)} does not contain`,
    };
  }
  const pushed = await pushWithLease(cwd, remote, `refs/heads/${trunk}`, lease, commit);
  if (pushed.fate === "rejected") {
    // A remote that cannot write its ref at all (a stale lock, a full disk) says what a lost
    // race says; only a trunk that really moved is a race to retry on the new tip.
    const listed = await lsRemote(cwd, remote, [trunkRef]);
    if (listed.fate === "listed" && listed.tips.get(trunkRef) === lease) {
      const message = `its ${trunk} is still at ${shortOid(lease)}, yet it did not take the push (${pushed.message})`;
      return { fate: "remote_failed", remote, message };
    }
    return {
      fate: "raced",
      message: `${remote} refused the push: its ${trunk} is no longer at ${shortOid(lease)} (${pushed.message})`,
    };
  }
  if (pushed.fate === "declined") return { fate: "declined", remote, message: pushed.message };
  if (pushed.fate === "unreachable")
    return { fate: "remote_failed", remote, message: pushed.message };
  // The remote took it: the local trunk follows, never ahead of it.
  const local = await moveLocal(cwd, trunkRef, commit, old, reason);
  if (local === null) return { ...moved, reason: `${moved.reason} (pushed to ${remote})` };
  return {
    ...moved,
    reason: `${moved.reason} on ${remote}; the local ${trunk} did not follow: ${local.message}`,
  };
}

/**
 * accept's refusal for a trunk move that did not happen (nothing landed):
 * `moved` for a remote or trunk that moved, `remote_failed` for a remote
 * that declined or could not be reached.
 */
export function trunkMoveRefusal(
  move: Exclude<TrunkMove, { fate: "moved" }>,
  landing: { id: string; path: string; trunk: string; commit: string; nothing: string },
  data: unknown,
): UserError {
  const { id, trunk, commit, nothing } = landing;
  switch (move.fate) {
    case "raced":
      return new UserError(
        "moved",
        `${trunk} moved while landing (${move.message}); ${nothing}, and the trunk was left where it is.`,
        { next: updateThenAccept(landing.path, id), data },
      );
    case "declined":
      // The remote's own rules said no, and trying again gets the same answer: the way on
      // is to take the entry out of the queue (and land it however that remote allows).
      return new UserError(
        "remote_failed",
        `${move.remote} declined the push of ${shortOid(commit)} to its ${trunk} (${move.message}); ` +
          `${nothing}. Trying again gets the same answer until ${move.remote}'s rules let this push in.`,
        { next: shellCommand(["berth", "queue", "withdraw", id]), data },
      );
    case "remote_failed":
    case "failed": {
      const why = move.fate === "remote_failed" ? `remote ${move.remote} failed: ` : "";
      return new UserError(
        move.fate === "remote_failed" ? "remote_failed" : "precondition_failed",
        `git could not move ${trunk}: ${why}${move.message}; ${nothing}.`,
        { next: shellCommand(["berth", "accept", id]), data },
      );
    }
  }
}

/** The local compare-and-swap; null when it moved, else why not. */
async function moveLocal(
  cwd: string,
  trunkRef: string,
  commit: string,
  old: string,
  reason: string,
): Promise<Exclude<TrunkMove, { fate: "moved" }> | null> {
  try {
    await moveRef(cwd, trunkRef, commit, old, reason);
    return null;
  } catch (error) {
    const now = await resolveCommit(cwd, trunkRef);
    if (now !== old) {
      return {
        fate: "raced",
        message: `it is at ${now ? shortOid(now) : "nothing"}, not ${shortOid(old)}`,
      };
    }
    return { fate: "failed", message: (error as Error).message };
  }
}
