import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { lastLines, runShell } from "../berth/project-command.js";

/**
 * The gate's scheduler: runs declared checks in dependency order (`after`),
 * independent checks side by side (at most `parallelism` at once), each with
 * its own timeout and its own log file. With `failFast`, the first failure
 * stops the checks still running (their whole process groups) and starts no
 * more.
 */

export interface PlannedCheck {
  name: string;
  command: string;
  after: readonly string[];
  timeoutMs: number;
}

export type CheckOutcome = "passed" | "failed" | "timed_out" | "stopped" | "skipped";

export interface CheckRun {
  name: string;
  command: string;
  outcome: CheckOutcome;
  /** null when the check was killed or never started. */
  exitCode: number | null;
  /** null when the check never started. */
  durationMs: number | null;
  /** Wall-clock start and end (ms since the epoch); null when never started. */
  startedAt: number | null;
  finishedAt: number | null;
  /** The full output; null when the check never started. */
  logPath: string | null;
  /** The last lines of its output, for a failure message. */
  tail: string;
  /** Why a check did not pass: "exit 1", "timed out after 600 s", "after a failed". */
  reason: string | null;
}

export type GateEvent = { kind: "start"; check: PlannedCheck } | { kind: "finish"; run: CheckRun };

export interface RunChecksOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** One `<name>.log` per check; emptied first so no log from an older run misleads. */
  logDir: string;
  failFast: boolean;
  /** Default: the number of cores. */
  parallelism?: number | undefined;
  /** Aborting (an interrupt) stops everything, as a failure with fail_fast would. */
  signal?: AbortSignal | undefined;
  onEvent?: ((event: GateEvent) => void) | undefined;
  /** How many lines of output a failure carries. */
  tailLines?: number | undefined;
}

const DEFAULT_TAIL_LINES = 20;

/**
 * Dependencies before dependants, otherwise declaration order. The config
 * loader already refused unknown names and cycles; a check naming an unknown
 * dependency here is still placed (and will be skipped), never looped on.
 */
export function orderChecks<T extends { name: string; after: readonly string[] }>(
  checks: readonly T[],
): T[] {
  const byName = new Map(checks.map((check) => [check.name, check]));
  const placed = new Set<string>();
  const order: T[] = [];
  const place = (check: T, path: Set<string>) => {
    if (placed.has(check.name) || path.has(check.name)) return;
    path.add(check.name);
    for (const dep of check.after) {
      const found = byName.get(dep);
      if (found) place(found, path);
    }
    placed.add(check.name);
    order.push(check);
  };
  for (const check of checks) place(check, new Set());
  return order;
}

