import { GitError } from "../../errors.js";
import { mergedTree } from "../../git/merge.js";
import type { RefEntry } from "../../git/parse.js";
import { readTreesOf } from "../../git/tree.js";
import type { Ancestry } from "./commit-graph.js";
import { mapPool } from "./pool.js";

/**
 * THE integrated rule (spec section 13, docs/decisions/0050): the one place
 * that decides whether a branch's work is in the trunk although its commits
 * are not (a squash- or rebase-merge on a forge). status, prune, the desk and
 * await ask here. In order, for a tip the landed rule did not call landed:
 *   0. it has work of its own: its tree differs from the tree where it forked
 *      from the trunk (empty commits are no work; one cat-file for all tips);
 *   1. its tree equals the trunk tip's tree (both trees came with the refs
 *      already read: no process);
 *   2. else merging it into the trunk tip changes nothing: `git merge-tree
 *      --write-tree` gives the trunk tip's own tree (one process per tip;
 *      a conflict, or unrelated histories, is never integrated).
 * The trunk compared with is `integrationTrunk`: the remote's trunk as last
 * fetched when `[remote].name` is set and the local trunk is not ahead of it,
 * else the local trunk.
 */

export interface IntegrationTrunk {
  tip: string;
  tree: string | null;
  /** The ref the tip was read from (refs/heads/<trunk> or refs/remotes/<remote>/<trunk>). */
  ref: string;
}

/** The ref holding the remote's trunk as last fetched, or null without a remote. */
export function remoteTrunkRef(remote: string | null, trunk: string | null): string | null {
  return remote === null || trunk === null ? null : `refs/remotes/${remote}/${trunk}`;
}

/** The trunk integration is judged against (module header), or null when there is none. */
export function integrationTrunk(
  refs: readonly RefEntry[],
  trunkName: string | null,
  remote: string | null,
  ancestry: Ancestry | null,
): IntegrationTrunk | null {
  if (trunkName === null) return null;
  const localRef = `refs/heads/${trunkName}`;
  const local = refs.find((r) => r.ref === localRef) ?? null;
  const remoteRef = remoteTrunkRef(remote, trunkName);
  const onRemote = remoteRef === null ? null : (refs.find((r) => r.ref === remoteRef) ?? null);
  const use =
    onRemote !== null &&
    (local === null || ancestry === null || ancestry.isAncestor(local.oid, onRemote.oid))
      ? onRemote
      : local;
  return use === null ? null : { tip: use.oid, tree: use.tree, ref: use.ref };
}

export interface IntegrationCandidate {
  tip: string;
  /** The tip's tree when the refs carried it, else null (read with the fork points'). */
  tree: string | null;
  /** Where it forked from the trunk (fleet/commit-graph.ts `forkPoint`); null: unknown, never integrated. */
  fork: string | null;
}

/**
 * The candidate tips whose work is integrated into `trunk` (module header).
 * Tips equal to or reachable from the trunk are the landed rule's, not this one's.
 */
export async function findIntegratedTips(
  cwd: string,
  trunk: IntegrationTrunk,
  candidates: readonly IntegrationCandidate[],
  ancestry: Ancestry,
  lanes: number,
): Promise<Set<string>> {
  const integrated = new Set<string>();
  const pending: string[] = [];
  const seen = new Set<string>();
  const asked = candidates.filter(({ tip, fork }) => {
    if (fork === null || seen.has(tip) || ancestry.isAncestor(tip, trunk.tip)) return false;
    seen.add(tip);
    return true;
  });
  if (asked.length === 0) return integrated;
  const unknown = asked.flatMap((c) =>
    c.tree === null ? [c.tip, c.fork as string] : [c.fork as string],
  );
  const trees = await readTreesOf(cwd, unknown);
  for (const { tip, fork, tree: known } of asked) {
    const tree = known ?? trees.get(tip) ?? null;
    // Step 0: nothing of its own to integrate.
    if (tree === null || tree === trees.get(fork as string)) continue;
    if (trunk.tree !== null && tree === trunk.tree) integrated.add(tip);
    else pending.push(tip);
  }
  if (trunk.tree === null || pending.length === 0) return integrated;
  const answers = await mapPool(pending, lanes, (tip) =>
    mergeChangesNothing(cwd, trunk.tip, trunk.tree as string, tip),
  );
  pending.forEach((tip, i) => {
    if (answers[i]) integrated.add(tip);
  });
  return integrated;
}

/** Step 2: merging `tip` into `trunkTip` leaves `trunkTree` exactly. */
export async function mergeChangesNothing(
  cwd: string,
  trunkTip: string,
  trunkTree: string,
  tip: string,
): Promise<boolean> {
  try {
    return (await mergedTree(cwd, trunkTip, tip)) === trunkTree;
  } catch (error) {
    // Unrelated histories (or a tip git cannot read) merge into nothing berth can vouch for.
    if (error instanceof GitError) return false;
    throw error;
  }
}
