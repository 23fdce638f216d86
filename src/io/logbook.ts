import { join } from "node:path";
import { appendMonthLine, listMonthFiles, readTextFrom } from "./month-files.js";
import { sharedStateDir } from "./paths.js";

/**
 * The logbook files (spec section 2): `<common>/berth/logbook/YYYY-MM.jsonl`,
 * one JSON event per line. Writers append each line with a single `write()`
 * on an `O_APPEND` descriptor and take no lock, so concurrent verbs never
 * interleave within a line; a crash can still leave a torn last line, which
 * readers skip and count. Events carry metadata only, never file contents or
 * command output.
 */

/**
 * Schema 1 throughout: later fields are optional additions that older lines
 * lack (`target`), and readers take both (docs/decisions/0019).
 */
export const LOGBOOK_SCHEMA = 1 as const;
/** How many month files survive rotation. */
export const LOGBOOK_MONTHS_KEPT = 12;

/** What a finish says now (docs/decisions/0006, 0019). */
export type WrittenOutcome = "ok" | "refused" | "failed" | "timeout" | "interrupted";
/** What a finish may say: `partial` was written before issue 16 (now `failed`, code `partial`). */
export type LogbookOutcome = WrittenOutcome | "partial";
export const LOGBOOK_OUTCOMES: readonly LogbookOutcome[] = [
  "ok",
  "refused",
  "failed",
  "timeout",
  "interrupted",
  "partial",
];

interface EventBase {
  schema: typeof LOGBOOK_SCHEMA;
  /** ISO 8601 UTC. */
  at: string;
  /** Random id shared by the begin and the finish of one invocation. */
  invocation: string;
  /** The verb as typed, e.g. "start" or "worktree drop". */
  verb: string;
  branch: string | null;
  /** The worktree the verb acts on. */
  path: string | null;
  /**
   * The branch of the berth the verb is about (accept's, drop's, the awaited
   * one), as resolved, else its argument as typed; null when it names none.
   * Lines written before issue 16 have no such field and read as null.
   */
  target: string | null;
  pid: number;
  host: string;
  /**
   * Which agent surface ran the verb (issue 18): `mcp` for `berth mcp`'s
   * tools, `hook` for `berth hook ...`. Absent: the CLI or the desk.
   */
  surface?: LogbookSurface;
}

/** The surfaces other than the CLI and the desk, named on their events. */
export type LogbookSurface = "mcp" | "hook";
const LOGBOOK_SURFACES: readonly string[] = ["mcp", "hook"];

export interface BeginEvent extends EventBase {
  event: "begin";
}

export interface FinishEvent extends EventBase {
  event: "finish";
  outcome: LogbookOutcome;
  error_code: string | null;
  duration_ms: number;
}

export type LogbookEvent = BeginEvent | FinishEvent;

export function logbookDir(commonDir: string): string {
  return join(sharedStateDir(commonDir), "logbook");
}

/** `YYYY-MM.jsonl` for the UTC month of `date`. */
export function monthFileName(date: Date): string {
  return `${date.toISOString().slice(0, 7)}.jsonl`;
}

