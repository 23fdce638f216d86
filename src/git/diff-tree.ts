import { runGit } from "./run.js";

/** One path a commit changed against a base: a `git diff-tree` raw entry, renames unpaired. */
export interface TreeChange {
  /** git's status letter: A, D, M, T. */
  status: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  path: string;
}

/**
 * What each commit changed against its base, recursively, in one `git
 * diff-tree --stdin` process however many pairs are asked. Renames are not
 * paired (a rename reads as a deletion and an addition). A pair with no change
 * maps to an empty list.
 */
export async function changesAgainst(
  cwd: string,
  pairs: readonly { commit: string; base: string }[],
): Promise<Map<string, TreeChange[]>> {
  const changes = new Map<string, TreeChange[]>(pairs.map((p) => [p.commit, []]));
  if (pairs.length === 0) return changes;
  const input = pairs.map((p) => `${p.commit} ${p.base}\n`).join("");
  const args = ["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-abbrev"];
  const { stdout } = await runGit(args, { cwd, input });
  for (const [commit, list] of parseDiffTreeStdin(stdout)) changes.get(commit)?.push(...list);
  return changes;
}

/**
 * `git diff-tree --stdin -r -z --no-renames` output: per commit with changes,
 * its id, then for each change a `:modes oids status` field and its path.
 */
export function parseDiffTreeStdin(output: string): Map<string, TreeChange[]> {
  const fields = output.split("\0");
  const byCommit = new Map<string, TreeChange[]>();
  let current: TreeChange[] | null = null;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as string;
    if (field === "") continue;
    if (!field.startsWith(":")) {
      current = byCommit.get(field) ?? [];
      byCommit.set(field, current);
      continue;
    }
    const [oldMode, newMode, oldOid, newOid, status] = field.slice(1).split(" ");
    const path = fields[++i];
    if (current === null || path === undefined || status === undefined) continue;
    current.push({
      status: status.charAt(0),
      oldMode: oldMode as string,
      newMode: newMode as string,
      oldOid: oldOid as string,
      newOid: newOid as string,
      path,
    });
  }
  return byCommit;
}
