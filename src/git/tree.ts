import { parseBatchCheckNames } from "./parse.js";
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
  const trees = new Map<string, string | null>();
  if (unique.length === 0) return trees;
  const input = unique.map((commit) => `${commit}^{tree}\n`).join("");
  const { stdout } = await runGit(["cat-file", "--batch-check=%(objectname)"], { cwd, input });
  const names = parseBatchCheckNames(stdout);
  unique.forEach((commit, i) => {
    trees.set(commit, names[i] ?? null);
  });
  return trees;
}

/** An object named by `<commit>:<path>`, or null where the path names nothing. */
export interface ObjectAt {
  oid: string;
  type: string;
}

/**
 * What each `<commit>:<path>` name points at, in one `git cat-file
 * --batch-check` process. Names must not hold a newline (callers leave such
 * paths out): each line of input is one name.
 */
export async function readObjectsAt(
  cwd: string,
  names: readonly string[],
): Promise<(ObjectAt | null)[]> {
  if (names.length === 0) return [];
  const input = names.map((name) => `${name}\n`).join("");
  const format = "--batch-check=%(objectname) %(objecttype)";
  const { stdout } = await runGit(["cat-file", format], { cwd, input });
  const lines = stdout.split("\n");
  return names.map((_, i) => {
    const match = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) (\w+)$/.exec(lines[i] ?? "");
    return match === null ? null : { oid: match[1] as string, type: match[2] as string };
  });
}
