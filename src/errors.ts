/**
 * Typed errors. Every failure a user can cause is a `UserError` with a stable
 * `code` (spec section 4) and, where there is one, the command to run next.
 * Only `cli-run.ts` turns them into output and an exit code.
 */

import { type CommandLine, shellCommand } from "./text.js";

export type ErrorCode =
  | "usage"
  | "not_a_repository"
  | "config_invalid"
  | "precondition_failed"
  | "unknown_target"
  | "ambiguous_target"
  | "confirmation_required"
  | "gate_failed"
  | "moved"
  | "teardown_failed"
  | "partial"
  | "locked"
  /** An agent's accept, waiting for a person's approval or a grant (spec section 11). */
  | "awaiting_approval"
  /** The landing queue refused an entry: a conflict, or a red gate on its integration commit (spec section 11). */
  | "rejected"
  /** The `[remote]` could not be reached or refused to serve (spec section 13). */
  | "remote_failed"
  /** Not in the spec's list: a bug or a git failure berth did not foresee (docs/decisions/0002). */
  | "internal";

export interface UserErrorOptions {
  /**
   * The command to run next, executable as is (spec invariant 10): built with
   * `shellCommand` / `commandSequence`, never prose; guidance goes in the message.
   */
  next?: CommandLine | undefined;
  /** Verb data worth showing even though the verb refused (candidates, landing flags). */
  data?: unknown;
  /** The plan the verb would have applied, printed with the refusal. */
  plan?: unknown;
  cause?: unknown;
  /** false when the verb got part-way (partial landing, failed teardown). Default true. */
  nothingChanged?: boolean;
}

export class UserError extends Error {
  readonly code: ErrorCode;
  readonly next: CommandLine | undefined;
  readonly data: unknown;
  readonly plan: unknown;
  readonly nothingChanged: boolean;
  /** Set by commands/interrupt.ts when a stop signal came while the verb ran: logged `interrupted`. */
  interrupted = false;

  constructor(code: ErrorCode, message: string, options: UserErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "UserError";
    this.code = code;
    this.next = options.next;
    this.data = options.data;
    this.plan = options.plan;
    this.nothingChanged = options.nothingChanged ?? true;
  }
}

/** A git process that exited non-zero (or could not start). */
export class GitError extends Error {
  readonly args: readonly string[];
  readonly exitCode: number | null;
  readonly stderr: string;

  constructor(args: readonly string[], exitCode: number | null, stderr: string) {
    const detail = stderr.trim().split("\n").slice(-3).join("\n");
    super(
      `git ${args.join(" ")} failed (exit ${exitCode ?? "signal"})${detail ? `: ${detail}` : ""}`,
    );
    this.name = "GitError";
    this.args = args;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** `berth.toml` is unreadable, not TOML, or has a key of the wrong name or type. */
export class ConfigError extends UserError {
  readonly file: string;
  readonly keyPath: string | undefined;

  /** `excerpt`: the lines around the fault, shown after the sentence that says how to fix it. */
  constructor(file: string, keyPath: string | undefined, message: string, excerpt?: string) {
    const where = keyPath === undefined ? file : `${file}: ${keyPath}`;
    const shown = excerpt === undefined ? "" : `\n\n${excerpt.replace(/\n+$/, "")}`;
    super("config_invalid", `${where}: ${message} (edit the file, then run berth again)${shown}`);
    this.name = "ConfigError";
    this.file = file;
    this.keyPath = keyPath;
  }
}

/** What the machine said, in git's and the kernel's words, for failures no user input caused. */
const ENVIRONMENT_FAILURES: readonly { code: string; words: string; what: string }[] = [
  { code: "ENOSPC", words: "No space left on device", what: "the disk is full" },
  { code: "EDQUOT", words: "Disk quota exceeded", what: "the disk quota is used up" },
  { code: "EROFS", words: "Read-only file system", what: "the file system is read-only" },
];

/**
 * A failure of the machine rather than of berth (a full disk, a read-only
 * file system), from Node or from a git that reported it, as a refusal that
 * says so: not `internal`, which calls it a bug. What the verb did before it
 * failed is not known here, so it never claims that nothing changed.
 */
export function environmentFailure(error: unknown): UserError | null {
  if (!(error instanceof Error) || error instanceof UserError) return null;
  const code = (error as NodeJS.ErrnoException).code;
  const text = error instanceof GitError ? error.stderr : error.message;
  const known = ENVIRONMENT_FAILURES.find((f) => f.code === code || text.includes(f.words));
  if (known === undefined) return null;
  return new UserError(
    "precondition_failed",
    `${known.what} (${known.code}): ${error.message}. Make room (or make it writable), look at berth status, then run this again.`,
    { next: shellCommand(["berth", "status"]), nothingChanged: false, cause: error },
  );
}
