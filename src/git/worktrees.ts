import { parseWorktreeList, type WorktreeEntry } from "./parse.js";
import { runGit } from "./run.js";

export async function listWorktrees(cwd: string): Promise<WorktreeEntry[]> {
  const { stdout } = await runGit(["worktree", "list", "--porcelain", "-z"], { cwd });
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
 */
export async function removeWorktree(cwd: string, path: string, force: boolean): Promise<void> {
  const args = ["worktree", "remove", ...(force ? ["--force"] : []), path];
  await runGit(args, { cwd });
}
