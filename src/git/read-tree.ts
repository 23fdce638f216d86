import { gitOutput, runGit } from "./run.js";

/**
 * Moving a checkout's index and files from one commit to another the way
 * `git checkout` does, for a checkout whose branch ref has already moved
 * (accept fast-forwards the trunk under the main checkout): a two-tree
 * `git read-tree -m -u`, which keeps local untracked files and refuses to
 * overwrite one that is in the way.
 */

/** The absolute path of the index file of the checkout at `cwd`. */
export function indexFileOf(cwd: string): Promise<string> {
  return gitOutput(["rev-parse", "--path-format=absolute", "--git-path", "index"], { cwd });
}

/**
 * `git update-index -q --refresh`: brings the index's file stat data up to
 * date, so a file that was touched but not changed does not block a
 * read-tree. `indexFile` refreshes a copy instead of the checkout's index.
 */
export async function refreshIndex(cwd: string, indexFile?: string): Promise<void> {
  await runGit(["update-index", "-q", "--refresh"], {
    cwd,
    env: indexFile === undefined ? undefined : { GIT_INDEX_FILE: indexFile },
    okCodes: [1],
  });
}

export interface TreeUpdateAttempt {
  ok: boolean;
  /** git's own words when it refused. */
  output: string;
}

/**
 * `git read-tree -m -u [-n] <from> <to>`. With `dryRun` nothing is written:
 * git only says whether it would refuse (a local change or an untracked
 * file in the way). `indexFile` works on a copy of the index.
 */
export async function twoTreeUpdate(
  cwd: string,
  from: string,
  to: string,
  options: { dryRun: boolean; indexFile?: string | undefined },
): Promise<TreeUpdateAttempt> {
  const args = ["read-tree", "-m", "-u", ...(options.dryRun ? ["-n"] : []), from, to];
  const result = await runGit(args, {
    cwd,
    env: options.indexFile === undefined ? undefined : { GIT_INDEX_FILE: options.indexFile },
    okCodes: [1, 128],
  });
  return { ok: result.exitCode === 0, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Whether the index of the checkout at `cwd` holds exactly the tree of `treeish`. */
export async function indexMatches(cwd: string, treeish: string): Promise<boolean> {
  const result = await runGit(["diff-index", "--cached", "--quiet", treeish, "--"], {
    cwd,
    okCodes: [1],
  });
  return result.exitCode === 0;
}
