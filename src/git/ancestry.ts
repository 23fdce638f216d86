import { parseRevListParents } from "./parse.js";
import { runGit } from "./run.js";

/**
 * A common ancestor of every given commit (`git merge-base --octopus`), or
 * null when the histories are unrelated. Everything at or below it is
 * reachable from all of them, so a walk may stop there.
 */
export async function octopusBase(cwd: string, commits: readonly string[]): Promise<string | null> {
  const result = await runGit(["merge-base", "--octopus", ...commits], { cwd, okCodes: [1] });
  const base = result.stdout.trim().split("\n")[0] ?? "";
  return result.exitCode === 0 && base !== "" ? base : null;
}

/** The commit graph reachable from `tips` but not from `exclude`, in one process. */
export async function readCommitGraph(
  cwd: string,
  tips: readonly string[],
  exclude: string | null,
): Promise<Map<string, string[]>> {
  const input = [...tips, ...(exclude ? [`^${exclude}`] : []), ""].join("\n");
  const { stdout } = await runGit(["rev-list", "--parents", "--stdin"], { cwd, input });
  return parseRevListParents(stdout);
}

/** Whether `ancestor` is reachable from `descendant` (equal counts). */
export async function isAncestor(
  cwd: string,
  ancestor: string,
  descendant: string,
): Promise<boolean> {
  const result = await runGit(["merge-base", "--is-ancestor", ancestor, descendant], {
    cwd,
    okCodes: [1],
  });
  return result.exitCode === 0;
}

/** The best common ancestor of two commits, or null when their histories are unrelated. */
export function mergeBase(cwd: string, a: string, b: string): Promise<string | null> {
  return octopusBase(cwd, [a, b]);
}
