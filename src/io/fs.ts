import { lstatSync, readdirSync, realpathSync } from "node:fs";

/** Whether anything (even a dangling symlink) sits at `path`. */
export function pathExistsOrBroken(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
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

/** What sits at `path`, not following a symlink: a regular file, something else, or nothing. */
export function entryKindAt(path: string): "file" | "other" | "absent" {
  try {
    return lstatSync(path).isFile() ? "file" : "other";
  } catch {
    return "absent";
  }
}
