import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { resolveCommit } from "../../git/refs.js";
import { readNewestReflogCommit } from "../../io/reflog.js";
import { type CommandLine, commandSequence, shellCommand, shortOid } from "../../text.js";

/**
 * How a detached berth gets back on its own branch without leaving a commit
 * behind (park and accept name these commands when they refuse a detached
 * berth). `git switch` away from a detached HEAD leaves the commits only it
 * reaches in that checkout's reflog, which parking, or an accept's teardown,
 * then removes with the checkout. So where HEAD is not on the branch, the
 * commands first put HEAD's commits on a branch: the berth's branch moved up
 * to HEAD (a compare-and-swap on the tip read here), or a branch of their own
 * where the two have diverged.
 */
export async function reattachment(
  path: string,
  head: string,
  own: string,
): Promise<{ detail: string | null; command: CommandLine }> {
  const git = (...args: string[]) => shellCommand(["git", "-C", path, ...args]);
  const ownTip = await resolveCommit(path, `refs/heads/${own}`);
  if (ownTip === null) {
    return {
      detail: `${own} no longer exists: the commands make it at HEAD`,
      command: git("switch", "-c", own),
    };
  }
  if (await isAncestor(path, head, ownTip)) return { detail: null, command: git("switch", own) };
  if (await isAncestor(path, ownTip, head)) {
    return {
      detail: `HEAD is ahead of ${own}: the commands move it up to HEAD first`,
      command: commandSequence(
        git("update-ref", `refs/heads/${own}`, head, ownTip),
        git("switch", own),
      ),
    };
  }
  const keep = `${own}-detached-${shortOid(head)}`;
  return {
    detail: `HEAD and ${own} have diverged: the commands keep HEAD's commits on ${keep} first`,
    command: commandSequence(git("branch", keep, head), git("switch", own)),
  };
}

/**
 * How a checkout whose branch was deleted under it (HEAD unborn) gets its
 * branch back: made again at the commit its HEAD log last names, which is
 * where the deleted branch was. Null when the log names none.
 */
export function rebranching(
  path: string,
  adminDir: string | null,
  branch: string,
): { detail: string; command: CommandLine } | null {
  const last = adminDir === null ? null : readNewestReflogCommit(adminDir);
  if (last === null) return null;
  return {
    detail: `${branch} was deleted under it; its last commit, ${shortOid(last)}, is in the checkout's HEAD log: the command makes ${branch} there again`,
    command: shellCommand(["git", "-C", path, "branch", branch, last]),
  };
}

/**
 * The refusal of a verb (gate, update, await) in berth `id` whose own branch
 * was deleted under it: the way back, then the verb `again`. Null when its
 * HEAD log names no commit to make the branch at.
 */
export function deletedBranchRefusal(
  id: string,
  path: string,
  adminDir: string | null,
  branch: string,
  again: { command: CommandLine; said: string },
): UserError | null {
  const back = rebranching(path, adminDir, branch);
  if (back === null) return null;
  return new UserError("precondition_failed", `${id}: ${back.detail}${again.said}.`, {
    next: commandSequence(back.command, again.command),
  });
}
