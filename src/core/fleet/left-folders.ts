import { join } from "node:path";
import { folderNames, realPathOr } from "../../io/fs.js";
import { worktreeRootFor } from "../../io/paths.js";
import { isBerthId } from "../berth/identity.js";
import type { Repository } from "../repo/repository.js";

/**
 * Folders in berth's worktree root, named as berths are, that git does not
 * list as checkouts: what a removal git could finish only half-way leaves
 * (the teardown says so at the time; see lifecycle/teardown.ts). Nothing
 * else in the fleet's reading would show them, and berth never deletes them.
 */
export function leftFolderHints(repo: Repository, registered: readonly string[]): string[] {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const known = new Set(registered);
  const left = folderNames(root)
    .filter(isBerthId)
    .map((name) => join(root, name))
    .filter((path) => !known.has(path));
  if (left.length === 0) return [];
  // git may list a checkout by another spelling of its path (a symlinked root).
  const knownReal = new Set(registered.map(realPathOr));
  return left
    .filter((path) => !knownReal.has(realPathOr(path)))
    .map(
      (path) =>
        `${path} is left from a berth: git no longer knows it as a checkout (a removal failed half-way); look at what is in it, then delete the folder by hand`,
    );
}
