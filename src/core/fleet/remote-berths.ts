import type { RefEntry } from "../../git/parse.js";
import { listRefs } from "../../git/refs.js";
import { fetchRefspecs, lsRemote } from "../../git/remote.js";
import { naturalCompare } from "../../text.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import {
  notesHonor,
  RECEIPT_NOTES,
  type ReceiptNote,
  readReceiptNotesOf,
  remoteNotesRef,
} from "../landing/receipt-notes.js";
import { remoteFailed } from "../repo/remote.js";
import type { Repository } from "../repo/repository.js";
import { readAncestry } from "./commit-graph.js";
import { findIntegratedTips, remoteTrunkRef } from "./integration.js";
import { DEFAULT_POOL_SIZE } from "./pool.js";

/**
 * `berth status --remote` (spec section 13, docs/decisions/0054): berth
 * branches on the `[remote]` that no local checkout holds, whether each has
 * landed on the remote's trunk, and whether a green receipt note exists for
 * each tip. In order: one fetch of the branches under the prefix (into
 * refs/remotes/<remote>/<prefix>...), the trunk and, when the remote has
 * them, the receipt notes; one for-each-ref (tips and trees); one walk of the
 * history from the tips and the trunk (whether the trunk reaches each), the
 * integrated rule over the rest at once (./integration.ts); and beside them
 * one `git log --no-walk` reading every tip's note, judged by receipt-notes.ts
 * `notesHonor`.
 */

export interface RemoteBerth {
  /** The `[remote]` it is on. */
  remote: string;
  /** The branch as named on the remote (e.g. berth/x-1a2b3c). */
  branch: string;
  tip: string;
  /** The remote's trunk reaches the tip, or has it integrated (a forge's squash or rebase). */
  landed: boolean;
  /** A receipt note honors the tip (its commit, its tree, this gate). */
  green: boolean;
}

export async function readRemoteBerths(
  repo: Repository,
  trunk: string | null,
  checkedOut: ReadonlySet<string>,
): Promise<RemoteBerth[]> {
  const remote = repo.config.remote.name;
  if (remote === null) return [];
  const cwd = repo.location.cwd;
  const prefix = repo.config.repository.branch_prefix;
  const notes = `refs/notes/${RECEIPT_NOTES}`;
  const tracking = remoteNotesRef(remote, RECEIPT_NOTES);
  const trunkRef = trunk === null ? null : `refs/heads/${trunk}`;
  const listed = await lsRemote(cwd, remote, trunkRef === null ? [notes] : [notes, trunkRef]);
  if (listed.fate === "unreachable") throw remoteFailed(remote, listed.message, "nothing was read");
  const trunkTip = trunkRef === null ? null : (listed.tips.get(trunkRef) ?? null);
  const refspecs = [
    `+refs/heads/${prefix}*:refs/remotes/${remote}/${prefix}*`,
    ...(trunkTip === null ? [] : [`+${trunkRef}:${remoteTrunkRef(remote, trunk)}`]),
    ...(listed.tips.has(notes) ? [`+${notes}:${tracking}`] : []),
  ];
  // Pruned: a branch deleted on the remote is no longer listed (only these refspecs' refs go).
  const fetched = await fetchRefspecs(cwd, remote, refspecs, { prune: true });
  if (fetched.fate !== "fetched") throw remoteFailed(remote, fetched.message, "nothing was read");
  const under = `refs/remotes/${remote}/`;
  const trunkTracking = trunkTip === null ? null : remoteTrunkRef(remote, trunk);
  const refs = await listRefs(cwd, [
    `${under}${prefix.replace(/\/$/, "")}`,
    ...(trunkTracking === null ? [] : [trunkTracking]),
  ]);
  const gate = gateDefinitionOf(repo.config.gate);
  const declared = repo.config.gate.checks.length;
  const rows = refs
    .map((r) => ({ branch: r.ref.slice(under.length), tip: r.oid, tree: r.tree }))
    .filter((r) => r.branch.startsWith(prefix) && !checkedOut.has(r.branch));
  const [landed, receipts] = await Promise.all([
    landedTips(cwd, trunkTip, refs, trunkTracking, rows),
    listed.tips.has(notes)
      ? readReceiptNotesOf(
          cwd,
          tracking,
          rows.map((r) => r.tip),
        )
      : new Map<string, ReceiptNote[]>(),
  ]);
  return rows
    .map((r) => {
      const found = receipts.get(r.tip) ?? [];
      const green = r.tree !== null && notesHonor(found, r.tip, r.tree, gate.digest, declared);
      return { remote, branch: r.branch, tip: r.tip, landed: landed.has(r.tip), green };
    })
    .sort((a, b) => naturalCompare(a.branch, b.branch));
}

/** The tips the remote's trunk reaches or has integrated: one walk, one batch of the rule. */
async function landedTips(
  cwd: string,
  trunkTip: string | null,
  refs: readonly RefEntry[],
  trunkTracking: string | null,
  rows: readonly { tip: string; tree: string | null }[],
): Promise<Set<string>> {
  if (trunkTip === null || rows.length === 0) return new Set();
  // Times let the walk hand a far-behind root to git's count (fleet/commit-graph.ts).
  const times = new Map(refs.flatMap((r) => (r.time === undefined ? [] : [[r.oid, r.time]])));
  const ancestry = await readAncestry(cwd, [trunkTip, ...rows.map((r) => r.tip)], {
    primary: trunkTip,
    times,
  });
  const reached = rows.filter((r) => ancestry.isAncestor(r.tip, trunkTip)).map((r) => r.tip);
  const candidates = rows.map((r) => ({
    tip: r.tip,
    tree: r.tree,
    fork: ancestry.forkPoint(r.tip, trunkTip),
  }));
  const trunk = { tip: trunkTip, tree: refs.find((r) => r.ref === trunkTracking)?.tree ?? null };
  const integrated = await findIntegratedTips(cwd, trunk, candidates, ancestry, DEFAULT_POOL_SIZE);
  return new Set([...reached, ...integrated]);
}