/** Runs every check (or records why it did not run); results in dependency order. */
export async function runChecks(
  checks: readonly PlannedCheck[],
  options: RunChecksOptions,
): Promise<CheckRun[]> {
  const order = orderChecks(checks);
  const limit = Math.max(1, options.parallelism ?? availableParallelism());
  const tailCount = options.tailLines ?? DEFAULT_TAIL_LINES;
  const logNames = logFileNames(order.map((c) => c.name));
  await rm(options.logDir, { recursive: true, force: true });
  await mkdir(options.logDir, { recursive: true });

  const finished = new Map<string, CheckRun>();
  const running = new Set<string>();
  const stopAll = new AbortController();
  let stopReason: string | null = null;
  const stop = (reason: string) => {
    if (stopReason !== null) return;
    stopReason = reason;
    stopAll.abort();
  };
  const onOuterAbort = () => stop("interrupted");
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  if (options.signal?.aborted) onOuterAbort();

  const finish = (run: CheckRun) => {
    finished.set(run.name, run);
    options.onEvent?.({ kind: "finish", run });
  };

  const start = async (check: PlannedCheck): Promise<void> => {
    running.add(check.name);
    options.onEvent?.({ kind: "start", check });
    const logPath = join(options.logDir, logNames.get(check.name) ?? `${check.name}.log`);
    const log = createWriteStream(logPath);
    // A log that cannot be written must not stop the check; its tail is still kept in memory.
    log.on("error", () => undefined);
    const startedAt = Date.now();
    const result = await runShell(check.command, {
      cwd: options.cwd,
      env: options.env,
      timeoutMs: check.timeoutMs,
      signal: stopAll.signal,
      onOutput: (chunk) => log.write(chunk),
    });
    await closeLog(log);
    const finishedAt = Date.now();
    const outcome: CheckOutcome = result.timedOut
      ? "timed_out"
      : result.aborted
        ? "stopped"
        : result.exitCode === 0
          ? "passed"
          : "failed";
    running.delete(check.name);
    finish({
      name: check.name,
      command: check.command,
      outcome,
      exitCode: result.exitCode,
      durationMs: result.durationMs,
      startedAt,
      finishedAt,
      logPath,
      tail: lastLines(result.output, tailCount),
      reason: reasonFor(outcome, result.exitCode, result.signal, check.timeoutMs, stopReason),
    });
    if (outcome !== "passed" && outcome !== "stopped" && options.failFast) {
      stop(`fail_fast: ${check.name} ${outcome === "timed_out" ? "timed out" : "failed"}`);
    }
  };

  const inFlight = new Set<Promise<void>>();
  for (;;) {
    // One pass in dependency order: skips propagate to dependants in the same pass.
    for (const check of order) {
      if (finished.has(check.name) || running.has(check.name)) continue;
      const blocker = check.after.find((dep) => {
        const run = finished.get(dep);
        return run !== undefined && run.outcome !== "passed";
      });
      if (stopReason !== null || blocker !== undefined) {
        const why =
          stopReason ?? `after ${blocker} ${describeOutcome(finished.get(blocker ?? "")?.outcome)}`;
        finish(notRun(check, why));
        continue;
      }
      const waiting = check.after.some((dep) => !finished.has(dep) && checkExists(order, dep));
      if (waiting || running.size >= limit) continue;
      const task = start(check).finally(() => inFlight.delete(task));
      inFlight.add(task);
    }
    if (inFlight.size === 0) break;
    await Promise.race(inFlight);
  }
  options.signal?.removeEventListener("abort", onOuterAbort);
  return order.map((check) => finished.get(check.name) ?? notRun(check, "not run"));
}

function checkExists(order: readonly PlannedCheck[], name: string): boolean {
  return order.some((check) => check.name === name);
}

function notRun(check: PlannedCheck, reason: string): CheckRun {
  return {
    name: check.name,
    command: check.command,
    outcome: "skipped",
    exitCode: null,
    durationMs: null,
    startedAt: null,
    finishedAt: null,
    logPath: null,
    tail: "",
    reason,
  };
}

function reasonFor(
  outcome: CheckOutcome,
  exitCode: number | null,
  signal: NodeJS.Signals | null,
  timeoutMs: number,
  stopReason: string | null,
): string | null {
  switch (outcome) {
    case "passed":
      return null;
    case "timed_out":
      return `timed out after ${formatSeconds(timeoutMs)}; its processes were killed`;
    case "stopped":
      return `stopped (${stopReason ?? "interrupted"})`;
    default:
      return exitCode === null ? `killed by ${signal ?? "a signal"}` : `exit ${exitCode}`;
  }
}

function describeOutcome(outcome: CheckOutcome | undefined): string {
  switch (outcome) {
    case "timed_out":
      return "timed out";
    case "stopped":
      return "was stopped";
    case "skipped":
      return "was skipped";
    default:
      return "failed";
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** File-safe, unique log names: `typecheck.log`, `unit_tests.log`, `a_b-2.log`. */
function logFileNames(names: readonly string[]): Map<string, string> {
  const used = new Set<string>();
  const files = new Map<string, string>();
  for (const name of names) {
    const base = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "check";
    let file = `${base}.log`;
    for (let n = 2; used.has(file); n++) file = `${base}-${n}.log`;
    used.add(file);
    files.set(name, file);
  }
  return files;
}

function closeLog(log: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (log.destroyed) resolve();
    log.once("error", () => resolve());
    log.end(() => resolve());
  });
}
