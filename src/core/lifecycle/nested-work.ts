import { commitsNoRemoteHas, gitlinkPaths } from "../../git/nested-repositories.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { embeddedGitDir, submoduleGitDirs } from "../../io/nested-git-dirs.js";
import { shellCommand } from "../../text.js";

/**
 * Commits in a checkout's nested repositories that exist nowhere else: a
 * submodule's unpushed branch, an embedded repository's whole history.
 * Removing the checkout deletes those repositories (git keeps a linked
 * worktree's submodules in its admin dir), and a recovery ref in this
 * repository cannot hold another repository's commits. So a teardown that
 * must not lose work refuses while any are there, and `drop --force` names
 * them among what it discards (safety invariant 1).
 */

export interface NestedWork {
  /** The submodule's name, or the embedded repository's path in the checkout. */
  repository: string;
  gitDir: string;
  /** null: git could not read it, so nothing says its commits are elsewhere. */
  commits: number | null;
  embedded: boolean;
}

export async function nestedWorkAtRisk(
  checkoutPath: string,
  adminDir: string,
): Promise<NestedWork[]> {
  // A checkout folder deleted by hand leaves its submodules' repositories in the admin dir.
  const links = pathExistsOrBroken(checkoutPath)
    ? await gitlinkPaths(checkoutPath).catch(() => [])
    : [];
  const embedded = links.flatMap((path) => {
    const gitDir = embeddedGitDir(checkoutPath, path);
    return gitDir === null ? [] : [{ repository: path, gitDir, embedded: true }];
  });
  const submodules = [adminDir, ...embedded.map((e) => e.gitDir)].flatMap((dir) =>
    submoduleGitDirs(dir).map((s) => ({ repository: s.name, gitDir: s.gitDir, embedded: false })),
  );
  const counted = await Promise.all(
    [...submodules, ...embedded].map(async (r) => ({
      ...r,
      commits: await commitsNoRemoteHas(r.gitDir).catch(() => null),
    })),
  );
  return counted.filter((r) => r.commits !== 0);
}

/** "submodule lib holds 2 commit(s) no remote of it has (…)", for each, joined. */
export function describeNestedWork(work: readonly NestedWork[]): string {
  return work
    .map((w) => {
      const holds = w.commits === null ? "cannot be read by git" : `holds ${w.commits} commit(s)`;
      return w.embedded
        ? `the repository embedded at ${w.repository} ${holds} found in no other repository (move it out of the checkout first)`
        : `submodule ${w.repository} ${holds} no remote of it has (push them first; ${shellCommand(["git", "--git-dir", w.gitDir, "--work-tree", w.gitDir, "log", "--all", "--not", "--remotes"])} lists them)`;
    })
    .join("; ");
}