/** The event as one line, fields in a fixed order. */
export function formatEventLine(event: LogbookEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/**
 * Appends one event to its month file. Throws on any I/O error: the caller
 * (the journal) decides that a failed write never changes a verb's result.
 */
export function appendLogbookEvent(dir: string, event: LogbookEvent): void {
  appendMonthLine(dir, new Date(event.at), formatEventLine(event), LOGBOOK_MONTHS_KEPT);
}

export interface LogbookRead {
  events: LogbookEvent[];
  /** Lines skipped: torn, not JSON, an unknown schema or an unexpected shape. */
  skipped: number;
}

export interface ReadLogbookOptions {
  /** Read only the newest N month files. */
  newestFiles?: number;
  /** Skip month files before this UTC month ("YYYY-MM"). */
  fromMonth?: string | undefined;
}

/**
 * Every readable event, oldest file first, in file order. A missing folder is
 * an empty logbook; any other I/O error is thrown (the caller treats the
 * logbook as unreadable).
 */
export async function readLogbook(
  dir: string,
  options: ReadLogbookOptions = {},
): Promise<LogbookRead> {
  let names = await listMonthFiles(dir);
  if (options.fromMonth !== undefined) {
    const from = options.fromMonth;
    names = names.filter((name) => name.slice(0, 7) >= from);
  }
  if (options.newestFiles !== undefined) names = names.slice(-options.newestFiles);
  const result: LogbookRead = { events: [], skipped: 0 };
  for (const name of names) {
    const text = await readTextFrom(join(dir, name), 0);
    if (text === null) continue;
    const parsed = parseLogbookText(text.text);
    for (const event of parsed.events) result.events.push(event);
    result.skipped += parsed.skipped;
  }
  return result;
}

/**
 * Parses logbook text. Each line must be a schema-1 event; anything else is
 * skipped and counted. A crashed writer's torn line has no newline, so the next
 * append lands on the same line: the event after the tear is recovered.
 */
export function parseLogbookText(text: string): LogbookRead {
  const result: LogbookRead = { events: [], skipped: 0 };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const event = parseEventLine(line);
    if (event !== null) {
      result.events.push(event);
      continue;
    }
    result.skipped++;
    const tail = line.lastIndexOf('{"schema":');
    if (tail > 0) {
      const recovered = parseEventLine(line.slice(tail));
      if (recovered !== null) result.events.push(recovered);
    }
  }
  return result;
}

/** One line as an event, or null when it is not a well-formed schema-1 event (with or without `target`). */
export function parseEventLine(line: string): LogbookEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return null;
  }
  return toEvent(raw);
}

function toEvent(raw: unknown): LogbookEvent | null {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (r.schema !== LOGBOOK_SCHEMA) return null;
  if (typeof r.at !== "string" || Number.isNaN(Date.parse(r.at))) return null;
  if (typeof r.invocation !== "string" || r.invocation === "") return null;
  if (typeof r.verb !== "string" || typeof r.host !== "string") return null;
  if (!isNullableString(r.branch) || !isNullableString(r.path)) return null;
  const target = r.target === undefined ? null : r.target;
  if (!isNullableString(target)) return null;
  if (typeof r.pid !== "number" || !Number.isInteger(r.pid)) return null;
  if (r.surface !== undefined && !LOGBOOK_SURFACES.includes(r.surface as string)) return null;
  const surface = r.surface as LogbookSurface | undefined;
  // Plain literals, not spreads: this runs once per line of a possibly large log.
  if (r.event === "begin") {
    const begin: BeginEvent = {
      schema: LOGBOOK_SCHEMA,
      event: "begin",
      at: r.at,
      invocation: r.invocation,
      verb: r.verb,
      branch: r.branch,
      path: r.path,
      target,
      pid: r.pid,
      host: r.host,
    };
    if (surface !== undefined) begin.surface = surface;
    return begin;
  }
  if (r.event !== "finish") return null;
  if (!LOGBOOK_OUTCOMES.includes(r.outcome as LogbookOutcome)) return null;
  if (!isNullableString(r.error_code)) return null;
  if (typeof r.duration_ms !== "number" || !(r.duration_ms >= 0)) return null;
  const finish: FinishEvent = {
    schema: LOGBOOK_SCHEMA,
    event: "finish",
    at: r.at,
    invocation: r.invocation,
    verb: r.verb,
    branch: r.branch,
    path: r.path,
    target,
    pid: r.pid,
    host: r.host,
    outcome: r.outcome as LogbookOutcome,
    error_code: r.error_code,
    duration_ms: r.duration_ms,
  };
  if (surface !== undefined) finish.surface = surface;
  return finish;
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}
