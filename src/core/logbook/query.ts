import { type FSWatcher, watch } from "node:fs";
import { join } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { type LogbookEvent, logbookDir, parseLogbookText, readLogbook } from "../../io/logbook.js";
import { listMonthFiles, readTextFrom } from "../../io/month-files.js";
import type { VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { openRepository } from "../repo/repository.js";
import { parseSince } from "./since.js";

/**
 * `berth logbook`: the events, oldest first, filtered; `--follow` keeps
 * reading new lines. A pure observer: it reads files and writes nothing.
 */

export interface LogbookFilter {
  /** A branch name, or an id under the branch prefix: the event's subject or its target. */
  branch?: string | undefined;
  verb?: string | undefined;
  /** An ISO time or an age ("2h"); checked by the argument parser. */
  since?: string | undefined;
}

export interface LogbookData {
  dir: string;
  enabled: boolean;
  /** Empty under --follow: those events were streamed. */
  events: LogbookEvent[];
  /** Torn or unknown lines skipped. */
  skipped: number;
}

/** How often --follow re-reads even when no file event arrived. */
export const FOLLOW_POLL_MS = 1000;

interface Query {
  dir: string;
  enabled: boolean;
  matches: (event: LogbookEvent) => boolean;
  fromMonth: string | undefined;
}

async function prepare(ctx: Context, filter: LogbookFilter): Promise<Query> {
  const repo = await openRepository(ctx);
  const prefix = repo.config.repository.branch_prefix;
  const since = filter.since === undefined ? null : parseSince(filter.since, ctx.now());
  if (filter.since !== undefined && since === null) {
    throw new UserError(
      "usage",
      `--since "${filter.since}": expected an ISO time or an age like 30m, 2h, 3d.`,
      { next: shellCommand(["berth", "logbook", "--since", "2h"]) },
    );
  }
  const sinceMs = since?.getTime() ?? null;
  const wanted = filter.branch;
  const branches = wanted === undefined ? null : new Set([wanted, `${prefix}${wanted}`]);
  // A target the verb never resolved is its argument as typed: maybe the id without the prefix.
  const targets =
    wanted === undefined
      ? new Set<string>()
      : new Set([
          wanted,
          `${prefix}${wanted}`,
          ...(wanted.startsWith(prefix) ? [wanted.slice(prefix.length)] : []),
        ]);
  const about = (event: LogbookEvent) =>
    branches === null ||
    (event.branch !== null && branches.has(event.branch)) ||
    (event.target !== null && targets.has(event.target));
  return {
    dir: logbookDir(repo.location.commonDir),
    enabled: repo.config.logbook.enabled,
    fromMonth: since === null ? undefined : since.toISOString().slice(0, 7),
    matches: (event) =>
      about(event) &&
      (filter.verb === undefined || event.verb === filter.verb) &&
      (sinceMs === null || Date.parse(event.at) >= sinceMs),
  };
}

export async function readLogbookEvents(
  ctx: Context,
  filter: LogbookFilter,
): Promise<VerbResult<LogbookData>> {
  const query = await prepare(ctx, filter);
  const read = await readLogbook(query.dir, { fromMonth: query.fromMonth });
  const events = read.events.filter(query.matches);
  return {
    ok: true,
    verb: "logbook",
    data: { dir: query.dir, enabled: query.enabled, events, skipped: read.skipped },
    hints: hintsFor(query.enabled, read.skipped),
  };
}

/**
 * Prints what the logbook holds, then every new matching event as it is
 * appended, until `signal` aborts. Watches the folder for file events, with a
 * poll as backstop (and to notice the folder appearing).
 */
export async function followLogbook(
  ctx: Context,
  filter: LogbookFilter,
  onEvents: (events: LogbookEvent[]) => void,
  signal: AbortSignal,
): Promise<VerbResult<LogbookData>> {
  const query = await prepare(ctx, filter);
  const tail = new LogbookTail(query.dir, query.fromMonth);
  const emit = (events: LogbookEvent[]) => {
    const matching = events.filter(query.matches);
    if (matching.length > 0) onEvents(matching);
  };
  emit(await tail.read());

  await new Promise<void>((resolve) => {
    let watcher: FSWatcher | null = null;
    let reading: Promise<void> | null = null;
    let again = false;
    const refresh = () => {
      if (signal.aborted) return;
      if (reading !== null) {
        again = true;
        return;
      }
      reading = tail
        .read()
        .then(emit, () => undefined)
        .finally(() => {
          reading = null;
          if (again) {
            again = false;
            refresh();
          }
        });
    };
    const ensureWatcher = () => {
      if (watcher !== null) return;
      try {
        watcher = watch(query.dir, { persistent: true }, refresh);
        watcher.on("error", () => {
          watcher?.close();
          watcher = null;
        });
      } catch {
        watcher = null; // The folder does not exist yet: the poll will look again.
      }
    };
    ensureWatcher();
    const timer = setInterval(() => {
      ensureWatcher();
      refresh();
    }, FOLLOW_POLL_MS);
    const stop = () => {
      clearInterval(timer);
      watcher?.close();
      resolve();
    };
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });

  return {
    ok: true,
    verb: "logbook",
    data: { dir: query.dir, enabled: query.enabled, events: [], skipped: tail.skipped },
    hints: hintsFor(query.enabled, tail.skipped),
  };
}

/** Reads each month file from where the last read stopped, whole lines only. */
export class LogbookTail {
  private readonly offsets = new Map<string, number>();
  skipped = 0;

  constructor(
    private readonly dir: string,
    private readonly fromMonth: string | undefined,
  ) {}

  async read(): Promise<LogbookEvent[]> {
    const from = this.fromMonth;
    const names = (await listMonthFiles(this.dir)).filter(
      (name) => from === undefined || name.slice(0, 7) >= from,
    );
    const events: LogbookEvent[] = [];
    for (const name of names) {
      const offset = this.offsets.get(name) ?? 0;
      const chunk = await readTextFrom(join(this.dir, name), offset);
      if (chunk === null) continue;
      // A line still being written (or torn) waits until its newline arrives.
      const cut = chunk.text.lastIndexOf("\n");
      if (cut === -1) continue;
      const complete = chunk.text.slice(0, cut + 1);
      this.offsets.set(name, offset + Buffer.byteLength(complete));
      const parsed = parseLogbookText(complete);
      for (const event of parsed.events) events.push(event);
      this.skipped += parsed.skipped;
    }
    return events;
  }
}

function hintsFor(enabled: boolean, skipped: number): string[] {
  const hints: string[] = [];
  if (!enabled)
    hints.push("the logbook is off ([logbook] enabled = false): nothing new is recorded");
  if (skipped > 0) {
    hints.push(
      `${skipped} unreadable logbook line${skipped === 1 ? "" : "s"} skipped (torn or unknown schema)`,
    );
  }
  return hints;
}
