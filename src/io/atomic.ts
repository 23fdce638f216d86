import { readFileSync } from "node:fs";
import { link, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { lazyCrypto } from "../lazy-crypto.js";

/**
 * The one place berth writes a state file (ledger entries, markers, receipts,
 * landing records, the lock). Every write follows the same steps:
 * 1. write the whole content to a temp file beside the target;
 * 2. fsync the temp file, so its bytes are on disk before any name points at them;
 * 3. put it in place: rename over the target (replace), or hard-link it to a
 *    name that must not exist yet (create);
 * 4. fsync the folder, so the new name survives a power loss too.
 * A reader (and a machine that lost power) sees the old file or the new one, never half.
 */

/** Writes `path` whole, replacing what was there (text as UTF-8; bytes as they are). */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  const temp = await writeSyncedTemp(path, content);
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncFolder(dirname(path));
}

/**
 * Creates `path` whole, only if nothing is there yet (an EEXIST error says
 * something was): the compare-and-swap against absence that ledger entries
 * and the lock need.
 */
export async function createFileAtomic(path: string, content: string): Promise<void> {
  const temp = await writeSyncedTemp(path, content);
  try {
    await link(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
  await syncFolder(dirname(path));
}

async function writeSyncedTemp(path: string, content: string | Uint8Array): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${lazyCrypto().randomBytes(4).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx");
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return temp;
}

/** fsync of a folder makes the names in it durable; a filesystem that cannot sync folders is left as it is. */
async function syncFolder(folder: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(folder, "r");
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "ENOTSUP" && code !== "EISDIR" && code !== "EPERM") {
      throw error;
    }
  } finally {
    await handle?.close();
  }
}

export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Parsed JSON, null when the file does not exist, `undefined` when it is not valid JSON. */
export async function readJsonFile(path: string): Promise<unknown | null | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return parseOrUndefined(text);
}

/**
 * readJsonFile for the small per-worktree files a fleet survey reads (ready
 * markers, receipts): a synchronous read costs a tenth of the CPU of a
 * promise-based one, and at hundreds of worktrees that CPU competes with the
 * git processes the survey waits on.
 */
export function readJsonFileSync(path: string): unknown | null | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return parseOrUndefined(text);
}

function parseOrUndefined(text: string): unknown | undefined {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
