/**
 * The one home of two text rules every layer prints with: how a command is
 * quoted for a shell (spec invariant 10: pasting or executing a printed command
 * runs exactly that command) and how a commit id is shortened for people.
 */

/** Characters a POSIX shell (and zsh) never treats specially inside a word. */
const SHELL_SAFE = /^[A-Za-z0-9_./@%+=:,-]+$/;

/** One argument, quoted so that `sh` reads it back as exactly `text`. */
export function shellQuote(text: string): string {
  // A leading "=" is zsh's command-path expansion: quote it.
  if (SHELL_SAFE.test(text) && !text.startsWith("=")) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A command line built from its arguments, each quoted: never concatenated by hand. */
export function shellCommand(args: readonly string[]): string {
  return args.map(shellQuote).join(" ");
}

/** Human output shortens commit ids to 8 hex digits; JSON always carries all 40. */
export function shortOid(oid: string | null | undefined): string {
  return oid ? oid.slice(0, 8) : "-";
}

/** 12345 → "12,345" (no locale data: ICU costs tens of milliseconds to load). */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
