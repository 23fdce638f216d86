import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { GitError } from "../errors.js";

/**
 * The only place berth spawns git. Arguments are arrays (never a shell string),
 * and every call is made safe for surveying other people's checkouts:
 * GIT_OPTIONAL_LOCKS=0 keeps `git status` from taking a worktree's index lock.
 */

export interface GitOptions {
  cwd: string;
  /** Extra environment; the caller's environment is inherited. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Written to git's stdin. */
  input?: string | undefined;
  /** Exit codes that are answers rather than failures (e.g. 1 for `merge-base --is-ancestor`). */
  okCodes?: readonly number[] | undefined;
  /**
   * Let git take its optional locks (so `git status` writes a refreshed index
   * back). Only for a checkout the caller owns: never while surveying others'.
   */
  optionalLocks?: boolean | undefined;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const SAFE_ENV = {
  GIT_OPTIONAL_LOCKS: "0",
  LC_ALL: "C",
  GIT_TERMINAL_PROMPT: "0",
} as const;

/**
 * Git directories discoverRepo found: git run in one of them (the common dir,
 * where a wait runs because the caller's checkout may go) is told so with
 * GIT_DIR. Found from inside, `safe.bareRepository = explicit` refuses it, even
 * a checkout's own .git; named explicitly, it is allowed. Only ref and object
 * reads belong there: under GIT_DIR, git would take that folder as a work tree.
 */
const declaredGitDirs = new Set<string>();

export function declareGitDir(path: string): void {
  declaredGitDirs.add(resolve(path));
}

/**
 * The environment of a git process run in `cwd` (every spawn of git or of a
 * shell running it); null for a shell whose git calls each name a checkout.
 */
export function gitEnv(cwd: string | null, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra, ...SAFE_ENV };
  if (cwd !== null && declaredGitDirs.has(resolve(cwd))) env.GIT_DIR = cwd;
  return env;
}

function environment(options: GitOptions): NodeJS.ProcessEnv {
  const env = gitEnv(options.cwd, options.env);
  if (options.optionalLocks) env.GIT_OPTIONAL_LOCKS = "1";
  return env;
}

export function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args as string[],
      {
        cwd: options.cwd,
        env: environment(options),
        maxBuffer: 512 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        const exitCode = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        if (exitCode !== null && (exitCode === 0 || options.okCodes?.includes(exitCode))) {
          resolve({ stdout, stderr, exitCode });
          return;
        }
        const why = exitCode === null && error !== null ? `${stderr}\n${error.message}` : stderr;
        reject(new GitError(args, exitCode, why));
      },
    );
    if (options.input !== undefined) {
      child.stdin?.end(options.input);
    } else {
      child.stdin?.end();
    }
  });
}

/** runGit's signature: what a reader takes to run its git call through a group (run-group.ts). */
export type GitRunner = typeof runGit;

/** stdout of a successful call, without its trailing newline. */
export async function gitOutput(args: readonly string[], options: GitOptions): Promise<string> {
  const { stdout } = await runGit(args, options);
  return stdout.replace(/\n$/, "");
}
