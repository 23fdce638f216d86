import { join } from "node:path";
import { entryKindAt } from "../io/fs.js";
import { type CommandLine, commandSequence, shellCommand } from "../text.js";
import { type GitRunner, runGit } from "./run.js";

/**
 * Hidden changes: the one place berth finds edits in tracked files git is
 * told not to look at (`update-index --assume-unchanged` or `--skip-worktree`).
 * `git status` skips such files, so a checkout it calls clean may still hold
 * work a teardown would destroy, or contents a gate would prove that its
 * commit does not hold. In order:
 *   1. `git ls-files -v -s -z` (one cheap index read, no file is opened):
 *      the flagged stage-0 entries, each with its index blob;
 *   2. a flagged skip-worktree file absent from disk is sparse checkout, not
 *      an edit; an absent assume-unchanged file, or anything but a regular
 *      file where one is tracked, is a change;
 *   3. only when files remain: one `git hash-object --stdin-paths`, which
 *      runs each file through the checkout's filters (eol, clean) as `git add`
 *      would, compared with its index blob, so a flagged unedited file is
 *      no change.
 * Not for the fleet survey (`berth status`): it costs a process per checkout.
 */

export interface HiddenChange {
  /** Relative to the checkout's top folder. */
  path: string;
  assumeUnchanged: boolean;
  skipWorktree: boolean;
}

export interface FlaggedEntry extends HiddenChange {
  mode: string;
  oid: string;
}

/** Regular files (plain and executable): symlinks and submodules are compared by other means, or not at all. */
const REGULAR = new Set(["100644", "100755"]);

/**
 * Parses `git ls-files -v -s -z` (`<tag> <mode> <oid> <stage>\t<path>`): a
 * lowercase tag is assume-unchanged, `S`/`s` skip-worktree. Unmerged entries
 * (stage > 0) are left to `git status`, which shows them.
 */
export function parseIndexFlags(stdout: string): FlaggedEntry[] {
  const entries: FlaggedEntry[] = [];
  for (const record of stdout.split("\0")) {
    const tab = record.indexOf("\t");
    if (tab === -1) continue;
    const [tag = "", mode = "", oid = "", stage = ""] = record.slice(0, tab).split(" ");
    const assumeUnchanged = tag !== tag.toUpperCase();
    const skipWorktree = tag.toUpperCase() === "S";
    if (stage !== "0" || !(assumeUnchanged || skipWorktree)) continue;
    entries.push({ path: record.slice(tab + 1), mode, oid, assumeUnchanged, skipWorktree });
  }
  return entries;
}

/** Flagged files in the checkout at `top` (its top folder) whose content differs from the index. */
export async function readHiddenChanges(
  top: string,
  run: GitRunner = runGit,
): Promise<HiddenChange[]> {
  const { stdout } = await run(["ls-files", "-v", "-s", "-z"], { cwd: top });
  const flagged = parseIndexFlags(stdout);
  const changed = new Set<FlaggedEntry>();
  const toHash: FlaggedEntry[] = [];
  for (const entry of flagged) {
    if (!REGULAR.has(entry.mode)) continue;
    const kind = entryKindAt(join(top, entry.path));
    if (kind === "absent" && entry.skipWorktree) continue;
    if (kind === "file") toHash.push(entry);
    else changed.add(entry);
  }
  if (toHash.length > 0) {
    const input = toHash.map((e) => `${stdinPath(e.path)}\n`).join("");
    const hashed = (await run(["hash-object", "--stdin-paths"], { cwd: top, input })).stdout
      .split("\n")
      .filter(Boolean);
    toHash.forEach((entry, i) => {
      if (hashed[i] !== entry.oid) changed.add(entry);
    });
  }
  // In the index's order, as git lists them.
  return flagged
    .filter((entry) => changed.has(entry))
    .map(({ path, assumeUnchanged, skipWorktree }) => ({ path, assumeUnchanged, skipWorktree }));
}

/**
 * A path as `--stdin-paths` reads it back: it splits lines (dropping a CR
 * before the LF) and unquotes a line that starts with `"`, so such paths go
 * C-quoted.
 */
function stdinPath(path: string): string {
  if (!/^"|\n|\r$/.test(path)) return path;
  const escaped = path.replace(/[\\"\n\r]/g, (c) =>
    c === "\n" ? "\\n" : c === "\r" ? "\\r" : `\\${c}`,
  );
  return `"${escaped}"`;
}

/** The files as a person reads them: each path with the flag that hides it, the first `max` named. */
export function describeHiddenChanges(changes: readonly HiddenChange[], max = 5): string {
  const named = changes.slice(0, max).map((change) => {
    const flags = [
      ...(change.assumeUnchanged ? ["assume-unchanged"] : []),
      ...(change.skipWorktree ? ["skip-worktree"] : []),
    ];
    return `${change.path} (${flags.join(", ")})`;
  });
  const more = changes.length > max ? ` and ${changes.length - max} more` : "";
  return `${named.join(", ")}${more}`;
}

/**
 * The command that lets `git status` see the files again: one update-index
 * per flag, as git applies only the last flag given to one call.
 */
export function revealCommand(top: string, changes: readonly HiddenChange[]): CommandLine {
  const clear = (flag: string, paths: string[]) =>
    paths.length === 0
      ? []
      : [shellCommand(["git", "-C", top, "update-index", flag, "--", ...paths])];
  return commandSequence(
    ...clear(
      "--no-assume-unchanged",
      changes.filter((c) => c.assumeUnchanged).map((c) => c.path),
    ),
    ...clear(
      "--no-skip-worktree",
      changes.filter((c) => c.skipWorktree).map((c) => c.path),
    ),
  );
}
