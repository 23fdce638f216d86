import { parseNulList } from "./parse.js";
import { runGit } from "./run.js";

/** How `git merge` ended. */
export interface MergeAttempt {
  /** The merge (or fast-forward, or "already up to date") completed. */
  merged: boolean;
  /** git's own words, for a failure message. */
  output: string;
}

/**
 * Merges an exact commit into the checked-out branch. The commit id, not a ref
 * name, is merged, so a ref that moves meanwhile cannot change what lands;
 * `message` names what the commit was, as git would have.
 */
export async function mergeCommit(
  cwd: string,
  commit: string,
  message: string,
): Promise<MergeAttempt> {
  const result = await runGit(["merge", "--no-edit", "-m", message, "--end-of-options", commit], {
    cwd,
    okCodes: [1, 2, 128],
    // A merge commit needs no editor; a hook asking for one must not hang berth.
    env: { GIT_EDITOR: "true" },
  });
  return {
    merged: result.exitCode === 0,
    output: `${result.stdout}${result.stderr}`.trim(),
  };
}

/** Paths left unmerged by a conflicted merge. */
export async function listConflictedPaths(cwd: string): Promise<string[]> {
  const { stdout } = await runGit(["diff", "--name-only", "--diff-filter=U", "-z"], { cwd });
  return parseNulList(stdout);
}

/** Whether a merge is in progress (MERGE_HEAD exists). */
export async function isMerging(cwd: string): Promise<boolean> {
  const result = await runGit(["rev-parse", "-q", "--verify", "MERGE_HEAD"], {
    cwd,
    okCodes: [1],
  });
  return result.exitCode === 0;
}

/** `git merge --abort`: back to the commit and tracked files from before the merge. */
export async function abortMerge(cwd: string): Promise<void> {
  await runGit(["merge", "--abort"], { cwd });
}
