import { isAncestor } from "../../git/ancestry.js";
import { appendNote, grepNotes, mergeNotes, readNote, readNotes } from "../../git/notes.js";
import { readRefTips } from "../../git/refs.js";
import { fetchRefspecs, lsRemote, pushWithLease } from "../../git/remote.js";
import type { Receipt } from "../../io/receipt-file.js";
import type { Repository } from "../repo/repository.js";

/**
 * Receipts across machines (spec section 13, docs/decisions/0053): the one
 * place berth publishes notes to the `[remote]` and reads them back.
 * A gate's verdict is one JSON line in a note on its commit under
 * `refs/notes/berth`: a green receipt, or a red run's line that supersedes
 * it (docs/decisions/0074). Publishing a notes ref, in order:
 *   1. ask the remote for its tip of the ref (`ls-remote`);
 *   2. when it has one ours does not contain: fetch it into
 *      `refs/notes/remotes/<remote>/<name>` and merge it into ours
 *      (`cat_sort_uniq`: every machine's lines are kept);
 *   3. push ours with a lease on the tip seen in 1 (absent = must not exist);
 *   4. refused (another machine pushed meanwhile): again from 1, a few times;
 *      declined by the remote's own rules (a hook): said once, never retried.
 * Nothing here overwrites another machine's note.
 */

export const RECEIPT_NOTES = "berth";
const ATTEMPTS = 5;

/** The local copy of a remote's notes ref, as last fetched. */
export function remoteNotesRef(remote: string, name: string): string {
  return `refs/notes/remotes/${remote}/${name}`;
}

/** What a gate's note line records: a receipt's fields, or a red run's (some check not ok). */
export type GateVerdict = Pick<
  Receipt,
  "commit" | "tree" | "branch" | "gate_digest" | "checks" | "created_at"
>;

/** A verdict as its note line: what another machine needs to judge it. */
export function receiptNoteLine(verdict: GateVerdict): string {
  const { commit, tree, branch, gate_digest, checks, created_at } = verdict;
  return JSON.stringify({
    berth_receipt: 1,
    commit,
    tree,
    branch,
    gate_digest,
    checks,
    created_at,
  });
}

/** Records the verdict as a note and publishes the notes ref; returns what happened, for the gate's step. */
export async function publishReceipt(repo: Repository, verdict: GateVerdict): Promise<string> {
  const remote = repo.config.remote.name;
  if (remote === null) return "not published (no [remote].name)";
  const cwd = repo.location.cwd;
  const note = await appendNote(
    cwd,
    RECEIPT_NOTES,
    verdict.commit,
    `${receiptNoteLine(verdict)}\n`,
  );
  if (note.fate !== "written")
    return `not published: the note could not be written (${note.message})`;
  return publishNotes(cwd, remote, RECEIPT_NOTES);
}

/** Steps 1-4 of the module header for `refs/notes/<name>`. */
export async function publishNotes(cwd: string, remote: string, name: string): Promise<string> {
  const ref = `refs/notes/${name}`;
  const tracking = remoteNotesRef(remote, name);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const listed = await lsRemote(cwd, remote, [ref]);
    if (listed.fate === "unreachable")
      return `not published: remote ${remote} failed (${listed.message})`;
    const theirs = listed.tips.get(ref) ?? null;
    if (theirs !== null) {
      const fetched = await fetchRefspecs(cwd, remote, [`+${ref}:${tracking}`]);
      if (fetched.fate !== "fetched")
        return `not published: remote ${remote} failed (${fetched.message})`;
      const ours = (await readRefTips(cwd, [ref])).get(ref) ?? null;
      if (ours === null || !(await isAncestor(cwd, theirs, ours)))
        await mergeNotes(cwd, name, tracking);
    }
    const ours = (await readRefTips(cwd, [ref])).get(ref);
    if (ours == null) return "not published: no local notes";
    const pushed = await pushWithLease(cwd, remote, ref, theirs ?? "", ours);
    if (pushed.fate === "pushed") return `published to ${remote} (${ref})`;
    if (pushed.fate === "declined")
      return `not published: ${remote} declined the push (${pushed.message})`;
    if (pushed.fate === "unreachable")
      return `not published: remote ${remote} failed (${pushed.message})`;
  }
  return `not published: ${remote}'s ${ref} kept moving (${ATTEMPTS} attempts)`;
}

/** One receipt line read back from a note. */
export interface ReceiptNote {
  commit: string;
  tree: string;
  branch: string;
  gate_digest: string | null;
  checks: { ok: boolean }[];
  created_at?: string;
}

/** The receipt lines of the note on `commit` under a notes ref (full name). */
export async function readReceiptNotes(
  cwd: string,
  ref: string,
  commit: string,
): Promise<ReceiptNote[]> {
  return parseReceiptLines(await readNote(cwd, ref, commit));
}

/** readReceiptNotes for many commits, in one git process. */
export async function readReceiptNotesOf(
  cwd: string,
  ref: string,
  commits: readonly string[],
): Promise<Map<string, ReceiptNote[]>> {
  const notes = await readNotes(cwd, ref, commits);
  return new Map([...notes].map(([commit, text]) => [commit, parseReceiptLines(text)]));
}

/** A note's receipt lines; any other line (another writer's, a torn one) is no receipt. */
function parseReceiptLines(text: string | null): ReceiptNote[] {
  if (text === null) return [];
  return text.split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as Partial<ReceiptNote> & { berth_receipt?: unknown };
      if (parsed.berth_receipt !== 1 || typeof parsed.commit !== "string") return [];
      if (typeof parsed.tree !== "string" || !Array.isArray(parsed.checks)) return [];
      return [parsed as ReceiptNote];
    } catch {
      return [];
    }
  });
}

/**
 * THE remote green rule: of the lines naming exactly `tip`, its tree (a note
 * for an older tree never satisfies a newer tip) and the gate declared here
 * (invariant 8), the newest decides, as the last gate run decides the local
 * receipt (docs/decisions/0074). It is green when every check passed; a tie
 * with a red line is red (fail closed).
 */
export function notesHonor(
  notes: readonly ReceiptNote[],
  tip: string,
  tree: string,
  gateDigest: string,
  declared: number,
): boolean {
  const passed = (note: ReceiptNote) =>
    (note.checks.length > 0 || declared === 0) && note.checks.every((c) => c.ok === true);
  const when = (note: ReceiptNote) => Date.parse(note.created_at ?? "") || 0;
  let newest: ReceiptNote | null = null;
  for (const note of notes) {
    if (note.commit !== tip || note.tree !== tree || note.gate_digest !== gateDigest) continue;
    if (newest === null || when(note) > when(newest)) newest = note;
    else if (when(note) === when(newest) && !passed(note)) newest = note;
  }
  return newest !== null && passed(newest);
}

/** Landing note lines (refs/notes/berth-landings) that mention `branch`, in one git grep. */
export function grepLandingNotes(cwd: string, ref: string, branch: string): Promise<string[]> {
  return grepNotes(cwd, ref, JSON.stringify(branch));
}
