import { type ObjectAt, parseBatchCheck } from "./parse.js";
import { runGit } from "./run.js";

/**
 * The tree of each commit, in one `git cat-file --batch-check` process however
 * many commits are asked for. A commit git does not know maps to null.
 */
export async function readTreesOf(
  cwd: string,
  commits: readonly string[],
): Promise<Map<string, string | null>> {
  const unique = [...new Set(commits)];
  const objects = await readObjectsAt(
    cwd,
    unique.map((commit) => `${commit}^{tree}`),
  );
  return new Map(unique.map((commit, i) => [commit, objects[i]?.oid ?? null]));
}

/**
 * What each name (`<commit>:<path>`, `<commit>^{tree}`) points at, in one
 * `git cat-file --batch-check` process; null where it names nothing. Names
 * must not hold a newline (callers leave such paths out): each line of input
 * is one name.
 */
export async function readObjectsAt(
  cwd: string,
  names: readonly string[],
): Promise<(ObjectAt | null)[]> {
  if (names.length === 0) return [];
  const input = names.map((name) => `${name}\n`).join("");
  const format = "--batch-check=%(objectname) %(objecttype)";
  const { stdout } = await runGit(["cat-file", format], { cwd, input });
  const objects = parseBatchCheck(stdout);
  return names.map((_, i) => objects[i] ?? null);
}
