import { hostname } from "node:os";
import {
  type BeginEvent,
  type FinishEvent,
  type LogbookEvent,
  type LogbookOutcome,
  logbookDir,
  readLogbook,
} from "../../io/logbook.js";

/**
 * Readers over the logbook: per worktree, the verb in flight and the last
 * finished action. They advise and never gate (ADR 0225): a reader may make
 * an offer more conservative or a hint more useful, never change a verb's
 * `ok`, its exit code or a receipt's validity.
 */

/** The in-flight horizon never drops below an hour (spec section 6, clause 4). */
export const MIN_IN_FLIGHT_HORIZON_MS = 60 * 60 * 1000;
/** A verb is presumed still running for this many times its median duration. */
export const HORIZON_MEDIAN_FACTOR = 10;
/**
 * Status and the idle clause read only the newest two month files: enough to
 * pair every begin younger than a month with its finish, and bounded in cost
 * however long the logbook grows. `berth logbook` reads every file.
 */
export const ACTIVITY_MONTH_FILES = 2;

export interface LastAction {
  verb: string;
  outcome: LogbookOutcome;
  /** When it finished (ISO 8601 UTC). */
  at: string;
}

/** Whether a process from a begin event still runs: only answerable on this host. */
export interface ProcessProbe {
  host: string;
  isAlive(pid: number): boolean;
}

export const localProcessProbe: ProcessProbe = {
  host: hostname(),
  isAlive(pid) {
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      // EPERM: the process exists but belongs to someone else.
      return (error as NodeJS.ErrnoException).code === "EPERM";
    }
  },
};

/** `running` for a begin whose process is gone on this host: `interrupted <verb>`. */
export const INTERRUPTED_PREFIX = "interrupted ";

/** What the logbook says about one worktree. */
export interface LogbookFacts {
  /**
   * The verb in flight (the newest, if several), or null. A begin with no
   * finish whose process is gone on this host (SIGKILL, a closed terminal)
   * reads `interrupted <verb>`: it stopped, but it is still within its
   * horizon, so it still withholds containment (spec section 6, clause 4).
   */
  running: string | null;
  lastAction: LastAction | null;
  /** The newest event of any kind about it. */
  lastEventAt: Date | null;
}

export interface LogbookSubject {
  path: string;
  branch: string | null;
}

export interface LogbookDigest {
  factsFor(subject: LogbookSubject): LogbookFacts;
  /** Every unmatched begin judged in flight, oldest first. */
  inFlight: BeginEvent[];
}

/**
 * Pairs begins with finishes by invocation id. An unmatched begin is in
 * flight when it is younger than its verb's horizon — the larger of one hour
 * and 10x that verb's median duration in the log — or when its pid is still
 * alive on this host (so a three-hour gate stays in flight). One younger than
 * its horizon whose pid is gone on this host is shown as interrupted, and
 * still counts as in flight: the logbook only ever narrows an offer. An event is
 * about a worktree when its path is the worktree's, or, lacking a path, its
 * branch is the worktree's branch.
 */
export function digestLogbook(
  events: readonly LogbookEvent[],
  now: Date,
  probe: ProcessProbe = localProcessProbe,
): LogbookDigest {
  const finished = new Set<string>();
  const durations = new Map<string, number[]>();
  for (const event of events) {
    if (event.event !== "finish") continue;
    finished.add(event.invocation);
    const list = durations.get(event.verb) ?? [];
    list.push(event.duration_ms);
    durations.set(event.verb, list);
  }
  const horizons = new Map<string, number>();
  const horizonOf = (verb: string): number => {
    let horizon = horizons.get(verb);
    if (horizon === undefined) {
      const median = medianOf(durations.get(verb) ?? []);
      horizon = Math.max(MIN_IN_FLIGHT_HORIZON_MS, HORIZON_MEDIAN_FACTOR * (median ?? 0));
      horizons.set(verb, horizon);
    }
    return horizon;
  };
  const timeOf = new Map<LogbookEvent, number>(events.map((e) => [e, Date.parse(e.at)]));
  const at = (e: LogbookEvent) => timeOf.get(e) ?? 0;
  const inFlight = events
    .filter((e): e is BeginEvent => e.event === "begin" && !finished.has(e.invocation))
    .filter((begin) => {
      if (now.getTime() - at(begin) < horizonOf(begin.verb)) return true;
      return begin.host === probe.host && probe.isAlive(begin.pid);
    })
    .sort((a, b) => at(a) - at(b));
  const flying = new Set<LogbookEvent>(inFlight);

  // One pass keeps, per subject, the newest event, finish and in-flight begin,
  // so a fleet of rows costs one walk over the log, not one per row.
  const byPath = new Map<string, Newest>();
  const byBranch = new Map<string, Newest>();
  const newer = <E extends LogbookEvent>(a: E | null, b: E) =>
    a === null || at(b) >= at(a) ? b : a;
  for (const event of events) {
    const key = event.path ?? event.branch;
    if (key === null) continue;
    const index = event.path !== null ? byPath : byBranch;
    const seen = index.get(key) ?? { event: null, finish: null, running: null };
    seen.event = newer(seen.event, event);
    if (event.event === "finish") seen.finish = newer(seen.finish, event);
    else if (flying.has(event)) seen.running = newer(seen.running, event);
    index.set(key, seen);
  }
  const pick = <E extends LogbookEvent>(a: E | null | undefined, b: E | null | undefined) =>
    a == null ? (b ?? null) : b == null ? a : newer(a, b);
  return {
    inFlight,
    factsFor(subject) {
      // An event is about a worktree by its path, or, lacking a path, by its branch.
      const byItsPath = byPath.get(subject.path);
      const byItsBranch = subject.branch === null ? undefined : byBranch.get(subject.branch);
      const running = pick(byItsPath?.running, byItsBranch?.running);
      const last = pick(byItsPath?.finish, byItsBranch?.finish);
      const newest = pick(byItsPath?.event, byItsBranch?.event);
      return {
        running: running === null ? null : runningLabel(running, probe),
        lastAction: last ? { verb: last.verb, outcome: last.outcome, at: last.at } : null,
        lastEventAt: newest ? new Date(newest.at) : null,
      };
    },
  };
}

/** The verb, or `interrupted <verb>` when its process is known to be gone (only on this host). */
function runningLabel(begin: BeginEvent, probe: ProcessProbe): string {
  const gone = begin.host === probe.host && !probe.isAlive(begin.pid);
  return gone ? `${INTERRUPTED_PREFIX}${begin.verb}` : begin.verb;
}

interface Newest {
  event: LogbookEvent | null;
  finish: FinishEvent | null;
  running: BeginEvent | null;
}

/** Reads the recent logbook of a repository and digests it. Throws when unreadable. */
export async function readLogbookDigest(
  commonDir: string,
  now: Date,
  probe: ProcessProbe = localProcessProbe,
): Promise<{ digest: LogbookDigest; skipped: number }> {
  const read = await readLogbook(logbookDir(commonDir), { newestFiles: ACTIVITY_MONTH_FILES });
  return { digest: digestLogbook(read.events, now, probe), skipped: read.skipped };
}

export function medianOf(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
