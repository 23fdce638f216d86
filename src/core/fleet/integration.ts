import { GitError } from "../../errors.js";
import { changesAgainst } from "../../git/diff-tree.js";
import { mergedTree } from "../../git/merge.js";
import type { RefEntry } from "../../git/parse.js";
import { readObjectsAt, readTreesOf } from "../../git/tree.js";
import { type Ancestry, readAncestry } from "./commit-graph.js";
import { mapPool } from "./pool.js";
import { planWitnesses } from "./trunk-lacks.js";

/**
 * THE integrated rule (spec section 13, docs/decisions/0050): the one place
 * that decides whether a branch's work is in the trunk although its commits
 * are not (a squash- or rebase-merge on a forge). status, prune, the desk and
 * await ask here. In order, for a tip the landed rule did not call landed:
 *   0. it has work of its own: its tree differs from the tree where it forked
 *      from the trunk (empty commits are no work; one diff-tree for all tips,
 *      whose changes the shortcut below reuses);
 *   1. its tree equals the trunk tip's tree (trees mostly come with the refs
 *      already read; the others in the shortcut's one cat-file);
 *   2. else merging it into the trunk tip changes nothing: `git merge-tree
 *      --write-tree` gives the trunk tip's own tree (one process per tip;
 *      a conflict of any kind, or unrelated histories, is never integrated). Before it,
 *      fleet/trunk-lacks.ts sets aside the tips holding a change the trunk
 *      provably lacks (their fork point being their one merge base): no merge
 *      for those.
 * The trunk compared with is `integrationTrunk`: the remote's trunk as last
 * fetched when `[remote].name` is set and the local trunk is not ahead of it,
 * else the local trunk. await asks about one tip at a time (`isTipIntegrated`).
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
  trunk: Pick<IntegrationTrunk, "tip" | "tree">,
  candidates: readonly IntegrationCandidate[],
  ancestry: Ancestry,
  lanes: number,
): Promise<Set<string>> {
  return (await judgeIntegration(cwd, trunk, candidates, ancestry, lanes)).integrated;
}

/** findIntegratedTips, and the tips the shortcut settled without a merge (which the tests check). */
export async function judgeIntegration(
  cwd: string,
  trunk: Pick<IntegrationTrunk, "tip" | "tree">,
  candidates: readonly IntegrationCandidate[],
  ancestry: Ancestry,
  lanes: number,
): Promise<{ integrated: Set<string>; setAside: Set<string> }> {
  const integrated = new Set<string>();
  const seen = new Set<string>();
  const asked = candidates.filter(({ tip, fork }) => {
    if (fork === null || seen.has(tip) || ancestry.isAncestor(tip, trunk.tip)) return false;
    seen.add(tip);
    return true;
  });
  if (asked.length === 0 || trunk.tree === null) return { integrated, setAside: new Set() };
  const trunkTree = trunk.tree;
  // Step 0: a tip that changed nothing since it forked has no work of its own.
  const changes = await changesAgainst(
    cwd,
    asked.map((c) => ({ commit: c.tip, base: c.fork as string })),
  );
  const withWork = asked.filter((c) => (changes.get(c.tip)?.length ?? 0) > 0);
  // One cat-file: the trees the refs did not carry (step 1), then the shortcut's trunk objects.
  const unknownTrees = withWork.filter((c) => c.tree === null).map((c) => c.tip);
  const forkIsBase = withWork.filter((c) => ancestry.mergeBase(c.tip, trunk.tip) === c.fork);
  const plan = planWitnesses(
    trunk.tip,
    forkIsBase.map((c) => ({ tip: c.tip, changes: changes.get(c.tip) ?? [] })),
  );
  const objects = await readObjectsAt(cwd, [
    ...unknownTrees.map((tip) => `${tip}^{tree}`),
    ...plan.names,
  ]);
  const treeOf = new Map(unknownTrees.map((tip, i) => [tip, objects[i]?.oid ?? null]));
  const setAside = plan.decide(objects.slice(unknownTrees.length));
  const toMerge: string[] = [];
  for (const { tip, tree: known } of withWork) {
    const tree = known ?? treeOf.get(tip) ?? null;
    if (tree === null) continue;
    // Step 1, then the shortcut (which never sets aside a tip holding the trunk's tree).
    if (tree === trunkTree) integrated.add(tip);
    else if (!setAside.has(tip)) toMerge.push(tip);
  }
  const answers = await mapPool(toMerge, lanes, (tip) =>
    mergeChangesNothing(cwd, trunk.tip, trunkTree, tip),
  );
  toMerge.forEach((tip, i) => {
    if (answers[i]) integrated.add(tip);
  });
  return { integrated, setAside };
}

/**
 * The rule for one tip against one trunk tip (await's question, here or on a
 * remote), over a commit graph of just the two: the same steps as the fleet's.
 */
export async function isTipIntegrated(
  cwd: string,
  trunkTip: string,
  tip: string,
): Promise<boolean> {
  const ancestry = await readAncestry(cwd, [tip, trunkTip], { primary: trunkTip });
  const tree = (await readTreesOf(cwd, [trunkTip])).get(trunkTip) ?? null;
  const candidate = { tip, tree: null, fork: ancestry.forkPoint(tip, trunkTip) };
  return (await findIntegratedTips(cwd, { tip: trunkTip, tree }, [candidate], ancestry, 1)).has(
    tip,
  );
}

/** Step 2: merging `tip` into `trunkTip` leaves `trunkTree` exactly, with no conflict. */
async function mergeChangesNothing(
  cwd: string,
  trunkTip: string,
  trunkTree: string,
  tip: string,
): Promise<boolean> {
  try {
    const merged = await mergedTree(cwd, trunkTip, tip);
    return !merged.conflicted && merged.tree === trunkTree;
  } catch (error) {
    // Unrelated histories (or a tip git cannot read) merge into nothing berth can vouch for.
    if (error instanceof GitError) return false;
    throw error;
  }
}
