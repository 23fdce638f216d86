import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * THE one place that tells whether a checkout is in the middle of a git
 * operation: a merge, rebase, `git am`, cherry-pick or revert that stopped
 * (on a conflict, an `edit`, or `--no-commit`) and waits to be continued or
 * aborted. It reads the checkout's own git dir (a linked worktree's admin
 * dir: each worktree has its own), so it costs no process. Steps, in the
 * order git's own `status` checks them:
 * 1. `rebase-apply/` (with `applying` inside: `git am`) or `rebase-merge/`;
 * 2. `MERGE_HEAD`;
 * 3. `CHERRY_PICK_HEAD`, then `REVERT_HEAD`;
 * 4. `sequencer/todo` (a cherry-pick or revert of several commits that
 *    stopped after one was committed), named by its next instruction;
 * 5. `BISECT_START`: a bisect, which has no `--continue` (it is ended, by
 *    `git bisect reset`), and whose HEAD is detached at a midpoint meanwhile.
 * A rebase comes first because its stopped steps may leave MERGE_HEAD or
 * CHERRY_PICK_HEAD beside it, and it is the rebase that must be continued.
 */

export type OperationKind = "merge" | "rebase" | "am" | "cherry-pick" | "revert" | "bisect";

export interface OperationInProgress {
  kind: OperationKind;
  /** What in the git dir says so (`MERGE_HEAD`, `rebase-merge/`, ...). */
  evidence: string;
  /** `git <kind> --continue` as arguments; null for a bisect, which is only ended. */
  continueArgs: string[] | null;
  /** `git <kind> --abort` as arguments (`git bisect reset` for a bisect). */
  abortArgs: string[];
  /** The branch a rebase is rewriting (its HEAD is detached meanwhile), or null. */
  branch: string | null;
}

/** The operation in progress in the checkout whose git dir is `gitDir`, or null. */
export function readOperationInProgress(gitDir: string): OperationInProgress | null {
  // One listing of the git dir instead of a failed lstat per file: a survey asks for every checkout.
  const entries = listDir(gitDir);
  if (entries === null) return null;
  const at = (name: string) => join(gitDir, name);
  const found = (kind: OperationKind, evidence: string): OperationInProgress => ({
    kind,
    evidence,
    continueArgs: ["git", kind, "--continue"],
    abortArgs: ["git", kind, "--abort"],
    branch: kind === "rebase" ? rebasedBranch(at(evidence.replace(/\/$/, ""))) : null,
  });
  if (entries.get("rebase-apply") === true) {
    return exists(at("rebase-apply/applying"))
      ? found("am", "rebase-apply/applying")
      : found("rebase", "rebase-apply/");
  }
  if (entries.get("rebase-merge") === true) return found("rebase", "rebase-merge/");
  if (entries.has("MERGE_HEAD")) return found("merge", "MERGE_HEAD");
  if (entries.has("CHERRY_PICK_HEAD")) return found("cherry-pick", "CHERRY_PICK_HEAD");
  if (entries.has("REVERT_HEAD")) return found("revert", "REVERT_HEAD");
  const next = entries.has("sequencer") ? nextSequencerInstruction(at("sequencer/todo")) : null;
  if (next !== null) {
    return found(next === "revert" ? "revert" : "cherry-pick", "sequencer/todo");
  }
  if (entries.has("BISECT_START")) {
    return {
      kind: "bisect",
      evidence: "BISECT_START",
      continueArgs: null,
      abortArgs: ["git", "bisect", "reset"],
      branch: null,
    };
  }
  return null;
}

/** A folder's entries, each with whether it is a directory (not following links); null if unreadable. */
function listDir(path: string): Map<string, boolean> | null {
  try {
    return new Map(
      readdirSync(path, { withFileTypes: true }).map((e) => [e.name, e.isDirectory()]),
    );
  } catch {
    return null;
  }
}

/** `refs/heads/x` in a rebase's `head-name` file, as `x`; null for a detached rebase. */
function rebasedBranch(stateDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(stateDir, "head-name"), "utf8").trim();
  } catch {
    return null;
  }
  return text.startsWith("refs/heads/") ? text.slice("refs/heads/".length) : null;
}

/** The first instruction word of a sequencer todo list, or null when there is none. */
function nextSequencerInstruction(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const word = line.trim().split(/\s+/)[0] ?? "";
    if (word !== "" && !word.startsWith("#")) return word;
  }
  return null;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
