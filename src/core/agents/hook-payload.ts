import { isAbsolute } from "node:path";
import { UserError } from "../../errors.js";

/**
 * The one place a harness hook's stdin JSON is read (spec section 12). Claude
 * Code sends `WorktreeCreate` with the worktree's name (`worktree_name` in its
 * documentation, `name` in some versions: both are accepted, `worktree_name`
 * first), `WorktreeRemove` with `worktree_path`, and every event with `cwd`,
 * the project folder the session runs in. Other fields (`session_id`,
 * `transcript_path`, `hook_event_name`, `source`, ...) are ignored.
 */

export interface HookPayload {
  /** The folder the harness runs in: berth finds the repository from here. null: berth's own cwd. */
  cwd: string | null;
  /** The worktree name (create). null: none given; berth picks a random id. */
  name: string | null;
  /** The worktree to remove (remove). */
  worktreePath: string | null;
}

/** Parses the payload text; an empty stdin is an empty payload, null one too large to read. */
export function parseHookPayload(text: string | null): HookPayload {
  if (text === null) throw payloadError("stdin is larger than 1 MiB, which no hook payload is");
  if (text.trim() === "") return { cwd: null, name: null, worktreePath: null };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw payloadError("stdin is not JSON");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw payloadError("stdin is not a JSON object");
  }
  const r = raw as Record<string, unknown>;
  return {
    cwd: absolutePath(r.cwd, "cwd"),
    name: nonEmptyString(r.worktree_name, "worktree_name") ?? nonEmptyString(r.name, "name"),
    worktreePath: absolutePath(r.worktree_path, "worktree_path"),
  };
}

function nonEmptyString(value: unknown, key: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw payloadError(`"${key}" is not a string`);
  return value.trim() === "" ? null : value;
}

function absolutePath(value: unknown, key: string): string | null {
  const text = nonEmptyString(value, key);
  if (text === null) return null;
  if (!isAbsolute(text)) throw payloadError(`"${key}" is not an absolute path: ${text}`);
  return text;
}

/** The refusal names the hook itself ("berth hook <event>: ..."): the message is only why. */
function payloadError(why: string): UserError {
  return new UserError("usage", `${why}; nothing changed.`);
}
