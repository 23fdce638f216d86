import { readdir, rmdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { naturalCompare } from "../text.js";
import { createFileAtomic, readJsonFile } from "./atomic.js";
import { sharedStateDir } from "./paths.js";

/**
 * The resource ledger (spec sections 2 and 7): one JSON file per resource at
 * `<common>/berth/ledger/<admin-key>/<resource>.json`, written before the
 * resource's create command runs and deleted only after its destroy command
 * succeeded. Each entry holds everything needed to destroy the resource after
 * the checkout is gone: the recorded `BERTH_*` environment and the command.
 */

export const LEDGER_VERSION = 1;

export interface LedgerEntry {
  version: number;
  admin_key: string;
  id: string;
  path: string;
  branch: string;
  resource: string;
  /** Every BERTH_* value the create command saw; destroy runs with exactly these. */
  env: Record<string, string>;
  /** The destroy command as declared when the resource was created. */
  destroy: string;
  gc: boolean;
  created_at: string;
  /** Position in creation order (0 = first); destroy runs in reverse. */
  order: number;
}

const EntrySchema = v.object({
  version: v.number(),
  admin_key: v.string(),
  id: v.string(),
  path: v.string(),
  branch: v.string(),
  resource: v.string(),
  env: v.record(v.string(), v.string()),
  destroy: v.string(),
  gc: v.boolean(),
  created_at: v.string(),
  order: v.optional(v.number(), 0),
});

/** A ledger file berth could not read: kept (never guessed at), and reported. */
export interface LedgerProblem {
  admin_key: string;
  file: string;
  reason: string;
}

export interface LedgerListing {
  /** In creation order. */
  entries: LedgerEntry[];
  problems: LedgerProblem[];
}

export function ledgerRoot(commonDir: string): string {
  return join(sharedStateDir(commonDir), "ledger");
}

export function ledgerDirFor(commonDir: string, adminKey: string): string {
  return join(ledgerRoot(commonDir), adminKey);
}

export function ledgerEntryPath(commonDir: string, adminKey: string, resource: string): string {
  return join(ledgerDirFor(commonDir, adminKey), `${resource}.json`);
}

/**
 * Records a resource that is about to be created. Never replaces an existing
 * entry (that would lose track of a live resource): the file is written whole
 * under a temporary name and hard-linked into place (io/atomic.ts), which
 * fails when the name is taken.
 */
export async function recordLedgerEntry(commonDir: string, entry: LedgerEntry): Promise<void> {
  const path = ledgerEntryPath(commonDir, entry.admin_key, entry.resource);
  try {
    await createFileAtomic(path, `${JSON.stringify(entry, null, 2)}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new LedgerConflictError(path);
    }
    throw error;
  }
}

export class LedgerConflictError extends Error {
  readonly file: string;
  constructor(file: string) {
    super(`the ledger already records a resource at ${file}`);
    this.name = "LedgerConflictError";
    this.file = file;
  }
}

/** Forgets a destroyed resource; removes the admin key's folder once it is empty. */
export async function forgetLedgerEntry(
  commonDir: string,
  adminKey: string,
  resource: string,
): Promise<void> {
  try {
    await unlink(ledgerEntryPath(commonDir, adminKey, resource));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await rmdir(ledgerDirFor(commonDir, adminKey)).catch(() => undefined);
}

/** The entries recorded under one admin key, in creation order. */
export async function readLedger(commonDir: string, adminKey: string): Promise<LedgerListing> {
  const dir = ledgerDirFor(commonDir, adminKey);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], problems: [] };
    throw error;
  }
  const entries: LedgerEntry[] = [];
  const problems: LedgerProblem[] = [];
  // Temporary files of an interrupted write are not entries.
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const file = join(dir, name);
    let raw: unknown;
    try {
      raw = await readJsonFile(file);
    } catch (error) {
      // A folder or an unreadable file where an entry should be: kept and reported, never guessed at.
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      problems.push({ admin_key: adminKey, file, reason: `cannot be read (${code})` });
      continue;
    }
    if (raw === null) continue; // deleted meanwhile
    const parsed = v.safeParse(EntrySchema, raw);
    if (parsed.success) entries.push(parsed.output);
    else {
      const reason = raw === undefined ? "not valid JSON" : "not a ledger entry";
      problems.push({ admin_key: adminKey, file, reason });
    }
  }
  entries.sort((a, b) => a.order - b.order || naturalCompare(a.created_at, b.created_at));
  return { entries, problems };
}

/** Every admin key the ledger holds entries for (the berth may be long gone). */
export async function readLedgerKeys(commonDir: string): Promise<string[]> {
  try {
    const names = await readdir(ledgerRoot(commonDir), { withFileTypes: true });
    return names
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** The whole ledger, by admin key; keys with no entry left are omitted. */
export async function readWholeLedger(commonDir: string): Promise<Map<string, LedgerListing>> {
  const all = new Map<string, LedgerListing>();
  for (const key of await readLedgerKeys(commonDir)) {
    const listing = await readLedger(commonDir, key);
    if (listing.entries.length > 0 || listing.problems.length > 0) all.set(key, listing);
  }
  return all;
}
