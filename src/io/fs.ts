import { lstatSync } from "node:fs";

/** Whether anything (even a dangling symlink) sits at `path`. */
export function pathExistsOrBroken(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
