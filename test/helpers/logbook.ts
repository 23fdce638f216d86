import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { BeginEvent, FinishEvent, LogbookEvent } from "../../src/io/logbook.js";

/** Test helpers for the logbook: hand-written events, and reading the files back. */

export function logbookDirOf(repoPath: string): string {
  return join(repoPath, ".git", "berth", "logbook");
}

export function beginEvent(fields: Partial<BeginEvent> & { at: string }): BeginEvent {
  return {
    schema: 1,
    event: "begin",
    invocation: fields.invocation ?? Math.random().toString(16).slice(2, 18),
    verb: "gate",
    branch: null,
    path: null,
    target: null,
    pid: process.pid,
    host: hostname(),
    ...fields,
  };
}

export function finishEvent(
  fields: Partial<FinishEvent> & { at: string; invocation: string },
): FinishEvent {
  return {
    schema: 1,
    event: "finish",
    verb: "gate",
    branch: null,
    path: null,
    target: null,
    pid: process.pid,
    host: hostname(),
    outcome: "ok",
    error_code: null,
    duration_ms: 1000,
    ...fields,
  };
}

/** Appends raw text to the month file of `month` ("YYYY-MM"). */
export function appendRaw(repoPath: string, month: string, text: string): void {
  const dir = logbookDirOf(repoPath);
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${month}.jsonl`), text);
}

export function appendEvents(repoPath: string, events: readonly LogbookEvent[]): void {
  for (const event of events) {
    appendRaw(repoPath, event.at.slice(0, 7), `${JSON.stringify(event)}\n`);
  }
}

/** Every line of every month file, in order. */
export function logbookLines(repoPath: string): string[] {
  const dir = logbookDirOf(repoPath);
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.flatMap((name) =>
    readFileSync(join(dir, name), "utf8")
      .split("\n")
      .filter((line) => line !== ""),
  );
}

/** A pid that belonged to a process that has exited and been reaped. */
export function deadPid(): number {
  const child = spawnSync("true");
  if (typeof child.pid !== "number") throw new Error("could not spawn a short process");
  return child.pid;
}
