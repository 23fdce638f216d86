import { runGit } from "./run.js";

/** What a checkout has checked out. */
export interface HeadState {
  /** null on an unborn branch. */
  commit: string | null;
  /** The tree of that commit; null on an unborn branch. */
  tree: string | null;
  /** Short branch name; null when HEAD is detached. */
  branch: string | null;
}

/** HEAD's commit, its tree and its branch: two git processes, run side by side. */
export async function readHead(cwd: string): Promise<HeadState> {
  const [symbolic, revs] = await Promise.all([
    runGit(["symbolic-ref", "-q", "--short", "HEAD"], { cwd, okCodes: [1] }),
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
    branch: symbolic.exitCode === 0 ? symbolic.stdout.trim() : null,
  };
}

/** The branch HEAD names in the repository at `cwd` (a bare repository's default branch), or null. */
export async function readHeadBranch(cwd: string): Promise<string | null> {
  const result = await runGit(["symbolic-ref", "-q", "--short", "HEAD"], { cwd, okCodes: [1] });
  return result.exitCode === 0 ? result.stdout.trim() || null : null;
}
