import { readTreesOf } from "../../git/tree.js";
import { readReceipt, type StoredReceipt } from "../../io/receipt-file.js";
import type { GateDefinition } from "../landing/gate-definition.js";
import type { WorktreeFacts } from "./survey.js";

/**
 * Receipt inspection: the one place that decides whether a gate receipt still
 * proves anything. status, accept, await and the desk all ask here. In order:
 * 1. no receipt: missing;
 * 2. a receipt for another gate definition than the one declared now (its
 *    digest differs, it has none, or its checks are not the declared ones,
 *    all passed): stale (spec invariant 8, decision 0017);
 * 3. the tip's tree is not the receipt's (or is unknown): stale;
 * 4. the working tree is not known to be clean: dirty;
 * 5. otherwise honored.
 */

export type ReceiptState = "honored" | "stale" | "dirty" | "missing";

export interface ReceiptFacts {
  /** The tree of the checkout's tip; null when unknown (no commit, or git could not say). */
  tipTree: string | null;
  /** The working tree is clean (untracked files count); null when unknown. */
  clean: boolean | null;
  /** The gate as declared now. */
  gate: GateDefinition;
}

export function inspectReceipt(receipt: StoredReceipt | null, facts: ReceiptFacts): ReceiptState {
  if (receipt === null) return "missing";
  if (!provesGate(receipt, facts.gate)) return "stale";
  if (facts.tipTree === null || facts.tipTree !== receipt.tree) return "stale";
  return facts.clean === true ? "honored" : "dirty";
}

/**
 * The receipt was written by a green run of exactly this gate. The digest
 * decides; the recorded checks must agree with it too, so a receipt that
 * lists fewer checks than are declared (`checks: []` while checks are
 * declared) never proves this gate, whatever digest it claims.
 */
function provesGate(receipt: StoredReceipt, gate: GateDefinition): boolean {
  if (receipt.gate_digest === null || receipt.gate_digest !== gate.digest) return false;
  if (receipt.checks.length !== gate.checks.length) return false;
  return gate.checks.every((check, i) => {
    const recorded = receipt.checks[i];
    return recorded?.name === check.name && recorded.command === check.command && recorded.ok;
  });
}

export interface ReceiptView {
  state: ReceiptState;
  /** The receipt as read; null when missing (or unreadable). */
  receipt: StoredReceipt | null;
}

const MISSING: ReceiptView = { state: "missing", receipt: null };

/**
 * Receipt state for surveyed worktrees, keyed by worktree path, against the
 * gate as declared now. Reads each receipt file (no process), then the tip
 * trees of only the rows that have one, in a single git process for the whole
 * set. Cleanliness comes from the survey's own `git status`; a row whose
 * status was not read is never honored.
 */
export async function readReceiptViews(
  cwd: string,
  worktrees: readonly WorktreeFacts[],
  gate: GateDefinition,
): Promise<Map<string, ReceiptView>> {
  return (await prepareReceiptViews(cwd, worktrees, gate))(worktrees);
}

/**
 * The part of `readReceiptViews` that needs no `git status`: the receipt
 * files and their tips' trees, read while the statuses run. The function it
 * returns judges each receipt once the same worktrees' statuses are in.
 */
export async function prepareReceiptViews(
  cwd: string,
  worktrees: readonly Pick<WorktreeFacts, "entry" | "adminDir">[],
  gate: GateDefinition,
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
      views.set(w.entry.path, {
        state: inspectReceipt(receipt, { tipTree, clean, gate }),
        receipt,
      });
    });
    return views;
  };
}

/** One worktree's receipt state (accept, await, the desk's detail pane). */
export async function readReceiptView(
  cwd: string,
  worktree: WorktreeFacts,
  gate: GateDefinition,
): Promise<ReceiptView> {
  return (await readReceiptViews(cwd, [worktree], gate)).get(worktree.entry.path) ?? MISSING;
}
