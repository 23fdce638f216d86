import { realpath } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { GitError, UserError } from "../errors.js";
import { runGit } from "./run.js";

/** Where a repository keeps things, as seen from one folder inside it. */
export interface RepoLocation {
  /** The folder berth was run from (real path). */
  cwd: string;
  /** `git rev-parse --git-common-dir`: shared by every worktree. */
  commonDir: string;
  /** `git rev-parse --git-dir`: this worktree's admin dir (== commonDir in the main checkout). */
  gitDir: string;
  /** Top of the checkout containing cwd; null inside a .git folder. */
  toplevel: string | null;
  /** The primary working tree, when it can be told from the common dir. */
  mainPath: string | null;
}

/** One rev-parse answers every discovery question; a second only to explain a refusal. */
export async function discoverRepo(cwdIn: string): Promise<RepoLocation> {
  const cwd = await realpath(cwdIn).catch(() => cwdIn);
  const args = [
    "rev-parse",
    "--path-format=absolute",
    "--git-common-dir",
    "--git-dir",
    "--is-bare-repository",
    "--show-toplevel",
  ];
  let lines: string[];
  try {
    lines = (await runGit(args, { cwd })).stdout.split("\n");
  } catch (error) {
    throw await explainDiscoveryFailure(cwd, error);
  }
  const [commonDir = "", gitDir = "", bare = "", toplevel = ""] = lines;
  if (bare === "true") throw bareRefusal(cwd);
  return {
    cwd,
    commonDir,
    gitDir,
    toplevel: toplevel || null,
    mainPath: basename(commonDir) === ".git" ? dirname(commonDir) : null,
  };
}

async function explainDiscoveryFailure(cwd: string, error: unknown): Promise<Error> {
  if (!(error instanceof GitError)) return error as Error;
  if (/not a git repository/i.test(error.stderr)) {
    return new UserError("not_a_repository", `${cwd} is not inside a git repository.`, {
      next: "cd into a git repository (or run `git init`)",
    });
  }
  // --show-toplevel fails in a bare repository or inside the .git folder.
  const probe = await runGit(["rev-parse", "--is-bare-repository"], { cwd }).catch(() => null);
  if (probe?.stdout.trim() === "true") return bareRefusal(cwd);
  return new UserError("not_a_repository", `${cwd} is not inside a checkout of a git repository.`, {
    next: "cd into the repository's working tree",
  });
}

function bareRefusal(cwd: string): UserError {
  return new UserError(
    "not_a_repository",
    `${cwd} is a bare repository; berth needs a main checkout to work from.`,
    { next: "clone it with a working tree (git clone <url>) and run berth there" },
  );
}

/** Whether the repository has any commit at all. */
export async function hasCommits(cwd: string): Promise<boolean> {
  const result = await runGit(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], {
    cwd,
    okCodes: [1],
  });
  if (result.exitCode === 0) return true;
  // HEAD may be unborn in this checkout while other branches have commits.
  const refs = await runGit(["for-each-ref", "--count=1", "--format=%(objectname)", "refs/heads"], {
    cwd,
  });
  return refs.stdout.trim() !== "";
}
