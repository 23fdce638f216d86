import { runGit } from "./run.js";

/** Gitlink mode: the index entry of a submodule or an embedded repository. */
const GITLINK = "160000";

/** The paths in a checkout's index that are gitlinks (submodules, embedded repositories). */
export async function gitlinkPaths(checkoutPath: string): Promise<string[]> {
  const { stdout } = await runGit(["ls-files", "--stage", "-z"], { cwd: checkoutPath });
  const paths: string[] = [];
  for (const record of stdout.split("\0")) {
    // "<mode> <oid> <stage>\t<path>"
    if (!record.startsWith(`${GITLINK} `)) continue;
    const tab = record.indexOf("\t");
    if (tab !== -1) paths.push(record.slice(tab + 1));
  }
  return paths;
}

/**
 * How many commits a repository holds that none of its remote-tracking refs
 * reach: on its branches, tags, stash or HEAD, in it only (as far as it
 * knows). A repository with no remote counts every commit it has.
 */
export async function commitsNoRemoteHas(gitDir: string): Promise<number> {
  const { stdout } = await runGit(
    // A work tree of its own: the submodule's recorded one may be a folder deleted by hand.
    [
      "--git-dir",
      gitDir,
      "--work-tree",
      gitDir,
      "rev-list",
      "--count",
      "--all",
      "--not",
      "--remotes",
    ],
    { cwd: gitDir },
  );
  return Number.parseInt(stdout.trim(), 10) || 0;
}
