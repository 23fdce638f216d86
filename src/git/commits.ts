import { type CommitSubject, parseCommitSubjects } from "./parse.js";
import { runGit } from "./run.js";

/**
 * Up to `max` commits reachable from `tip` and not from `exclude` (newest
 * first), with their subjects: what a refusal names when work would be lost.
 */
export async function listCommitsNotIn(
  cwd: string,
  tip: string,
  exclude: string | null,
  max: number,
): Promise<CommitSubject[]> {
  const revs = exclude === null ? [tip] : [tip, `^${exclude}`];
  const { stdout } = await runGit(
    ["log", "--no-show-signature", "--format=%H%x00%s", `--max-count=${max}`, ...revs, "--"],
    { cwd },
  );
  return parseCommitSubjects(stdout);
}
