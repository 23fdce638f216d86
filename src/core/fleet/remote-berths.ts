import { listRefs } from "../../git/refs.js";
import { fetchRefspecs, lsRemote } from "../../git/remote.js";
import { naturalCompare } from "../../text.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import {
  notesHonor,
  RECEIPT_NOTES,
  readReceiptNotes,
  remoteNotesRef,
} from "../landing/receipt-notes.js";
import { remoteFailed } from "../repo/remote.js";
import type { Repository } from "../repo/repository.js";

/**
 * `berth status --remote` (spec section 13, docs/decisions/0054): berth
 * branches on the `[remote]` that no local checkout holds, and whether a
 * green receipt note exists for each tip. In order: one fetch of the branches
 * under the prefix (into refs/remotes/<remote>/<prefix>...) and, when the
 * remote has them, the receipt notes; one for-each-ref (tips and trees); one
 * `git notes show` per listed branch, judged by receipt-notes.ts `notesHonor`.
 */

export interface RemoteBerth {
  /** The branch as named on the remote (e.g. berth/x-1a2b3c). */
  branch: string;
  tip: string;
  /** A receipt note honors the tip (its commit, its tree, this gate). */
  green: boolean;
}

export async function readRemoteBerths(
  repo: Repository,
  checkedOut: ReadonlySet<string>,
): Promise<RemoteBerth[]> {
  const remote = repo.config.remote.name;
  if (remote === null) return [];
  const cwd = repo.location.cwd;
  const prefix = repo.config.repository.branch_prefix;
  const notes = `refs/notes/${RECEIPT_NOTES}`;
  const tracking = remoteNotesRef(remote, RECEIPT_NOTES);
  const listed = await lsRemote(cwd, remote, [notes]);
  if (listed.fate === "unreachable") throw remoteFailed(remote, listed.message, "nothing was read");
  const refspecs = [
    `+refs/heads/${prefix}*:refs/remotes/${remote}/${prefix}*`,
    ...(listed.tips.has(notes) ? [`+${notes}:${tracking}`] : []),
  ];
  // Pruned: a branch deleted on the remote is no longer listed (only these refspecs' refs go).
  const fetched = await fetchRefspecs(cwd, remote, refspecs, { prune: true });
  if (fetched.fate !== "fetched") throw remoteFailed(remote, fetched.message, "nothing was read");
  const under = `refs/remotes/${remote}/`;
  const refs = await listRefs(cwd, [`${under}${prefix.replace(/\/$/, "")}`]);
  const gate = gateDefinitionOf(repo.config.gate);
  const declared = repo.config.gate.checks.length;
  const rows = refs
    .map((r) => ({ branch: r.ref.slice(under.length), tip: r.oid, tree: r.tree }))
    .filter((r) => r.branch.startsWith(prefix) && !checkedOut.has(r.branch));
  const answers = await Promise.all(
    rows.map(async (r) => {
      if (!listed.tips.has(notes) || r.tree === null) return false;
      const found = await readReceiptNotes(cwd, tracking, r.tip);
      return notesHonor(found, r.tip, r.tree as string, gate.digest, declared);
    }),
  );
  return rows
    .map((r, i) => ({ branch: r.branch, tip: r.tip, green: answers[i] === true }))
    .sort((a, b) => naturalCompare(a.branch, b.branch));
}
