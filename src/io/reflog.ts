import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { isObjectId } from "../git/object-id.js";

/**
 * Git's own activity traces of one worktree, read from files (no git
 * process): the newest entry of `<admin-dir>/logs/HEAD` and the admin dir's
 * last change (git renames HEAD, index and friends into it on every commit,
 * checkout, reset or add). The reads are synchronous: a survey makes them for
 * every worktree, and the promise API costs ten times the CPU per file.
 */

const TAIL_BYTES = 4096;
const MAX_TAIL_BYTES = 256 * 1024;

/** The time of the newest HEAD reflog entry, or null (no reflog, unreadable, unparsable). */
export async function readNewestReflogTime(adminDir: string): Promise<Date | null> {
  let line: string | null;
  try {
    line = readLastLine(join(adminDir, "logs", "HEAD"));
  } catch {
    return null;
  }
  return line === null ? null : parseReflogLineTime(line);
}

/**
 * The commit the newest HEAD reflog entry moved HEAD to, or null. Where a
 * checkout's branch was deleted under it, HEAD is unborn and git itself no
 * longer resolves `HEAD@{0}`; this line is where its last commit is named.
 */
export function readNewestReflogCommit(adminDir: string): string | null {
  let line: string | null;
  try {
    line = readLastLine(join(adminDir, "logs", "HEAD"));
  } catch {
    return null;
  }
  const to = line?.split(" ")[1] ?? "";
  return isObjectId(to) && !/^0+$/.test(to) ? to : null;
}

/** The admin dir's modification time, or null when it cannot be read. */
export async function readAdminDirChange(adminDir: string): Promise<Date | null> {
  try {
    return statSync(adminDir).mtime;
  } catch {
    return null;
  }
}

/**
 * A reflog line: `<old> <new> <name> <<email>> <epoch> <tz>\t<message>`.
 * Returns the entry's time, or null when the line is not one.
 */
export function parseReflogLineTime(line: string): Date | null {
  const tab = line.indexOf("\t");
  const head = tab === -1 ? line : line.slice(0, tab);
  const match = /> (\d+) [+-]\d{4}$/.exec(head.trimEnd());
  if (!match) return null;
  const seconds = Number(match[1]);
  return Number.isSafeInteger(seconds) ? new Date(seconds * 1000) : null;
}

/** The last non-empty line of a file, reading only its tail. */
function readLastLine(file: string): string | null {
  const fd = openSync(file, "r");
  try {
    const { size } = fstatSync(fd);
    let want = Math.min(size, TAIL_BYTES);
    for (;;) {
      const buffer = Buffer.alloc(want);
      const bytesRead = readSync(fd, buffer, 0, want, size - want);
      const text = buffer.subarray(0, bytesRead).toString("utf8").replace(/\n+$/, "");
      const newline = text.lastIndexOf("\n");
      // A whole line is in hand when a newline precedes it or the file starts there.
      if (newline !== -1 || want === size) {
        const line = text.slice(newline + 1);
        return line === "" ? null : line;
      }
      if (want >= MAX_TAIL_BYTES) return null;
      want = Math.min(size, want * 8);
    }
  } finally {
    closeSync(fd);
  }
}
