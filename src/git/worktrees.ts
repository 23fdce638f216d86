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

/** git's words (LC_ALL=C) when a checkout holds a populated submodule, clean or not. */
const HAS_SUBMODULES = "working trees containing submodules cannot be moved or removed";
/** git's words when its own last check finds a change. */
const NOT_CLEAN = "contains modified or untracked files";

/**
 * Removes a registration and its checkout through git. `force` discards
 * uncommitted changes (callers decide that, never this function). It is
 * passed once only: git needs it twice to remove a locked worktree, which
 * berth never does.
 *
 * Without `force` the checkout is removed only if it is clean. berth checks
 * first (`git status` counting untracked files and changes inside
 * submodules) for a refusal that names the files, then removes without
 * `--force`, so git checks again in the same process that deletes: a file an
 * agent writes between berth's check and the removal makes git refuse
 * instead of going with the checkout. git's own check is `git status`, told
 * here to count untracked files whatever the user's config says.
 *
 * git refuses every checkout that contains a populated submodule, clean or
 * not, so only then does the removal use `--force` (which skips git's own
 * check), right after one more check of berth's. A submodule's repository
 * lives in the checkout's admin dir (`modules/`) and goes with it. A folder
 * that is already gone has nothing to check: git drops the registration.
 */
export async function removeWorktree(cwd: string, path: string, force: boolean): Promise<void> {
  if (force || !existsSync(path)) {
    await runGit(["worktree", "remove", ...(force ? ["--force"] : []), path], { cwd });
    return;
  }
  await refuseUnclean(path);
  try {
    await runGit(["-c", "status.showUntrackedFiles=normal", "worktree", "remove", path], { cwd });
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes(NOT_CLEAN)) {
      throw new Error(
        `${path} changed while it was being removed (git found a modified or untracked file); it was not removed`,
      );
    }
    if (!message.includes(HAS_SUBMODULES)) throw error;
    await refuseUnclean(path);
    await runGit(["worktree", "remove", "--force", path], { cwd });
  }
}

async function refuseUnclean(path: string): Promise<void> {
  const status = await readWorktreeStatus(path);
  if (status.changedFiles === 0) return;
  const shown = status.paths.slice(0, 5).join(", ");
  throw new Error(
    `${path} has ${status.changedFiles} uncommitted change(s) (${shown}${status.paths.length > 5 ? ", ..." : ""}); ` +
      "it was not removed",
  );
}
