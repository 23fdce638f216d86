import { existsSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "./atomic.js";
import { queueDir } from "./queue-store.js";

/**
 * Standing grants (spec section 11, docs/decisions/0044): a `queue approve`
 * given while a berth has no open entry, "land when green". One file per
 * berth id under `<queue>/grants/`; the berth's next submission takes it up,
 * `queue withdraw` takes it back.
 */

export interface Grant {
  /** The berth id the grant is for. */
  id: string;
  /** When it was given (ISO time); null for a file berth did not write whole. */
  at: string | null;
}

function grantsDir(commonDir: string): string {
  return join(queueDir(commonDir), "grants");
}

function grantPath(commonDir: string, id: string): string {
  return join(grantsDir(commonDir), `${id}.json`);
}

export async function writeGrant(commonDir: string, grant: Grant): Promise<void> {
  await writeJsonAtomic(grantPath(commonDir, grant.id), grant);
}

/** Every standing grant, by berth id. */
export async function readGrants(commonDir: string): Promise<Grant[]> {
  const dir = grantsDir(commonDir);
  if (!existsSync(dir)) return [];
  const names = (await readdir(dir).catch(() => [])).filter((n) => n.endsWith(".json")).sort();
  return Promise.all(
    names.map(async (name) => {
      const id = name.slice(0, -".json".length);
      const text = await readFile(join(dir, name), "utf8").catch(() => "");
      let at: unknown = null;
      try {
        at = (JSON.parse(text) as { at?: unknown }).at;
      } catch {
        // Shown without a time: the file's name is the grant (takeGrant).
      }
      return { id, at: typeof at === "string" ? at : null };
    }),
  );
}

/** Whether `id` holds a standing grant (reads only). */
export function hasGrant(commonDir: string, id: string): boolean {
  return existsSync(grantPath(commonDir, id));
}

/** Removes the grant for `id`; true when there was one. */
export async function takeGrant(commonDir: string, id: string): Promise<boolean> {
  const path = grantPath(commonDir, id);
  if (!existsSync(path)) return false;
  await rm(path, { force: true });
  return true;
}
