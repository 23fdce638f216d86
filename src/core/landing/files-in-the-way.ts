import { addedAndDeletedPaths } from "../../git/history.js";
import { findPathsInTheWay } from "../../io/in-the-way.js";

/**
 * THE check for files that bringing a checkout's files from one tree to
 * another would overwrite, shared by accept (the main checkout following the
 * trunk) and update (a berth taking in a merge). git protects untracked files
 * but counts ignored ones as expendable (a force-added `coverage/lcov.info`
 * replaces the checkout's own ignored copy); berth never loses a file. Steps:
 * 1. the paths the move adds and deletes (`git diff --name-status`, no renames);
 * 2. of the added ones, those with a file on disk at the path or at a parent
 *    folder that is not itself leaving (src/io/in-the-way.ts).
 * Reads only. Paths are relative to `path`, sorted.
 */
export async function untrackedFilesInTheWay(
  path: string,
  from: string,
  to: string,
): Promise<string[]> {
  const { added, deleted } = await addedAndDeletedPaths(path, from, to);
  return findPathsInTheWay(path, added, deleted);
}
