import { closeSync, openSync, readSync, statSync } from "node:fs";

/**
 * What a checkout's index file says without parsing it: how many entries it
 * holds (its header: "DIRC", version, entry count) and when it was written.
 * null when it is missing or not an index.
 */
export function readIndexHeader(indexPath: string): { entries: number; writtenMs: number } | null {
  let fd: number | null = null;
  try {
    fd = openSync(indexPath, "r");
    const header = Buffer.alloc(12);
    if (readSync(fd, header, 0, 12, 0) !== 12 || header.toString("latin1", 0, 4) !== "DIRC") {
      return null;
    }
    return { entries: header.readUInt32BE(8), writtenMs: statSync(indexPath).mtimeMs };
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
