import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  type Context,
  type Journal,
  type JournalPlace,
  type JournalSubject,
  silentJournal,
} from "../../context.js";
import { type ErrorCode, UserError } from "../../errors.js";
import {
  appendLogbookEvent,
  type BeginEvent,
  LOGBOOK_SCHEMA,
  type LogbookSurface,
  logbookDir,
  type WrittenOutcome,
} from "../../io/logbook.js";
import { EXIT_INTERRUPTED, EXIT_NOT_MET, type VerbResult } from "../../result.js";
import { openRepository } from "../repo/repository.js";

/**
 * The journal an effectful verb writes to the logbook: one `begin` when the
 * verb knows its subject (before it changes anything) and one `finish` with
 * the same invocation id when it ends. It is history that advises: a write
 * error never changes the verb's result (under --debug it is said once on
 * stderr), and nothing is written with `[logbook] enabled = false`.
 */
export interface RecordingJournal extends Journal {
  /**
   * Writes the finish, and first the begin if the verb never called it (it
   * refused early): every invocation yields exactly one of each. Never throws.
   */
  finish(result: VerbResult, thrown?: unknown): Promise<void>;
  readonly invocation: string;
}

/** Codes that say the verb declined before changing anything. */
const REFUSAL_CODES: ReadonlySet<ErrorCode> = new Set([
  "usage",
  "not_a_repository",
  "config_invalid",
  "precondition_failed",
  "unknown_target",
  "ambiguous_target",
  "confirmation_required",
  "moved",
  "locked",
  "awaiting_approval",
  "remote_failed",
]);

/**
 * The outcome a finish event records (docs/decisions/0006, 0019), in order:
 * - `timeout`: an await not met within its timeout (exit 124);
 * - `interrupted`: stopped by a signal or the desk's interrupt before it
 *   finished (the result says so, or exit 130);
 * - `ok`: the result is ok;
 * - `failed`: the verb did its work and the work failed (`gate_failed`), got
 *   part-way (`partial`, `teardown_failed`, or a refusal that says something
 *   changed: `nothingChanged: false`; `error_code` keeps which), an
 *   unexpected error (`internal`), or a non-ok result with no code;
 * - `refused`: the verb declined and changed nothing (every other code).
 */
export function logbookOutcome(result: VerbResult, thrown?: unknown): WrittenOutcome {
  if (result.exitCode === EXIT_NOT_MET) return "timeout";
  if (result.interrupted === true || result.exitCode === EXIT_INTERRUPTED) return "interrupted";
  if (result.ok) return "ok";
  const code = result.error?.code;
  if (code === undefined || !REFUSAL_CODES.has(code)) return "failed";
  if (thrown instanceof UserError && !thrown.nothingChanged) return "failed";
  return "refused";
}

export interface JournalOptions {
  /** For tests: who this process claims to be. */
  pid?: number;
  host?: string;
  /**
   * The berth argument as typed (`accept X`, `await --green X`): the event's
   * target until the verb resolves it (`aim`). null: the verb is about no
   * berth (prune, `await --trunk-moved`); undefined: the subject's branch.
   */
  argument?: string | null | undefined;
  /** The agent surface running the verb (`berth mcp`, `berth hook`); absent: the CLI or the desk. */
  surface?: LogbookSurface | undefined;
}

export function createJournal(
  ctx: Context,
  verb: string,
  options: JournalOptions = {},
): RecordingJournal {
  const invocation = randomBytes(8).toString("hex");
  const startedAt = ctx.now();
  const startMark = performance.now();
  const pid = options.pid ?? process.pid;
  const host = options.host ?? hostname();
  let place: JournalPlace | null = null;
  let subject: JournalSubject | null = null;
  let begunAt: Date | null = null;
  let beginWritten = false;
  let warned = false;
  let aimed: { target: string | null } | null = null;

  /** begin's own target, else what `aim` named, else the argument, else the subject's branch. */
  const targetOf = (about: JournalSubject): string | null => {
    if (about.target !== undefined) return about.target;
    if (aimed !== null) return aimed.target;
    if (options.argument !== undefined) return options.argument;
    return about.branch;
  };

  const eventBase = (at: Date, about: JournalSubject) => ({
    schema: LOGBOOK_SCHEMA,
    at: at.toISOString(),
    invocation,
    verb,
    branch: about.branch,
    path: about.path,
    target: targetOf(about),
    pid,
    host,
    ...(options.surface === undefined ? {} : { surface: options.surface }),
  });

  const warnOnce = (error: unknown) => {
    if (ctx.debug && !warned) {
      ctx.stderr.write(`berth: logbook not written: ${(error as Error).message}\n`);
    }
    warned = true;
  };

  const write = (where: JournalPlace, event: Parameters<typeof appendLogbookEvent>[1]) => {
    if (!where.enabled) return;
    try {
      appendLogbookEvent(logbookDir(where.commonDir), event);
    } catch (error) {
      warnOnce(error);
    }
  };

  const writeBegin = (where: JournalPlace, about: JournalSubject, at: Date) => {
    if (beginWritten) return;
    beginWritten = true;
    const { schema, ...rest } = eventBase(at, about);
    const event: BeginEvent = { schema, event: "begin", ...rest };
    write(where, event);
  };

  return {
    invocation,
    aim(target) {
      aimed = { target };
    },
    begin(about) {
      if (subject !== null) return;
      subject = {
        branch: about.branch,
        path: about.path,
        ...(about.target === undefined ? {} : { target: about.target }),
      };
      begunAt = ctx.now();
      if (place !== null) writeBegin(place, subject, begunAt);
    },
    bind(where) {
      if (place !== null) return;
      place = where;
      if (subject !== null && begunAt !== null) writeBegin(place, subject, begunAt);
    },
    async finish(result, thrown) {
      try {
        const where = place ?? (await discoverPlace(ctx));
        if (where === null) return;
        const about = subject ?? (await currentCheckout(where));
        writeBegin(where, about, begunAt ?? startedAt);
        const { schema, ...rest } = eventBase(ctx.now(), about);
        write(where, {
          schema,
          event: "finish",
          ...rest,
          outcome: logbookOutcome(result, thrown),
          error_code: result.error?.code ?? null,
          duration_ms: Math.max(0, Math.round(performance.now() - startMark)),
        });
      } catch (error) {
        warnOnce(error); // The journal never changes a verb's result.
      }
    },
  };
}

/** The repository of a verb that refused before opening it; null outside one. */
async function discoverPlace(ctx: Context): Promise<JournalPlace | null> {
  try {
    const repo = await openRepository({ ...ctx, journal: silentJournal });
    return {
      commonDir: repo.location.commonDir,
      gitDir: repo.location.gitDir,
      toplevel: repo.location.toplevel,
      enabled: repo.config.logbook.enabled,
    };
  } catch {
    // Not a repository, or a config berth cannot read: nowhere it may write.
    return null;
  }
}

/** The checkout berth ran in, as the subject of a verb that never named one. */
async function currentCheckout(place: JournalPlace): Promise<JournalSubject> {
  const head = await readFile(join(place.gitDir, "HEAD"), "utf8").catch(() => "");
  const match = /^ref: refs\/heads\/(.+)$/m.exec(head);
  return { branch: match?.[1]?.trim() ?? null, path: place.toplevel };
}
