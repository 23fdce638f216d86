import type { ResultError } from "../result.js";
import { visibleControls } from "../text.js";
import type { Colors } from "./style.js";

/**
 * A refusal for a person: what is wrong, whether anything changed, what to
 * run next. The message quotes what git and people wrote (file names, commit
 * subjects), so its control characters are shown as escapes.
 */
export function renderRefusal(
  verb: string,
  error: ResultError,
  nothingChanged: boolean,
  c: Colors,
): string {
  const lines = [`${c.red(`berth ${verb}:`)} ${visibleControls(error.message)}`];
  if (nothingChanged && !/nothing changed/i.test(error.message)) lines.push("Nothing changed.");
  if (error.next) lines.push(`next: ${c.bold(error.next)}`);
  return `${lines.join("\n")}\n`;
}
