import { realpathSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { GitError, UserError } from "../errors.js";
import { shellCommand } from "../text.js";
import { declareGitDir, type GitRunner, runGit } from "./run.js";

/** Where a repository keeps things, as seen from one folder inside it. */
export interface RepoLocation {
  /** The folder berth was run from (real path). */
  cwd: string;
  /** `git rev-parse --git-common-dir`: shared by every worktree. */
  commonDir: string;
  /** `git rev-parse --git-dir`: this worktree's admin dir (== commonDir in the main checkout). */
  gitDir: string;
  /** Top of the checkout containing cwd; null in a bare repository's folder. */
  toplevel: string | null;
  /** The primary working tree, when it can be told from the common dir. */
  mainPath: string | null;
}

const DISCOVERY_ARGS = [
  "rev-parse",
  "--path-format=absolute",
  "--git-common-dir",
  "--git-dir",
  "--is-bare-repository",
] as const;

/**
 * One rev-parse answers every discovery question; a second only in a bare
 * repository's folder (which has no toplevel) or to explain a refusal.
 */
export async function discoverRepo(cwdIn: string, run: GitRunner = runGit): Promise<RepoLocation> {
  // Synchronous (one realpath(3), microseconds): a promise would start rev-parse a
  // thread-pool round trip later, and status's statuses wait on its answer.
  const cwd = realPathOr(cwdIn);
  refuseNewlinePath(cwd);
  refuseNotAFolder(cwd);
  let output: string;
  try {
    output = (await run([...DISCOVERY_ARGS, "--show-toplevel"], { cwd })).stdout;
  } catch (error) {
    return discoverOutsideCheckout(cwd, error);
  }
  const [commonDir = "", gitDir = "", bare = "", toplevel = ""] = answers(output, 4);
  declareGitDir(commonDir);
  if (bare === "true") return { cwd, commonDir, gitDir, toplevel: null, mainPath: null };
  return {
    cwd,
    commonDir,
    gitDir,
    toplevel: toplevel || null,
    mainPath: mainCheckoutOf(commonDir),
  };
}

/** The primary working tree a common dir belongs to: the folder holding it, when it is a `.git`. */
export function mainCheckoutOf(commonDir: string): string | null {
  return basename(commonDir) === ".git" ? dirname(commonDir) : null;
}

function realPathOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** rev-parse's answers, one a line; more lines than answers means a path holds a newline. */
function answers(output: string, count: number): string[] {
  const lines = output.split("\n");
  if (lines.length !== count + 1) throw newlinePathRefusal(null);
  return lines.slice(0, count);
}

/**
 * berth refuses any repository or worktree path that contains a newline
 * (docs/decisions/0018): git answers with one path a line in places that have
 * no -z form (rev-parse), so such a path would be read as two.
 */
export function refuseNewlinePath(path: string): void {
  if (path.includes("\n")) throw newlinePathRefusal(path);
}

function newlinePathRefusal(path: string | null): UserError {
  const why = "git prints paths one a line, so berth would read it as two paths";
  if (path === null) {
    return new UserError(
      "precondition_failed",
      `A path of this repository (its folder, its git dir or this checkout) contains a newline; ${why}. Move or rename the folder so that no path has a newline, then run git worktree repair.`,
    );
  }
  // The first folder whose name holds the newline is the one to rename.
  const parts = path.split("/");
  const at = parts.findIndex((part) => part.includes("\n"));
  const folder = parts.slice(0, at + 1).join("/");
  const renamed = [...parts.slice(0, at), (parts[at] ?? "").replace(/\n+/g, "-")].join("/");
  return new UserError(
    "precondition_failed",
    `The path ${JSON.stringify(path)} contains a newline; ${why}. Rename the folder (then run git worktree repair if the repository has linked worktrees).`,
    { next: shellCommand(["mv", folder, renamed]) },
  );
}

/**
 * --show-toplevel fails outside a checkout: in a bare repository's folder
 * (a place berth can survey the fleet from) and inside a .git folder (refused).
 */
async function discoverOutsideCheckout(cwd: string, error: unknown): Promise<RepoLocation> {
  // The folder may have gone since it was checked: its spawn then fails as ENOENT, as a missing git does.
  refuseNotAFolder(cwd);
  if (!(error instanceof GitError)) throw error;
  if (gitMissing(error)) {
    throw new UserError(
      "precondition_failed",
      "berth runs git, and there is no git on PATH; install git (or add its folder to PATH) and run berth again.",
    );
  }
  if (/not a git repository/i.test(error.stderr)) {
    throw new UserError(
      "not_a_repository",
      `${cwd} is not inside a git repository; cd into one (or create one with git init).`,
    );
  }
  const probe = await runGit(DISCOVERY_ARGS, { cwd }).catch((failure: unknown) => failure);
  if (probe instanceof GitError) throw gitRefusesHere(cwd, probe);
  if (probe instanceof Error) throw probe;
  const [commonDir = "", gitDir = "", bare = ""] = answers((probe as { stdout: string }).stdout, 3);
  if (bare === "true") return { cwd, commonDir, gitDir, toplevel: null, mainPath: null };
  throw new UserError(
    "not_a_repository",
    `${cwd} is not inside a checkout of a git repository; cd into one of its working trees.`,
    { next: shellCommand(["git", "-C", cwd, "worktree", "list"]) },
  );
}

/**
 * git itself refuses to work here, for a reason of its own (a
 * repository owned by another user, a broken config file): its words, not
 * "not a repository", which would send the user looking in the wrong place.
 */
function gitRefusesHere(cwd: string, error: GitError): UserError {
  const said = error.stderr
    .split("\n")
    .map((line) => line.replace(/^(fatal|error): /, "").trim())
    .filter((line) => line !== "")
    .join(" ");
  return new UserError(
    "precondition_failed",
    `git cannot work in ${cwd}: ${said || `git exited ${error.exitCode}`}`,
    { next: shellCommand(["git", "-C", cwd, "status"]) },
  );
}

/**
 * The one check that the folder git is started in is one (every entry point
 * discovers through here: the CLI's cwd, a hook payload's cwd, an MCP path).
 * A missing folder, a file or a name with a NUL byte is the caller's mistake;
 * spawning there fails with Node's error (ENOENT, ENOTDIR, an invalid argument), not git's.
 */
function refuseNotAFolder(cwd: string): void {
  const problem = folderProblem(cwd);
  if (problem === null) return;
  throw new UserError(
    "not_a_repository",
    `${problem}; name (or cd into) a folder inside a git repository.`,
  );
}

/** Why git cannot be started in `path`, or null when it is a folder. */
export function folderProblem(path: string): string | null {
  if (path.includes("\0")) {
    return `${JSON.stringify(path)} is not a folder: it holds a NUL byte, which no folder's name does`;
  }
  try {
    return statSync(path).isDirectory() ? null : `${path} is not a folder`;
  } catch {
    return `${path} is not a folder that exists`;
  }
}

/**
 * git could not be started at all: Node reports ENOENT, and a shell (a group
 * of calls, run-group.ts) exits 127, the code POSIX gives a missing command.
 */
function gitMissing(error: GitError): boolean {
  if (error.exitCode === 127) return true;
  return error.exitCode === null && /\bENOENT\b/.test(error.stderr);
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
