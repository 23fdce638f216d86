import { existsSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { isatty } from "node:tty";
import { UserError } from "./errors.js";
import { mainPathBesideDefaultRoot } from "./io/paths.js";
import { shellCommand } from "./text.js";

/** What an effectful verb acts on, as recorded in the logbook. */
export interface JournalSubject {
  branch: string | null;
  /** The worktree path the verb acts on. */
  path: string | null;
  /**
   * The branch of the berth the verb is about, when it differs from the
   * subject's (await's awaited branch) or there is none (null: prune).
   * Default: what `aim` named, else the subject's branch.
   */
  target?: string | null;
}

/**
 * The logbook as a verb sees it. An effectful verb calls `begin` once it knows
 * its subject and before it changes anything; commands/run-verb.ts writes the matching
 * finish (and a begin, if the verb refused before calling it).
 */
export interface Journal {
  begin(subject: JournalSubject): void;
  /**
   * Names the berth the verb is about (its branch) as soon as the verb has
   * resolved it, before any refusal: a refused `accept X` is logged with X.
   */
  aim?(target: string | null): void;
  /**
   * Tells the journal which repository the verb opened (openRepository calls
   * it), so it writes there without discovering the repository again.
   */
  bind?(place: JournalPlace): void;
}

/** Where a journal writes, and whether it may. */
export interface JournalPlace {
  commonDir: string;
  /** This checkout's git dir: names the subject of a verb that refused before `begin`. */
  gitDir: string;
  toplevel: string | null;
  /** `[logbook] enabled`. */
  enabled: boolean;
}

export const silentJournal: Journal = { begin: () => undefined };

/**
 * The world a verb runs in. Core code takes this instead of reaching for
 * process globals, so tests run verbs in-process with a fixed clock.
 */
export interface Context {
  cwd: string;
  env: NodeJS.ProcessEnv;
  now: () => Date;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** stdout is a terminal: human output may use color and tables. */
  stdoutIsTTY: boolean;
  /** stderr is a terminal: progress may be drawn there. */
  stderrIsTTY: boolean;
  /** stdin is a terminal: a [y/N] question can be answered. */
  stdinIsTTY: boolean;
  debug: boolean;
  journal: Journal;
  /**
   * Aborted by Ctrl-C, SIGTERM or SIGHUP while a verb applies its plan
   * (commands/interrupt.ts): the project command running is killed, and the
   * verb stops before its next step. Absent: nothing stops the verb but its end.
   */
  interrupt?: AbortSignal | undefined;
}

/** A stop signal came: the verb starts nothing more, and undoes or reports. */
export function isInterrupted(ctx: Pick<Context, "interrupt">): boolean {
  return ctx.interrupt?.aborted === true;
}

/**
 * A reader that has gone away (`berth status --json | head -1`) fails the next
 * write with EPIPE, and a full disk with ENOSPC; Node raises either as an
 * uncaught error, stack and all. A process stream berth writes to gets a
 * listener instead: the verb runs to its end whoever reads, and the final
 * write reports its own error (cli-execute.ts).
 */
const heeded = new WeakSet<NodeJS.WritableStream>();
export function heedWriteErrors<T extends NodeJS.WritableStream>(stream: T): T {
  if (!heeded.has(stream)) {
    heeded.add(stream);
    stream.on("error", () => undefined);
  }
  return stream;
}

/**
 * The folder berth runs in. A shell can stay in a folder that has since been
 * removed (the berth just dropped, a checkout deleted by hand), where the
 * process has no current folder at all: that is a refusal that names where to
 * go, not Node's ENOENT from uv_cwd.
 */
export function currentFolder(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return process.cwd();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    // The shell's own name for the folder it is in, when it gave one.
    const gone = env.PWD !== undefined && isAbsolute(env.PWD) ? env.PWD : null;
    const to = gone === null ? null : whereToGoFrom(gone);
    throw new UserError(
      "not_a_repository",
      `the current folder${gone === null ? "" : ` ${gone}`} no longer exists (it was removed while the shell was in it); cd to a folder that exists and run berth again.`,
      to === null ? {} : { next: shellCommand(["cd", to]) },
    );
  }
}

/**
 * The nearest folder of `gone` that exists, or, when that is a default fleet
 * folder `<repo>.worktrees` (a berth just removed from under the shell), the
 * repository beside it: there the next berth command works.
 */
function whereToGoFrom(gone: string): string | null {
  let nearest = dirname(gone);
  while (!existsSync(nearest)) {
    if (dirname(nearest) === nearest) return null;
    nearest = dirname(nearest);
  }
  const repo = mainPathBesideDefaultRoot(nearest);
  return repo !== null && existsSync(join(repo, ".git")) ? repo : nearest;
}

/**
 * The context of a berth process. `cwd`, when not given, is read on first use,
 * inside the verb: a removed current folder is the verb's refusal, printed
 * and logged as any other (currentFolder).
 */
export function processContext(debug: boolean, cwd?: string): Context {
  let folder = cwd;
  return {
    get cwd() {
      folder ??= currentFolder();
      return folder;
    },
    env: process.env,
    now: () => new Date(),
    stdout: heedWriteErrors(process.stdout),
    // Made on first use: a verb that never writes to stderr (or reads stdin)
    // does not pay for setting up its stream; isatty answers what isTTY would.
    get stderr() {
      return heedWriteErrors(process.stderr);
    },
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: isatty(2),
    stdinIsTTY: isatty(0),
    debug,
    journal: silentJournal,
  };
}
