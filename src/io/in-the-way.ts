import { lstat } from "node:fs/promises";
import { join } from "node:path";

/**
 * Files on disk that would be overwritten if `added` paths (relative to
 * `root`) were written there: the path itself exists, or one of its parent
 * folders is a file. A parent that is itself being deleted (`deleted`, a
 * tracked file replaced by a folder) is not in the way. Reads only.
 */
export async function findPathsInTheWay(
  root: string,
  added: readonly string[],
  deleted: readonly string[],
): Promise<string[]> {
  const leaving = new Set(deleted);
  const inTheWay = new Set<string>();
  for (const path of added) {
    const code = await lstatCode(join(root, path));
    if (code === "exists") {
      inTheWay.add(path);
    } else if (code === "ENOTDIR") {
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) {
        const parent = parts.slice(0, i).join("/");
        const stats = await lstat(join(root, parent)).catch(() => null);
        if (stats === null) break;
        if (!stats.isDirectory()) {
          if (!leaving.has(parent)) inTheWay.add(parent);
          break;
        }
      }
    }
  }
  return [...inTheWay].sort();
}

async function lstatCode(path: string): Promise<"exists" | "ENOENT" | "ENOTDIR" | "other"> {
  try {
    await lstat(path);
    return "exists";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "ENOENT" : code === "ENOTDIR" ? "ENOTDIR" : "other";
  }
}
