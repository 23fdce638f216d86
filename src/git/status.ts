import { parseStatusPorcelainV2, type StatusSummary } from "./parse.js";
import { runGit } from "./run.js";

/**
 * One worktree's changes. Read-only: with GIT_OPTIONAL_LOCKS=0 git neither
 * takes the index lock nor refreshes the index on disk.
 */
export async function readWorktreeStatus(path: string): Promise<StatusSummary> {
  const { stdout } = await runGit(
    ["status", "--porcelain=v2", "-z", "--untracked-files=normal", "--ignore-submodules=dirty"],
    { cwd: path },
  );
  return parseStatusPorcelainV2(stdout);
}
