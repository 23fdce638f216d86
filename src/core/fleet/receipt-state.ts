import { readTreesOf } from "../../git/tree.js";
import { type Receipt, readReceipt } from "../../io/receipt-file.js";
import type { WorktreeFacts } from "./survey.js";

/**
 * Receipt inspection: the one place that decides whether a gate receipt still
 * proves anything. status, accept, await and the desk all ask here.
 */

export type ReceiptState = "honored" | "stale" | "dirty" | "missing";

export interface ReceiptFacts {
  /** The tree of the checkout's tip; null when unknown (no commit, or git could not say). */
  tipTree: string | null;
  /** The working tree is clean (untracked files count); null when unknown. */
  clean: boolean | null;
}

/**
 * honored: the receipt's tree is the tip's tree and the working tree is clean.
 * stale: the tip's tree differs (new commits, or an unknown tip).
 * dirty: the tree matches but the working tree has changes, or its cleanliness
 * is unknown (unknown never counts as clean).
 */
export function inspectReceipt(receipt: Receipt | null, facts: ReceiptFacts): ReceiptState {
  if (receipt === null) return "missing";
  if (facts.tipTree === null || facts.tipTree !== receipt.tree) return "stale";
  return facts.clean === true ? "honored" : "dirty";
}

export interface ReceiptView {
  state: ReceiptState;
  /** The receipt as read; null when missing (or unreadable). */
  receipt: Receipt | null;
}

const MISSING: ReceiptView = { state: "missing", receipt: null };

/**
 * Receipt state for surveyed worktrees, keyed by worktree path. Reads each
 * receipt file (no process), then the tip trees of only the rows that have
 * one, in a single git process for the whole set. Cleanliness comes from the
 * survey's own `git status`; a row whose status was not read is never honored.
 */
export async function readReceiptViews(
  cwd: string,
  worktrees: readonly WorktreeFacts[],
): Promise<Map<string, ReceiptView>> {
  return (await prepareReceiptViews(cwd, worktrees))(worktrees);
}

/**
 * The part of `readReceiptViews` that needs no `git status`: the receipt
 * files and their tips' trees, read while the statuses run. The function it
 * returns judges each receipt once the same worktrees' statuses are in.
 */
export async function prepareReceiptViews(
  cwd: string,
  worktrees: readonly Pick<WorktreeFacts, "entry" | "adminDir">[],
): Promise<
  (surveyed: readonly Pick<WorktreeFacts, "entry" | "status">[]) => Map<string, ReceiptView>
> {
  const receipts = await Promise.all(
    worktrees.map(async (w) =>
      w.adminDir === null || w.entry.prunable ? null : await readReceipt(w.adminDir),
    ),
  );
  const tips = worktrees.flatMap((w, i) =>
    receipts[i] !== null && w.entry.head !== null ? [w.entry.head] : [],
  );
  const trees = tips.length === 0 ? new Map<string, string | null>() : await readTreesOf(cwd, tips);
  return (surveyed) => {
    const statusOf = new Map(surveyed.map((w) => [w.entry.path, w.status]));
    const views = new Map<string, ReceiptView>();
    worktrees.forEach((w, i) => {
      const receipt = receipts[i] ?? null;
      if (receipt === null) {
        views.set(w.entry.path, MISSING);
        return;
      }
      const tipTree = w.entry.head === null ? null : (trees.get(w.entry.head) ?? null);
      const status = statusOf.get(w.entry.path) ?? null;
      const clean = status === null ? null : status.changedFiles === 0;
      views.set(w.entry.path, { state: inspectReceipt(receipt, { tipTree, clean }), receipt });
    });
    return views;
  };
}

/** One worktree's receipt state (accept, await, the desk's detail pane). */
export async function readReceiptView(cwd: string, worktree: WorktreeFacts): Promise<ReceiptView> {
  return (await readReceiptViews(cwd, [worktree])).get(worktree.entry.path) ?? MISSING;
}
