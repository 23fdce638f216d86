import { isAbsolute, join, relative, sep } from "node:path";
import { UserError } from "../../errors.js";
import { filterIgnored } from "../../git/ignored.js";
import { nonFolderOnPath } from "../../io/fs.js";
import { worktreeRootFor } from "../../io/paths.js";
import type { Repository } from "../repo/repository.js";

/**
 * Where berths are made ([worktree].root), checked by `berth start` before
 * it makes one there: a file in the way is refused, and a root inside the
 * main checkout that git does not ignore is said.
 */

/** A file where the root (or a folder above it) would be: git's own refusal names only a `.git` path. */
export function refuseRootUnderAFile(repo: Repository): void {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const file = nonFolderOnPath(root);
  if (file === null) return;
  const where =
    file === root ? `The worktree root ${root} is` : `The worktree root ${root} is under ${file},`;
  throw new UserError(
    "precondition_failed",
    `${where} a file, not a folder: move it aside, or set [worktree].root in berth.toml to a folder.`,
  );
}

/**
 * The hint for a root inside the main checkout that git does not ignore (a
 * berth `id` there is the probe), or null: every berth then reads as an
 * untracked folder of the main checkout, and `git add -A` there would add it
 * as an embedded repository.
 */
export async function unignoredRootHint(repo: Repository, id: string): Promise<string | null> {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const inMain = relative(repo.mainPath, root);
  if (inMain === ".." || inMain.startsWith(`..${sep}`) || isAbsolute(inMain)) return null;
  if ((await filterIgnored(repo.mainPath, [join(inMain, id)])).length > 0) return null;
  const shows =
    "and git does not ignore them: the main checkout shows each as untracked, and git add -A there would add it as an embedded repository";
  if (inMain === "") {
    return `Berths are made in the main checkout itself (${root}), ${shows}. Set [worktree].root in berth.toml to a folder outside it, or ignore each berth's folder.`;
  }
  return `Berths are made in ${inMain}, inside the main checkout, ${shows}. Add /${escapeForGitignore(inMain)}/ to .gitignore (or .git/info/exclude).`;
}

/** A path as a gitignore pattern matches it literally: its wildcards and backslashes escaped. */
function escapeForGitignore(path: string): string {
  return path.replace(/[*?[\\]/g, "\\$&").replace(/ $/, "\\ ");
}
