import { shortBranchName } from "./parse.js";
import { runGit } from "./run.js";

/** What a checkout has checked out. */
export interface HeadState {
  /** null on an unborn branch. */
  commit: string | null;
  /** The tree of that commit; null on an unborn branch. */
  tree: string | null;
  /** The branch's name (refs/heads/ stripped); null when HEAD is detached. */
  branch: string | null;
}

/** HEAD's commit, its tree and its branch: two git processes, run side by side. */
export async function readHead(cwd: string): Promise<HeadState> {
  const [symbolic, revs] = await Promise.all([
    runGit(["symbolic-ref", "-q", "HEAD"], { cwd, okCodes: [1] }),
    // Fails (128) on an unborn branch: there is no commit and no tree yet.
    runGit(["rev-parse", "HEAD^{commit}", "HEAD^{tree}"], {
      cwd,
      okCodes: [128],
    }),
  ]);
  const [commit = "", tree = ""] = revs.exitCode === 0 ? revs.stdout.trim().split("\n") : [];
  return {
    commit: commit || null,
    tree: tree || null,
    branch: symbolic.exitCode === 0 ? branchName(symbolic.stdout) : null,
  };
}

/**
 * The name in the full ref HEAD points to. Not `symbolic-ref --short`: while a
 * tag shares the branch's name, git shortens it to "heads/<name>", and every
 * comparison with the trunk's name would then miss.
 */
function branchName(stdout: string): string | null {
  const ref = stdout.trim();
  return ref === "" ? null : shortBranchName(ref);
}

/** The branch HEAD names in the repository at `cwd` (a bare repository's default branch), or null. */
export async function readHeadBranch(cwd: string): Promise<string | null> {
  const result = await runGit(["symbolic-ref", "-q", "HEAD"], { cwd, okCodes: [1] });
  return result.exitCode === 0 ? branchName(result.stdout) : null;
}
