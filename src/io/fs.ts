import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** Whether anything (even a dangling symlink) sits at `path`. */
export function pathExistsOrBroken(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * What stops a folder being made at `path`: the nearest of it and its parents
 * that exists and is no folder (a file where the folder would go), or null.
 */
export function nonFolderOnPath(path: string): string | null {
  for (let at = path; ; at = dirname(at)) {
    try {
      return statSync(at).isDirectory() ? null : at;
    } catch {
      // Absent, or under a file (ENOTDIR): look one level up.
    }
    if (dirname(at) === at) return null;
  }
}

/** The folders directly in `dir` (none when it cannot be read), by name. */
export function folderNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? [d.name] : [],
    );
  } catch {
    return [];
  }
}

/** `path` with its symlinks resolved, or itself when it cannot be. */
export function realPathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** What sits at `path`, not following a symlink (nothing: "absent"). */
export function entryKindAt(path: string): "file" | "symlink" | "folder" | "other" | "absent" {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return "absent";
  }
  if (stat.isFile()) return "file";
  if (stat.isSymbolicLink()) return "symlink";
  return stat.isDirectory() ? "folder" : "other";
}

/**
 * What each path under `root` is now, as a stamp that changes with any write
 * to it: size, modification and change times in nanoseconds (null: nothing
 * there). Equal stamps mean the file was not touched in between.
 */
export function fileStamps(root: string, paths: readonly string[]): Map<string, string | null> {
  const stamps = new Map<string, string | null>();
  for (const path of paths) {
    try {
      const stat = lstatSync(join(root, path), { bigint: true });
      stamps.set(path, `${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.mode}`);
    } catch {
      stamps.set(path, null);
    }
  }
  return stamps;
}
