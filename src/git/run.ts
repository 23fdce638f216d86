import { execFile } from "node:child_process";
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

export function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, ...extra, ...SAFE_ENV };
}

export function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args as string[],
      {
        cwd: options.cwd,
        env: options.optionalLocks
          ? { ...gitEnv(options.env), GIT_OPTIONAL_LOCKS: "1" }
          : gitEnv(options.env),
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
