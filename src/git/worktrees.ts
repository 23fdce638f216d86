import { existsSync } from "node:fs";
import { parseWorktreeList, type WorktreeEntry } from "./parse.js";
import { type GitRunner, runGit } from "./run.js";
import { readWorktreeStatus } from "./status.js";

export async function listWorktrees(
  cwd: string,
  run: GitRunner = runGit,
): Promise<WorktreeEntry[]> {
  const { stdout } = await run(["worktree", "list", "--porcelain", "-z"], { cwd });
  return parseWorktreeList(stdout);
}

/** `git worktree add -b <branch> <path> <commit>`: a new branch at an exact commit. */
export async function addWorktree(
  cwd: string,
  path: string,
  branch: string,
  commit: string,
): Promise<void> {
  await runGit(["worktree", "add", "--no-track", "-b", branch, path, commit], { cwd });
}

/** `git worktree add <path> <branch>`: a checkout of a branch that exists (a parked berth resumed). */
export async function addWorktreeOnBranch(
  cwd: string,
  path: string,
  branch: string,
): Promise<void> {
  await runGit(["worktree", "add", path, branch], { cwd });
}

/**
 * Removes a registration and its checkout through git. `force` discards
 * uncommitted changes (callers decide that, never this function). It is
 * passed once only: git needs it twice to remove a locked worktree, which
 * berth never does.
 *
 * Without `force` the checkout is removed only if it is clean, and this
 * function makes that check itself, right before the removal: `git status`
 * counting untracked files and changes inside submodules, which is the check
 * `git worktree remove` makes. git also refuses every checkout that contains
 * a populated submodule, clean or not ("working trees containing submodules
 * cannot be moved or removed"), so a berth with a submodule could never be
 * torn down; once the check found nothing, `--force` (which skips only git's
 * own check) removes it. A dirty checkout is refused here, never forced. A
 * submodule's repository lives in the checkout's admin dir (`modules/`) and
 * goes with it; what is checked is what `git status` sees: its checked-out
 * commit, files and untracked files. A folder that is already gone has
 * nothing to check: git drops the registration.
 */
export async function removeWorktree(cwd: string, path: string, force: boolean): Promise<void> {
  let discard = force;
  if (!force && existsSync(path)) {
    const status = await readWorktreeStatus(path);
    if (status.changedFiles > 0) {
      const shown = status.paths.slice(0, 5).join(", ");
      throw new Error(
        `${path} has ${status.changedFiles} uncommitted change(s) (${shown}${status.paths.length > 5 ? ", ..." : ""}); ` +
          "it was not removed",
      );
    }
    discard = true;
  }
  const args = ["worktree", "remove", ...(discard ? ["--force"] : []), path];
  await runGit(args, { cwd });
}
