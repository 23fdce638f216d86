import { basename, dirname, isAbsolute, join, resolve } from "node:path";

/** Where berth keeps its files (spec section 2). Pure path arithmetic, no I/O. */

export function sharedStateDir(commonDir: string): string {
  return join(commonDir, "berth");
}

/** The git admin dir of a linked worktree: `<common>/worktrees/<admin-key>`. */
export function adminDirFor(commonDir: string, adminKey: string): string {
  return join(commonDir, "worktrees", adminKey);
}

/** Per-berth state lives in git's admin dir for that worktree, so it dies with the checkout. */
export function perBerthDir(adminDir: string): string {
  return join(adminDir, "berth");
}

export function readyMarkerPath(adminDir: string): string {
  return join(perBerthDir(adminDir), "ready");
}

const DEFAULT_ROOT_SUFFIX = ".worktrees";

/** `[worktree].root`: "" = sibling folder "<repo>.worktrees"; relative = from the repo root. */
export function worktreeRootFor(mainPath: string, configuredRoot: string): string {
  if (configuredRoot === "")
    return join(dirname(mainPath), `${basename(mainPath)}${DEFAULT_ROOT_SUFFIX}`);
  return isAbsolute(configuredRoot) ? configuredRoot : resolve(mainPath, configuredRoot);
}

/** The main checkout a folder named like the default root belongs to (`<repo>.worktrees` → `<repo>`), or null. */
export function mainPathBesideDefaultRoot(folder: string): string | null {
  if (!folder.endsWith(DEFAULT_ROOT_SUFFIX) || basename(folder) === DEFAULT_ROOT_SUFFIX)
    return null;
  return folder.slice(0, -DEFAULT_ROOT_SUFFIX.length);
}
