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
 * `message` names what the commit was, as git would have. It fast-forwards
 * when it can; `noFastForward` always makes a merge commit, the checked-out
 * branch as its first parent.
 */
export async function mergeCommit(
  cwd: string,
  commit: string,
  message: string,
  options: { noFastForward?: boolean } = {},
): Promise<MergeAttempt> {
  // Always one or the other: a user's merge.ff (only, or false) must not decide what berth does.
  const ff = options.noFastForward ? ["--no-ff"] : ["--ff"];
  const result = await runGit(
    ["merge", "--no-edit", ...ff, "-m", message, "--end-of-options", commit],
    {
      cwd,
      okCodes: [1, 2, 128],
      // A merge commit needs no editor; a hook asking for one must not hang berth.
      env: { GIT_EDITOR: "true" },
    },
  );
  return {
    merged: result.exitCode === 0,
    output: `${result.stdout}${result.stderr}`.trim(),
  };
}

/** What merging two commits would leave: its tree, and whether git met a conflict. */
export interface MergedTree {
  tree: string;
  conflicted: boolean;
}

/**
 * The tree merging `theirs` into `ours` would leave in the checkout, conflicted
 * files as git would write them (`git merge-tree --write-tree`, git 2.38+, the
 * same merge machinery as `git merge`). No checkout, index or ref is touched;
 * git only adds unreachable objects. Refuses unrelated histories, as `git
 * merge` does. A conflicted tree can equal a side's own tree (a binary or
 * merge-driver conflict keeps `ours`), so it proves nothing about the merge.
 */
export async function mergedTree(cwd: string, ours: string, theirs: string): Promise<MergedTree> {
  const args = [
    // A file added in a folder the other side renamed follows the rename: git's
    // default writes that same tree but calls it a conflict ("file location").
    "-c",
    "merge.directoryRenames=true",
    "merge-tree",
    "--write-tree",
    "--no-messages",
    "--end-of-options",
    ours,
    theirs,
  ];
  // Exit 1 is a merge with conflicts: its tree still comes first.
  const { stdout, exitCode } = await runGit(args, { cwd, okCodes: [1] });
  return { tree: stdout.split("\n")[0]?.trim() ?? "", conflicted: exitCode === 1 };
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
