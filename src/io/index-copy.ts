import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Runs `fn` with a private copy of a git index file, so a check that has to
 * refresh an index (stat data) never writes the real one. The copy lives in
 * the system's temporary folder and is removed however `fn` ends.
 */
export async function withIndexCopy<T>(
  indexFile: string,
  fn: (copy: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "berth-index-"));
  const copy = join(dir, "index");
  try {
    await copyFile(indexFile, copy);
    return await fn(copy);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
