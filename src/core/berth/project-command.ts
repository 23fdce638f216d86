import { spawn } from "node:child_process";
import { timerDelay } from "../timer.js";

/**
 * Runs one project-declared command (a resource's create, a setup step, a gate
 * check) with `sh -c`. Values reach it only through `env`, never spliced into
 * the command text. The command runs in its own process group so a timeout or
 * an interrupt kills everything it started.
 */

export interface ShellOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Kill the whole process group after this long (at most a timer's limit); undefined = no limit. */
  timeoutMs?: number | undefined;
  /** Each chunk of combined stdout+stderr as it arrives (logs, progress). */
  onOutput?: ((chunk: string) => void) | undefined;
  /** Aborting kills the process group (fail_fast, Ctrl-C). */
  signal?: AbortSignal | undefined;
}

export interface ShellResult {
  /** Exit code, or null when killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Combined output; only the last 64 KiB are kept in memory. */
  output: string;
  durationMs: number;
}

const KEEP_OUTPUT = 64 * 1024;
const KILL_GRACE_MS = 2000;
/** How long output may still arrive after sh exits, before what it left running is killed. */
const DRAIN_MS = 200;

export function runShell(command: string, options: ShellOptions): Promise<ShellResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    let timedOut = false;
    let aborted = false;
    const collect = (text: string) => {
      options.onOutput?.(text);
      output = (output + text).slice(-KEEP_OUTPUT);
    };
    // Each stream decodes UTF-8 across chunk boundaries: a character split
    // between two reads must not turn into replacement characters.
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);

    const killGroup = () => {
      signalGroup(child.pid, "SIGTERM");
      setTimeout(() => signalGroup(child.pid, "SIGKILL"), KILL_GRACE_MS).unref();
    };
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            killGroup();
          }, timerDelay(options.timeoutMs));
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    child.on("error", (error) => {
      output += `\n${error.message}`;
    });
    // A job the command left in the background holds its output pipes open, so
    // the pipes would not close until it ended: once sh has exited, what is
    // still buffered has a moment to arrive, then the group is killed.
    let drain: NodeJS.Timeout | undefined;
    child.on("exit", () => {
      drain = setTimeout(() => signalGroup(child.pid, "SIGKILL"), DRAIN_MS);
    });
    child.on("close", (exitCode, signal) => {
      if (timer) clearTimeout(timer);
      if (drain) clearTimeout(drain);
      options.signal?.removeEventListener("abort", onAbort);
      // Children that outlived sh (backgrounded jobs) die with the group.
      signalGroup(child.pid, "SIGKILL");
      resolve({
        exitCode,
        signal,
        timedOut,
        aborted,
        output,
        durationMs: Date.now() - started,
      });
    });
  });
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** The last `count` lines of a command's output, for failure messages. */
export function lastLines(output: string, count: number): string {
  return output.trimEnd().split("\n").slice(-count).join("\n");
}
