import { readlinkSync } from "node:fs";
import { join } from "node:path";
import { entryKindAt } from "../io/fs.js";
import { lazyCrypto } from "../lazy-crypto.js";
import { type CommandLine, commandSequence, shellCommand } from "../text.js";
import { parseStatusPorcelainV2 } from "./parse.js";
import { type GitRunner, runGit } from "./run.js";
import { STATUS_ARGS } from "./status.js";

/**
 * Hidden changes: the one place berth finds edits in tracked files git is
 * told not to look at (`update-index --assume-unchanged` or `--skip-worktree`).
 * `git status` skips such files, so a checkout it calls clean may still hold
 * work a teardown would destroy, or contents a gate would prove that its
 * commit does not hold. In order:
 *   1. `git ls-files -v -s -z` (one cheap index read, no file is opened):
 *      the flagged stage-0 entries, each with its index blob;
 *   2. a flagged skip-worktree entry absent from disk is sparse checkout,
 *      not an edit; an absent assume-unchanged one, or a different kind of
 *      thing where one is tracked, is a change;
 *   3. a flagged symlink: its target, hashed as git hashes a link's blob, is
 *      compared with the index blob (no process);
 *   4. a flagged submodule (gitlink): git status skips it whole, edits inside
 *      included, so a populated one is read by its own `git status`, one
 *      process each (they are rare): a moved HEAD or any change is a change;
 *   5. only when files remain: one `git hash-object --stdin-paths`, which
 *      runs each file through the checkout's filters (eol, clean) as `git add`
 *      would, compared with its index blob, so a flagged unedited file is
 *      no change (a link checked out as a file, under core.symlinks=false,
 *      is hashed the same way).
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

/** Regular files (plain and executable). */
const REGULAR = new Set(["100644", "100755"]);
const SYMLINK = "120000";
const GITLINK = "160000";

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
  const submodules: FlaggedEntry[] = [];
  for (const entry of flagged) {
    const at = join(top, entry.path);
    const kind = entryKindAt(at);
    if (kind === "absent" && entry.skipWorktree) continue;
    if (entry.mode === GITLINK && kind === "folder") {
      submodules.push(entry);
    } else if (kind === "file" && (REGULAR.has(entry.mode) || entry.mode === SYMLINK)) {
      toHash.push(entry);
    } else if (kind === "symlink" && entry.mode === SYMLINK) {
      if (linkBlobId(at, entry.oid) !== entry.oid) changed.add(entry);
    } else {
      changed.add(entry);
    }
  }
  const moved = await Promise.all(submodules.map((entry) => submoduleDiffers(top, entry, run)));
  submodules.forEach((entry, i) => {
    if (moved[i]) changed.add(entry);
  });
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
 * The blob id git gives a symlink: the hash of its target's bytes, with the
 * object format of the index oid it is compared with (SHA-1 or SHA-256).
 */
function linkBlobId(path: string, indexOid: string): string | null {
  let target: Buffer;
  try {
    target = readlinkSync(path, { encoding: "buffer" });
  } catch {
    return null;
  }
  const hash = lazyCrypto().createHash(indexOid.length === 64 ? "sha256" : "sha1");
  return hash.update(`blob ${target.length}\0`).update(target).digest("hex");
}

/**
 * Whether a flagged, present submodule holds anything its gitlink does not:
 * a HEAD other than the recorded commit, or any change inside (untracked
 * files too, as berth's own status counts them). An unpopulated one (no
 * `.git` inside) holds nothing; one git cannot read counts as changed.
 */
async function submoduleDiffers(
  top: string,
  entry: FlaggedEntry,
  run: GitRunner,
): Promise<boolean> {
  const path = join(top, entry.path);
  if (entryKindAt(join(path, ".git")) === "absent") return false;
  try {
    const { stdout } = await run([...STATUS_ARGS, "--branch"], { cwd: path });
    const oidHeader = "# branch.oid ";
    const head = stdout
      .split("\0")
      .find((record) => record.startsWith(oidHeader))
      ?.slice(oidHeader.length);
    return head !== entry.oid || parseStatusPorcelainV2(stdout).changedFiles > 0;
  } catch {
    return true;
  }
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
