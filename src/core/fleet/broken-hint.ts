import { shellCommand } from "../../text.js";
import { rebranching } from "../lifecycle/reattach.js";
import type { StatusRow } from "./status.js";
import type { WorktreeFacts } from "./survey.js";

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
  const hints: string[] = [];
  for (const w of worktrees) {
    const row = rows.find((r) => r.path === w.entry.path);
    if (row?.state !== "broken" || w.marker === null) continue;
    const own = w.marker.branch;
    const git = (...args: string[]) => shellCommand(["git", "-C", w.entry.path, ...args]);
    if (w.entry.branch === own || w.entry.branch === null) {
      const back = rebranching(w.entry.path, w.adminDir, own);
      hints.push(
        back === null
          ? `${row.id}: its branch ${own} was deleted under it, and its HEAD log names no commit to make it again at`
          : `${row.id}: ${back.detail}: ${back.command}`,
      );
    } else if (branches.has(own)) {
      hints.push(
        `${row.id}: has ${w.entry.branch} checked out, not its berth branch ${own}; go back with ${git("switch", own)}`,
      );
    } else {
      hints.push(
        `${row.id}: has ${w.entry.branch} checked out, and its berth branch ${own} no longer exists; make it at HEAD with ${git("switch", "-c", own)}`,
      );
    }
  }
  return hints;
}

/** The desk's reason for a broken row: which of the two it is (the status hint gives the command). */
export function brokenReason(row: Pick<StatusRow, "branch" | "head">): string {
  return row.head === null
    ? `its branch ${row.branch ?? "(unknown)"} was deleted under it`
    : `has ${row.branch ?? "another branch"} checked out, not the branch berth made for it`;
}
