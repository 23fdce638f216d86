import { parseNameStatus, parseNulList } from "./parse.js";
import { runGit } from "./run.js";

/** Commits reachable from `from` and not from `not` (`git rev-list --count not..from`). */
export async function countCommitsBetween(cwd: string, not: string, from: string): Promise<number> {
  const { stdout } = await runGit(["rev-list", "--count", `${not}..${from}`, "--"], { cwd });
  return Number.parseInt(stdout.trim(), 10);
}

/** Paths whose content differs between two commits. */
export function changedPathsBetween(cwd: string, a: string, b: string): Promise<string[]> {
  return diffNames(cwd, [a, b]);
}

/** Paths `to` changed since it forked from `from` (`git diff from...to`): what a merge brings in. */
export function changedPathsSinceFork(cwd: string, from: string, to: string): Promise<string[]> {
  return diffNames(cwd, [`${from}...${to}`]);
}

async function diffNames(cwd: string, revs: readonly string[]): Promise<string[]> {
  const args = ["diff", "--name-only", "--no-renames", "-z", ...revs, "--"];
  return parseNulList((await runGit(args, { cwd })).stdout);
}

/** Paths added and deleted going from commit `a` to commit `b` (no rename detection). */
export async function addedAndDeletedPaths(
  cwd: string,
  a: string,
  b: string,
): Promise<{ added: string[]; deleted: string[] }> {
  const args = ["diff", "--name-status", "--no-renames", "-z", "--diff-filter=AD", a, b, "--"];
  const entries = parseNameStatus((await runGit(args, { cwd })).stdout);
  return {
    added: entries.filter((e) => e.status === "A").map((e) => e.path),
    deleted: entries.filter((e) => e.status === "D").map((e) => e.path),
  };
}
