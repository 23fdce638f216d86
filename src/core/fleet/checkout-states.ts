import { isWaitingForSlot } from "../../io/gate-slots.js";
import { type OperationInProgress, readOperationInProgress } from "../../io/in-progress.js";
import type { WorktreeSkeleton } from "./survey.js";

/**
 * What status reads of each checkout's git dir besides the survey: the git
 * operation stopped half-way there, and whether a gate waits for a slot.
 * Each is read once per checkout and run, as soon as the survey knows the
 * worktrees (while their statuses still run), so the rows, the hints and
 * the progress table all ask here and nothing is read after the last
 * status (decision 0030).
 */
export interface CheckoutStates {
  /** Reads both for these checkouts now. */
  readAll(worktrees: readonly WorktreeSkeleton[]): void;
  operation(w: WorktreeSkeleton): OperationInProgress | null;
  waitingForSlot(w: WorktreeSkeleton): Promise<boolean>;
}

export function checkoutStates(): CheckoutStates {
  const operations = new Map<string, OperationInProgress | null>();
  const waits = new Map<string, Promise<boolean>>();
  const operation = (w: WorktreeSkeleton) => {
    if (w.adminDir === null || w.entry.prunable) return null;
    let op = operations.get(w.adminDir);
    if (op === undefined) {
      op = readOperationInProgress(w.adminDir);
      operations.set(w.adminDir, op);
    }
    return op;
  };
  const waitingForSlot = (w: WorktreeSkeleton) => {
    if (w.adminDir === null) return Promise.resolve(false);
    let wait = waits.get(w.adminDir);
    if (wait === undefined) {
      wait = isWaitingForSlot(w.adminDir);
      waits.set(w.adminDir, wait);
    }
    return wait;
  };
  return {
    readAll: (worktrees) => {
      for (const w of worktrees) {
        operation(w);
        void waitingForSlot(w);
      }
    },
    operation,
    waitingForSlot,
  };
}
