import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/** Writes a temp file beside `path` and renames it over: readers see old or new, never half. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temp, content, { flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
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
