import { tmpdir } from "node:os";
import { GitError, UserError } from "../errors.js";
import { shellCommand } from "../text.js";
import { runGit } from "./run.js";

/**
 * The oldest git berth works with: `git merge-tree --write-tree` (2.38) tells
 * integrated berths and builds integration commits; `worktree list -z` (2.36)
 * and `rev-parse --path-format` (2.31) come before it.
 */
export const MINIMUM_GIT: readonly [number, number] = [2, 38];

/**
 * A git too old for berth fails with its usage text (an option it does not
 * know). Only then is its version asked (one `git --version`, on this failure
 * path alone): below the minimum, the failure is said as what it is, not as a
 * bug. Null for anything else.
 */
export async function tooOldGitFailure(error: unknown): Promise<UserError | null> {
  if (!(error instanceof GitError)) return null;
  if (!/unknown (option|switch)|^usage: git /im.test(error.stderr)) return null;
  const version = await installedGitVersion();
  if (version === null || !olderThanMinimum(version)) return null;
  const [major, minor] = MINIMUM_GIT;
  return new UserError(
    "precondition_failed",
    `berth needs git ${major}.${minor} or later, and this git is ${version.join(".")} (${error.message.split("\n")[0]}). Install a newer git, then run this again.`,
    { next: shellCommand(["git", "--version"]), nothingChanged: false, cause: error },
  );
}

async function installedGitVersion(): Promise<number[] | null> {
  // Any folder will do for --version; the verb's own may be gone.
  const run = await runGit(["--version"], { cwd: tmpdir() }).catch(() => null);
  const match = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(run?.stdout ?? "");
  return match ? match.slice(1).map((part) => Number(part ?? 0)) : null;
}

function olderThanMinimum([major = 0, minor = 0]: number[]): boolean {
  const [wantMajor, wantMinor] = MINIMUM_GIT;
  return major < wantMajor || (major === wantMajor && minor < wantMinor);
}
