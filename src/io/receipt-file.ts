import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { UserError } from "../errors.js";
import { commandSequence, shellCommand } from "../text.js";

import { readJsonFileSync, writeJsonAtomic } from "./atomic.js";
import { perBerthDir } from "./paths.js";

/**
 * The gate receipt (spec section 5): proof that the declared checks passed on
 * one commit and tree. It lives in the worktree's git admin dir, so it dies
 * with the checkout (ADR 0225).
 */

export interface ReceiptCheck {
  name: string;
  command: string;
  ok: boolean;
  duration_ms: number;
}

/** Written by this berth: version 2 records the gate definition it proved. */
export interface Receipt {
  version: 2;
  commit: string;
  tree: string;
  branch: string;
  trunk: string;
  trunk_tip: string;
  /** Digest of the gate definition that ran (src/core/landing/gate-definition.ts). */
  gate_digest: string;
  /** Empty when no checks are declared: the receipt then proves a clean tree and nothing more. */
  checks: ReceiptCheck[];
  created_at: string;
}

/**
 * A receipt as read. A version-1 receipt (written before receipts recorded
 * their gate) reads with `gate_digest: null`: it is shown, and never honored.
 */
export type StoredReceipt = Receipt | (Omit<Receipt, "version" | "gate_digest"> & LegacyFields);

interface LegacyFields {
  version: 1;
  gate_digest: null;
}

const CheckSchema = v.object({
  name: v.string(),
  command: v.string(),
  ok: v.boolean(),
  duration_ms: v.number(),
});

const COMMON_FIELDS = {
  commit: v.string(),
  tree: v.string(),
  branch: v.string(),
  trunk: v.string(),
  trunk_tip: v.string(),
  checks: v.array(CheckSchema),
  created_at: v.string(),
};

const ReceiptSchema = v.variant("version", [
  v.object({ version: v.literal(2), gate_digest: v.string(), ...COMMON_FIELDS }),
  v.object({ version: v.literal(1), ...COMMON_FIELDS }),
]);

/** `<per-berth>/receipt.json` for the worktree whose git admin dir is `adminDir`. */
export function receiptPath(adminDir: string): string {
  return join(perBerthDir(adminDir), "receipt.json");
}

/** Temp file + rename: a reader sees the old receipt or the new one, never half of one. */
export async function writeReceipt(adminDir: string, receipt: Receipt): Promise<void> {
  const path = receiptPath(adminDir);
  try {
    await writeJsonAtomic(path, receipt);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
    // Something that is not a file sits where the receipt goes: berth will not remove it on a guess.
    throw new UserError(
      "precondition_failed",
      `The gate passed, but ${path} is a folder, not a receipt file, so no receipt was written.`,
      {
        next: commandSequence(shellCommand(["rm", "-r", path]), shellCommand(["berth", "gate"])),
        nothingChanged: true,
      },
    );
  }
}

/**
 * The receipt, or null when there is none. A file that is unreadable, not
 * JSON, or not a version-1 or version-2 receipt with every field reads as
 * none: it proves nothing.
 */
export async function readReceipt(adminDir: string): Promise<StoredReceipt | null> {
  return readReceiptSync(adminDir);
}

/** Synchronous: status reads one per worktree (see readJsonFileSync). */
export function readReceiptSync(adminDir: string): StoredReceipt | null {
  const path = receiptPath(adminDir);
  // Most berths have no receipt: asking costs a fifth of a failed read and its error.
  if (!existsSync(path)) return null;
  let raw: unknown;
  try {
    raw = readJsonFileSync(path);
  } catch {
    return null;
  }
  if (raw === null) return null;
  const parsed = v.safeParse(ReceiptSchema, raw);
  if (!parsed.success) return null;
  const receipt = parsed.output;
  return receipt.version === 2 ? receipt : { ...receipt, gate_digest: null };
}

/** Removes the receipt; true when there was a file to remove. */
export async function deleteReceipt(adminDir: string): Promise<boolean> {
  const path = receiptPath(adminDir);
  try {
    await rm(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return false;
    // A folder is no receipt (readReceipt reads none there): nothing to fail closed on.
    if (code === "ERR_FS_EISDIR" || code === "EISDIR") return false;
    throw error;
  }
}
