import { readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RepoLocation } from "../../git/repo.js";
import { shellCommand } from "../../text.js";
import { rebranching } from "../lifecycle/reattach.js";
import type { StatusRow } from "./status.js";
import type { WorktreeFacts } from "./survey.js";

/**
 * The rows status cannot show as they should, each with what is wrong and
 * the command that mends it: broken berths, unreadable checkouts, and folders gone.
 */

/**
 * A hint per broken berth (status's `broken`: berth made it, but it is no
 * longer on the branch berth made for it): which of the two it is, and the
 * command that puts it back. Its branch deleted under it leaves HEAD unborn,
 * and the checkout's HEAD log names where the branch was (park and accept
 * refuse it with the same command); another branch checked out goes back
 * with a switch, or makes the berth branch at HEAD when that is gone too.
 */
export function brokenHints(
  rows: readonly StatusRow[],
  worktrees: readonly WorktreeFacts[],
  branches: ReadonlyMap<string, string>,
): string[] {
  return rowsIn("broken", rows, worktrees).flatMap(([row, w]) => {
    const mend = brokenMend(w, branches);
    return mend === null ? [] : [`${row.id}: ${mend}`];
  });
}

/** A berth whose checkout no longer matches what berth made: on another branch, or an unborn one. */
export function isBrokenBerth(w: WorktreeFacts, branches: ReadonlyMap<string, string>): boolean {
  if (w.marker === null) return false;
  if (w.entry.branch === null) return true;
  return w.entry.branch !== w.marker.branch || !branches.has(w.entry.branch);
}

/** Which way a broken berth is broken, and the command that mends it (null: not a berth). */
export function brokenMend(w: WorktreeFacts, branches: ReadonlyMap<string, string>): string | null {
  if (w.marker === null) return null;
  const own = w.marker.branch;
  const git = (...args: string[]) => shellCommand(["git", "-C", w.entry.path, ...args]);
  if (w.entry.branch === own || w.entry.branch === null) {
    const back = rebranching(w.entry.path, w.adminDir, own);
    return back === null
      ? `its branch ${own} was deleted under it, and its HEAD log names no commit to make it again at`
      : `${back.detail}: ${back.command}`;
  }
  if (branches.has(own)) {
    return `has ${w.entry.branch} checked out, not its berth branch ${own}; go back with ${git("switch", own)}`;
  }
  return `has ${w.entry.branch} checked out, and its berth branch ${own} no longer exists; make it at HEAD with ${git("switch", "-c", own)}`;
}

/**
 * A hint per prunable row: git lists a checkout whose folder is gone. A
 * folder moved by hand reads the same from here, and pruning it would
 * forget the checkout and destroy its resources while it lives on elsewhere,
 * so the hint names the repair before the prune.
 */
export function prunableHints(
  rows: readonly StatusRow[],
  worktrees: readonly WorktreeFacts[],
): string[] {
  const prune = shellCommand(["berth", "worktree", "prune"]);
  return rowsIn("prunable", rows, worktrees).map(
    ([row, w]) =>
      `${row.id}: its folder ${w.entry.path} is gone; if it was moved, git worktree repair run in its new folder records where it is; if it was removed, ${prune} forgets it, its resources with it`,
  );
}

/** The rows in `state`, each with its worktree's facts (a map only when there is such a row). */
function rowsIn(
  state: StatusRow["state"],
  rows: readonly StatusRow[],
  worktrees: readonly WorktreeFacts[],
): [StatusRow, WorktreeFacts][] {
  const wanted = rows.filter((row) => row.state === state);
  if (wanted.length === 0) return [];
  const byPath = new Map(worktrees.map((w) => [w.entry.path, w]));
  return wanted.flatMap((row) => {
    const w = byPath.get(row.path);
    return w === undefined ? [] : [[row, w] as [StatusRow, WorktreeFacts]];
  });
}

/** The desk's reason for a broken row: which of the two it is (the status hint gives the command). */
export function brokenReason(row: Pick<StatusRow, "branch" | "head">): string {
  return row.head === null
    ? `its branch ${row.branch ?? "(unknown)"} was deleted under it`
    : `has ${row.branch ?? "another branch"} checked out, not the branch berth made for it`;
}

/**
 * A hint per unreadable checkout. The status lanes keep no stderr, and a
 * second `git status` would break the budget's one per worktree (spec section
 * 10), so the hint reads the one cause berth can mend without git: a `.git`
 * file that is missing, garbled, or leads elsewhere than the checkout's admin
 * folder, which `git worktree repair` run in the repository points back
 * (given the checkout's path instead, git looks for the repository through
 * that broken file, and exits 1 as it mends it). Any other cause is git's to
 * tell: the hint names the `git status` that says it.
 */
export function unreadableHints(
  rows: readonly StatusRow[],
  worktrees: readonly WorktreeFacts[],
  location: RepoLocation,
): string[] {
  const repair = shellCommand([
    "git",
    "-C",
    location.mainPath ?? location.commonDir,
    "worktree",
    "repair",
  ]);
  const hints: string[] = [];
  for (const [row, w] of rowsIn("unreadable", rows, worktrees)) {
    const problem = w.adminDir === null ? null : gitFileProblem(w.entry.path, w.adminDir);
    hints.push(
      problem === null
        ? `${row.id}: git cannot read its checkout; ${shellCommand(["git", "-C", w.entry.path, "status"])} says why`
        : `${row.id}: git cannot read its checkout: ${problem}; ${repair} points it back`,
    );
  }
  return hints;
}

/** What is wrong with a linked checkout's `.git` file, or null when it leads to `adminDir` (or is a folder). */
function gitFileProblem(path: string, adminDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(path, ".git"), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "its .git file is missing" : null;
  }
  const named = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  if (named === undefined) return "its .git file names no git folder";
  const dir = resolve(path, named);
  return sameFolder(dir, adminDir)
    ? null
    : `its .git file leads to ${dir}, not to its admin folder ${adminDir}`;
}

function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
