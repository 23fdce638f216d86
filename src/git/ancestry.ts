import { spawn } from "node:child_process";
import { GitError } from "../errors.js";
import { gitEnv, gitOutput, runGit } from "./run.js";

/** One commit of a history walk: its id, parents and committer time (Unix seconds). */
export interface WalkedCommit {
  commit: string;
  parents: string[];
  time: number;
}

const WALK_ARGS = ["rev-list", "--parents", "--timestamp", "--stdin"] as const;

/**
 * The history reachable from `tips`, newest first (`git rev-list --parents
 * --timestamp`), handed to `visit` one commit at a time as git prints it. No
 * commit is excluded up front: `visit` returns true once it has read enough,
 * and the walk ends there (the process is stopped), so a walk reads only as
 * far as its reader needs. Resolves with whether the reader stopped it.
 */
export function walkHistory(
  cwd: string,
  tips: readonly string[],
  visit: (commit: WalkedCommit) => boolean,
): Promise<{ stopped: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", WALK_ARGS, {
      cwd,
      env: gitEnv(cwd),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stopped = false;
    let pending = "";
    let stderr = "";
    let failure: Error | null = null;
    const readLine = (line: string): boolean => {
      const first = line.indexOf(" ");
      if (first <= 0) return false;
      const words = line.slice(first + 1).split(" ");
      const commit = words[0] ?? "";
      return visit({ commit, parents: words.slice(1), time: Number(line.slice(0, first)) });
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (stopped) return;
      pending += chunk;
      let start = 0;
      for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n", start)) {
        const line = pending.slice(start, end);
        start = end + 1;
        try {
          if (line !== "" && readLine(line)) {
            stopped = true;
            child.kill();
            break;
          }
        } catch (error) {
          failure = error as Error;
          stopped = true;
          child.kill();
          break;
        }
      }
      pending = pending.slice(start);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    // git may be stopped before it has read every tip: a closed stdin is not a failure then.
    child.stdin.on("error", () => undefined);
    child.on("error", (error) => reject(new GitError(WALK_ARGS, null, error.message)));
    child.on("close", (code) => {
      if (failure !== null) reject(failure);
      else if (stopped) resolve({ stopped: true });
      else if (code !== 0) reject(new GitError(WALK_ARGS, code, stderr));
      else {
        if (pending !== "") readLine(pending);
        resolve({ stopped: false });
      }
    });
    child.stdin.end(`${tips.join("\n")}\n`);
  });
}

/** `git rev-list --left-right --count a...b`: commits only `a` reaches, and only `b`. */
export async function countLeftRight(
  cwd: string,
  a: string,
  b: string,
): Promise<{ left: number; right: number }> {
  const out = await gitOutput(["rev-list", "--left-right", "--count", `${a}...${b}`], { cwd });
  const [left = "", right = ""] = out.trim().split(/\s+/);
  return { left: Number(left), right: Number(right) };
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
export async function mergeBase(cwd: string, a: string, b: string): Promise<string | null> {
  const result = await runGit(["merge-base", a, b], { cwd, okCodes: [1] });
  const base = result.stdout.trim().split("\n")[0] ?? "";
  return result.exitCode === 0 && base !== "" ? base : null;
}
