import { addedAndDeletedPaths } from "../../git/history.js";
import type { WorktreeEntry } from "../../git/parse.js";
import { indexFileOf, indexMatches, refreshIndex, twoTreeUpdate } from "../../git/read-tree.js";
import { readWorktreeStatus } from "../../git/status.js";
import { findPathsInTheWay } from "../../io/in-the-way.js";
import { withIndexCopy } from "../../io/index-copy.js";
import { type MainCheckoutPlace, mainCheckoutIndex } from "../repo/main-checkout.js";

/**
 * The checkout that has the trunk checked out, when the trunk moves under it
 * (accept). Only the main checkout is brought along; berth refuses to move a
 * trunk that a linked worktree has checked out. Bringing it along is a
 * two-tree `read-tree -m -u` from the old tip to the new one, which is what
 * `git checkout` does: it keeps untracked files and refuses to overwrite any.
 */

export interface TrunkHolders {
  /** The main checkout has the trunk checked out: its files must follow the trunk. */
  mainFollows: boolean;
  /** Linked worktrees that have the trunk checked out. */
  linked: string[];
}

/**
 * Who has `trunk` checked out; `entries` in `git worktree list` order, and
 * `place` tells the main checkout (core/repo/main-checkout.ts).
 */
export function trunkHolders(
  entries: readonly WorktreeEntry[],
  trunk: string,
  place: MainCheckoutPlace,
): TrunkHolders {
  const main = entries[mainCheckoutIndex(entries, place)];
  const holders = entries.filter((e) => !e.prunable && !e.bare && e.branch === trunk);
  return {
    mainFollows: main !== undefined && holders.includes(main),
    linked: holders.filter((e) => e !== main).map((e) => e.path),
  };
}

export type FollowBlocker =
  | { kind: "tracked"; count: number; files: string[] }
  | { kind: "in_the_way"; files: string[] }
  | { kind: "git"; output: string };

/**
 * Why the checkout at `path` (on the trunk, at `from`) could not follow the
 * trunk to `to`, or null when it can. Reads only: git's own dry run works on
 * a copy of the index. Untracked files the new commit would overwrite are
 * checked by berth too, because git counts ignored files as expendable and
 * berth never loses a file.
 */
export async function followBlocker(
  path: string,
  from: string,
  to: string,
): Promise<FollowBlocker | null> {
  const status = await readWorktreeStatus(path);
  if (status.trackedChanges > 0) {
    // git lists tracked entries before untracked ones.
    const files = status.paths.slice(0, Math.min(status.trackedChanges, 10));
    return { kind: "tracked", count: status.trackedChanges, files };
  }
  const { added, deleted } = await addedAndDeletedPaths(path, from, to);
  const inTheWay = await findPathsInTheWay(path, added, deleted);
  if (inTheWay.length > 0) return { kind: "in_the_way", files: inTheWay };
  const index = await indexFileOf(path);
  const attempt = await withIndexCopy(index, async (copy) => {
    await refreshIndex(path, copy);
    return twoTreeUpdate(path, from, to, { dryRun: true, indexFile: copy });
  });
  return attempt.ok ? null : { kind: "git", output: attempt.output };
}

/** Brings the checkout at `path` from `from` to `to` (its branch ref already points at `to`). */
export async function followTrunk(
  path: string,
  from: string,
  to: string,
): Promise<{ ok: boolean; output: string }> {
  await refreshIndex(path);
  return twoTreeUpdate(path, from, to, { dryRun: false });
}

/**
 * After a landing that stopped before the main checkout followed: "done"
 * when its index already holds `to`, "pending" when it still holds `from`
 * (nothing touched it since), "unknown" otherwise.
 */
export async function followState(
  path: string,
  from: string,
  to: string,
): Promise<"done" | "pending" | "unknown"> {
  if (await indexMatches(path, to)) return "done";
  if (await indexMatches(path, from)) return "pending";
  return "unknown";
}
