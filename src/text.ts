/**
 * The one home of the text rules every layer prints with: how a command is
 * quoted for a shell (spec invariant 10: pasting or executing a printed command
 * runs exactly that command), how a commit id is shortened for people, the
 * natural order names are listed in (`bulk-2` before `bulk-10`), and what a
 * control character is and how a terminal view shows one.
 */

/** Characters a POSIX shell (and zsh) never treats specially inside a word. */
const SHELL_SAFE = /^[A-Za-z0-9_./@%+=:,-]+$/;

/**
 * One argument, quoted so that `sh` reads it back as exactly `text`. A
 * control character (but a newline, which single quotes keep) is written as
 * the `printf` that makes it: printed raw, a terminal would act on it, and
 * the command it shows, copied back, would name something else.
 */
export function shellQuote(text: string): string {
  // A leading "=" is zsh's command-path expansion: quote it.
  if (SHELL_SAFE.test(text) && !text.startsWith("=")) return text;
  const quoted = `'${text.replace(/'/g, `'\\''`)}'`;
  return Array.from(quoted, (char) =>
    char !== "\n" && isControl(char) ? `'"$(printf '${octalBytes(char)}')"'` : char,
  ).join("");
}

/** `char`'s UTF-8 bytes as printf's octal escapes: ESC is `\033`. */
function octalBytes(char: string): string {
  return Array.from(
    Buffer.from(char, "utf8"),
    (byte) => `\\${byte.toString(8).padStart(3, "0")}`,
  ).join("");
}

declare const built: unique symbol;

/**
 * A command line a shell runs exactly as built: the only type a refusal's
 * `next`, a reproduce line or a `--yes` command accepts. It is minted here
 * alone (test/text-guard.test.ts checks), so a command concatenated by hand
 * does not typecheck.
 */
export type CommandLine = string & { readonly [built]: true };

/** A command line built from its arguments, each quoted: never concatenated by hand. */
export function shellCommand(args: readonly string[]): CommandLine {
  return args.map(shellQuote).join(" ") as CommandLine;
}

/** Commands run in order, each only when the one before succeeded: `a && b`. */
export function commandSequence(...commands: readonly CommandLine[]): CommandLine {
  return commands.join(" && ") as CommandLine;
}

/**
 * Text every POSIX-ish interactive shell (sh, bash, zsh, fish) reads as the
 * same plain words: letters, digits, single spaces and `-_./=:,@+`. Anything
 * else (braces, globs, `!`, `[[`, `~`, `$`, `%` job specs, quotes, tabs) can
 * mean something else outside `sh -c`.
 */
const SAME_IN_EVERY_SHELL = /^[A-Za-z0-9 _./=:,@+-]+$/;

/** The variables berth set for a command, and the ones it removed from the caller's. */
export interface CommandEnvironment {
  set: Readonly<Record<string, string>>;
  unset: readonly string[];
}

/**
 * A shell command the user wrote (a check in berth.toml), as a line that runs
 * it the way berth did, with `sh -c`: pasted into bash or zsh, brace
 * expansion, globbing or `[[` would otherwise change what it does. Only text
 * every shell reads the same is left bare (a word starting with "=" is zsh's
 * command-path expansion, so it is wrapped too). With `env`, the line sets
 * (and removes) what berth did for it: `env -u X BERTH_ID=… sh -c '…'` (always
 * `sh -c` then: `env` cannot run a builtin such as `exit` or `cd`).
 */
export function userShellCommand(text: string, env?: CommandEnvironment): CommandLine {
  const removed = (env?.unset ?? []).flatMap((name) => ["-u", name]);
  const assigned = Object.entries(env?.set ?? {}).map(([name, value]) => `${name}=${value}`);
  if (removed.length > 0 || assigned.length > 0) {
    return shellCommand(["env", ...removed, ...assigned, "sh", "-c", text]);
  }
  if (SAME_IN_EVERY_SHELL.test(text) && !/(^| )=/.test(text)) return text as CommandLine;
  return shellCommand(["sh", "-c", text]);
}

/**
 * The command with `berth accept <from>` (or `berth queue withdraw <from>`)
 * naming berth `to` instead (an integration berth's refusal, retold for the
 * berth it integrated). Both ids must be words the shell takes as they are,
 * as berth ids are, so the quoting of the rest is unchanged; otherwise the
 * command is returned as it was.
 */
export function namingInstead(command: CommandLine, from: string, to: string): CommandLine {
  const plain = /^[A-Za-z0-9._-]+$/;
  if (!plain.test(from) || !plain.test(to)) return command;
  return ["berth accept", "berth queue withdraw"].reduce(
    (text, verb) => text.replaceAll(`${verb} ${from}`, `${verb} ${to}`),
    command as string,
  ) as CommandLine;
}

/** Human output shortens commit ids to 8 hex digits; JSON always carries all 40. */
export function shortOid(oid: string | null | undefined): string {
  return oid ? oid.slice(0, 8) : "-";
}

const CHUNKS = /(\d+)|(\D+)/g;

/**
 * Natural order: runs of digits compare as numbers, everything else by code
 * unit, so `bulk-2` sorts before `bulk-10`. Deterministic (no locale): the
 * same fleet lists the same way on every machine. Ties fall back to plain order.
 */
export function naturalCompare(a: string, b: string): number {
  const left = a.match(CHUNKS) ?? [];
  const right = b.match(CHUNKS) ?? [];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const x = left[i] as string;
    const y = right[i] as string;
    if (x === y) continue;
    const xDigits = /^\d/.test(x);
    const yDigits = /^\d/.test(y);
    if (xDigits && yDigits) {
      const byValue = compareDigits(x, y);
      if (byValue !== 0) return byValue;
      continue;
    }
    return x < y ? -1 : 1;
  }
  if (left.length !== right.length) return left.length - right.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Two runs of digits by value, without a number's precision limit ("007" equals "7" here). */
function compareDigits(x: string, y: string): number {
  const a = x.replace(/^0+(?=\d)/, "");
  const b = y.replace(/^0+(?=\d)/, "");
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** 12345 → "12,345" (no locale data: ICU costs tens of milliseconds to load). */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** C0, DEL and C1: characters a terminal acts on (ESC starts color and cursor sequences). */
function isControl(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** A control character as a person reads it back: `\x1b`. */
function escapeControl(char: string): string {
  return `\\x${(char.codePointAt(0) ?? 0).toString(16).padStart(2, "0")}`;
}

/** Each distinct control character in `text`, escaped (`\x1b`), in order of appearance. */
export function controlCharacters(text: string): string[] {
  return [...new Set(Array.from(text).filter(isControl).map(escapeControl))];
}

/**
 * Text a person or an agent wrote (a brief, a commit subject, a file name),
 * for a terminal view: control characters are shown as escapes, so printing
 * it cannot recolor or wipe the screen, or rewrite a confirmation's lines.
 * Newlines and tabs are a brief's layout and stay; on a one-line field
 * (`layout` false: a file name) they are escaped too.
 */
export function visibleControls(text: string, layout = true): string {
  return Array.from(text, (char) =>
    (!layout || (char !== "\n" && char !== "\t")) && isControl(char) ? escapeControl(char) : char,
  ).join("");
}
