import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
} from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * Append-only JSON Lines kept as one file per UTC month (`YYYY-MM.jsonl`):
 * the logbook. Each line is appended with a single
 * `write()` on an `O_APPEND` descriptor, so concurrent writers never
 * interleave within a line and need no lock; only the newest months are kept.
 */

const MONTH_FILE = /^(\d{4})-(\d{2})\.jsonl$/;

/** `YYYY-MM.jsonl` for the UTC month of `date`. */
export function monthFileName(date: Date): string {
  return `${date.toISOString().slice(0, 7)}.jsonl`;
}

/** Appends one line (which must end in "\n") to its month's file; a new month prunes old ones. */
export function appendMonthLine(dir: string, at: Date, line: string, keepMonths: number): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, monthFileName(at));
  const isNewMonth = !existsSync(file);
  const fd = openSync(file, "a");
  try {
    // One write() per line: with O_APPEND the kernel places it whole at the end.
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
  if (isNewMonth) pruneOldMonths(dir, keepMonths);
}

/** Deletes all but the newest `keep` month files. */
export function pruneOldMonths(dir: string, keep: number): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const doomed = names
    .filter((name) => MONTH_FILE.test(name))
    .sort()
    .slice(0, -keep);
  for (const name of doomed) rmSync(join(dir, name), { force: true });
  return doomed;
}

/** The month files in `dir`, oldest first; none when the folder does not exist. */
export async function listMonthFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => MONTH_FILE.test(name)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** The file's bytes from `offset` to its current end, or null when it is gone. */
export async function readTextFrom(
  file: string,
  offset: number,
): Promise<{ text: string; end: number } | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size <= offset) return { text: "", end: offset };
    const buffer = Buffer.alloc(size - offset);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
    return { text: buffer.subarray(0, bytesRead).toString("utf8"), end: offset + bytesRead };
  } finally {
    await handle.close();
  }
}
