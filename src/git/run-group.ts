import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { GitError } from "../errors.js";
import { shellCommand } from "../text.js";
import { type GitOptions, type GitResult, type GitRunner, gitEnv, runGit } from "./run.js";

/**
 * A few git calls that start together, forked by one `sh` instead of one
 * fork of Node each. Forking Node blocks its thread for 2.5–4.5 ms a call on
 * a 2-core host (docs/performance.md, start-up), where forking a small `sh`
 * costs a fraction of that; status's first four reads are the case.
 *
 * Readers call `run` as they would runGit; `start` then runs what they asked
 * for side by side, each git with its own stdout and stderr pipe, so each
 * call settles when its own git ends, as runGit would settle it (save that
 * a git killed by a signal reads as exit 128+n, as in any shell).
 * A call that needs more than a plain run (stdin, extra environment, its
 * locks, another folder), a call made after `start`, and any beyond the
 * four `sh` has descriptors for, runs by runGit itself.
 */
export interface GitGroup {
  run: GitRunner;
  start(): void;
}

interface Pending {
  args: readonly string[];
  okCodes: readonly number[] | undefined;
  resolve: (result: GitResult) => void;
  reject: (error: unknown) => void;
}

// Call i writes to descriptors 2i+1 and 2i+2: sh names 0-9 only, so four calls.
const MOST_CALLS = 4;

export function gitGroup(cwd: string): GitGroup {
  const pending: Pending[] = [];
  let started = false;
  const run: GitRunner = (args, options) => {
    if (started || pending.length === MOST_CALLS || !isPlain(options, cwd)) {
      return runGit(args, options);
    }
    return new Promise((resolve, reject) => {
      pending.push({ args, okCodes: options.okCodes, resolve, reject });
    });
  };
  const start = () => {
    started = true;
    if (pending.length === 1) {
      const [only] = pending as [Pending];
      runGit(only.args, { cwd, okCodes: only.okCodes }).then(only.resolve, only.reject);
    } else if (pending.length > 1) {
      runUnderOneShell(cwd, pending);
    }
  };
  return { run, start };
}

function isPlain(options: GitOptions, cwd: string): boolean {
  return (
    options.cwd === cwd &&
    options.env === undefined &&
    options.input === undefined &&
    !options.optionalLocks
  );
}

function runUnderOneShell(cwd: string, calls: readonly Pending[]): void {
  const child = spawn("sh", ["-c", groupScript(calls.map((call) => call.args))], {
    cwd,
    env: gitEnv(cwd),
    stdio: ["ignore", ...calls.flatMap(() => ["pipe", "pipe"] as const)],
  });
  const spawned = new Promise<boolean>((resolve) => {
    child.once("spawn", () => resolve(true));
    child.once("error", () => resolve(false));
  });
  calls.forEach((call, i) => {
    const out = readAll(child.stdio[2 * i + 1] as Readable);
    const err = readAll(child.stdio[2 * i + 2] as Readable);
    void Promise.all([spawned, out, err]).then(([ran, stdout, stderr]) => {
      if (ran) settle(call, stdout, stderr);
    });
  });
  void spawned.then((ran) => {
    if (ran) return;
    // No sh to fork: each call runs the ordinary way instead.
    for (const call of calls) {
      runGit(call.args, { cwd, okCodes: call.okCodes }).then(call.resolve, call.reject);
    }
  });
}

/**
 * Each call's subshell moves its stdout and stderr to its own pair and
 * closes every other pair, so that a pipe ends when its git does; the exit
 * code follows git's stderr as `\0<code>`, the last bytes written there.
 */
function groupScript(calls: readonly (readonly string[])[]): string {
  const closeHigher = calls.slice(1).flatMap((_, k) => [`${2 * k + 3}>&-`, `${2 * k + 4}>&-`]);
  const lines = calls.map((args, i) => {
    const moves = i === 0 ? [] : [`>&${2 * i + 1}`, `2>&${2 * i + 2}`];
    const exec = `exec ${[...moves, ...closeHigher].join(" ")}; `;
    return `{ ${exec}${shellCommand(["git", ...args])}; printf '\\000%d' "$?" >&2; } &`;
  });
  return [...lines, `exec >&- 2>&- ${closeHigher.join(" ")}`, "wait"].join("\n");
}

function readAll(stream: Readable): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => parts.push(chunk));
    stream.on("error", () => resolve(Buffer.concat(parts)));
    stream.on("end", () => resolve(Buffer.concat(parts)));
  });
}

function settle(call: Pending, out: Buffer, err: Buffer): void {
  const marker = err.lastIndexOf(0);
  const code = marker === -1 ? "" : err.subarray(marker + 1).toString("latin1");
  // No code means the subshell died before it could print one.
  const exitCode = /^\d+$/.test(code) ? Number(code) : null;
  const stdout = out.toString("utf8");
  const stderr = (marker === -1 ? err : err.subarray(0, marker)).toString("utf8");
  if (exitCode === 0 || (exitCode !== null && call.okCodes?.includes(exitCode))) {
    call.resolve({ stdout, stderr, exitCode });
  } else {
    call.reject(new GitError(call.args, exitCode, stderr));
  }
}
