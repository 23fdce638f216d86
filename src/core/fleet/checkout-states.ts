import { isWaitingForSlot } from "../../io/gate-slots.js";
import { type OperationInProgress, readOperationInProgress } from "../../io/in-progress.js";
import { shellCommand } from "../../text.js";
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
  const readOperation = once(readOperationInProgress);
  const readWaiting = once(isWaitingForSlot);
  const operation = (w: WorktreeSkeleton) =>
    w.adminDir === null || w.entry.prunable ? null : readOperation(w.adminDir);
  const waitingForSlot = (w: WorktreeSkeleton) =>
    w.adminDir === null ? Promise.resolve(false) : readWaiting(w.adminDir);
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

/** `read` of each admin dir, read the first time it is asked for. */
function once<T>(read: (adminDir: string) => T): (adminDir: string) => T {
  const seen = new Map<string, T>();
  return (adminDir) => {
    if (!seen.has(adminDir)) seen.set(adminDir, read(adminDir));
    return seen.get(adminDir) as T;
  };
}

/**
 * What an operation in progress in the checkout at `path` is and the git
 * commands that end it, for a hint: status and prune say it in these words.
 */
export function describeOperation(op: OperationInProgress, path: string): string {
  const inTree = (args: string[]) => shellCommand(["git", "-C", path, ...args.slice(1)]);
  const what = `${operationPhrase(op)} is in progress; `;
  return op.continueArgs === null
    ? `${what}end it with ${inTree(op.abortArgs)}`
    : `${what}continue it with ${inTree(op.continueArgs)}, or abort it with ${inTree(op.abortArgs)}`;
}

/** "a rebase of topic", "an am": the operation as a sentence names it. */
export function operationPhrase(op: OperationInProgress): string {
  return `${operationWithArticle(op)}${op.branch ? ` of ${op.branch}` : ""}`;
}

/** "a rebase", "an am": the kind alone, with its article. */
export function operationWithArticle(op: OperationInProgress): string {
  return `${op.kind === "am" ? "an" : "a"} ${op.kind}`;
}
