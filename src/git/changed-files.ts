import { runGit } from "./run.js";

/**
 * The unlanded history with the paths each commit changed, in one process:
 * `git log --name-only` over every given tip, excluding the trunk. Commits
 * carry their parents, so which tip holds which commit follows in memory.
 * Merge commits list no paths (git log shows no diff for them by default):
 * what a merge of the trunk brings in is the trunk's work, not the berth's.
 */

export interface ChangedCommit {
  oid: string;
  parents: string[];
  /** Paths changed against the first parent (no rename detection); empty for merges. */
  paths: string[];
}

/** Every commit reachable from `tips` and not from `exclude`, newest first. */
export async function readChangedCommits(
  cwd: string,
  tips: readonly string[],
  exclude: string,
): Promise<ChangedCommit[]> {
  if (tips.length === 0) return [];
  // Revisions on stdin: a fleet's tips never meet the argument-length limit.
  const input = `${[...new Set(tips)].join("\n")}\n^${exclude}\n`;
  const { stdout } = await runGit(
    [
      "log",
      "--stdin",
      "--no-renames",
      "--no-show-signature",
      "--name-only",
      "-z",
      "--format=%x00%H %P",
    ],
    { cwd, input },
  );
  return parseChangedCommits(stdout);
}

/**
 * Parses `git log -z --name-only --format=%x00%H %P`: each commit is an empty
 * field (a path is never empty), then "<oid> <parents...>", then its paths,
 * the first of which git prefixes with a newline.
 */
export function parseChangedCommits(output: string): ChangedCommit[] {
  const fields = output.split("\0");
  const commits: ChangedCommit[] = [];
  let current: ChangedCommit | null = null;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as string;
    if (field === "") {
      const header = fields[i + 1];
      if (header === undefined || header === "") continue;
      const [oid, ...parents] = header.replace(/^\n/, "").split(" ");
      current = { oid: oid as string, parents: parents.filter(Boolean), paths: [] };
      commits.push(current);
      i++;
      continue;
    }
    if (current === null) continue;
    current.paths.push(current.paths.length === 0 ? field.replace(/^\n/, "") : field);
  }
  return commits;
}
