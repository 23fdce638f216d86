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
