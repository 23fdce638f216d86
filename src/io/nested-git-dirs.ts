import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The repositories nested in a linked worktree that go with it when it is
 * removed: its submodules' repositories, which git keeps in the checkout's
 * admin dir (`<admin>/modules/<name>`, theirs nested in their own
 * `modules/`), and repositories embedded in the tree itself (a `.git`
 * folder at a gitlink's path: no `.gitmodules`, no copy anywhere).
 */

/** Every git dir under `<gitDir>/modules`, at any depth, each with its name there. */
export function submoduleGitDirs(gitDir: string): { name: string; gitDir: string }[] {
  const found: { name: string; gitDir: string }[] = [];
  const walk = (dir: string, prefix: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (!isFolder(path)) continue;
      const label = prefix === "" ? name : `${prefix}/${name}`;
      // A submodule named a/b is filed as modules/a/b: a folder that is no git dir is a step down.
      if (isGitDir(path)) {
        found.push({ name: label, gitDir: path });
        walk(join(path, "modules"), label);
      } else {
        walk(path, label);
      }
    }
  };
  walk(join(gitDir, "modules"), "");
  return found;
}

/** The git dir of a repository embedded at `checkoutPath/path` (a `.git` folder), or null. */
export function embeddedGitDir(checkoutPath: string, path: string): string | null {
  const gitDir = join(checkoutPath, path, ".git");
  return isFolder(gitDir) && isGitDir(gitDir) ? gitDir : null;
}

function isGitDir(path: string): boolean {
  return existsSync(join(path, "HEAD")) && isFolder(join(path, "objects"));
}

function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
