import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { isObjectId } from "../git/object-id.js";

/**
 * Maps each linked worktree's checkout path to its admin key (the folder git
 * chose under `<common>/worktrees/`). Reads git's own `gitdir` files, so it
 * works for registrations whose checkout folder is gone, without a process.
 * Synchronous reads: one small file per worktree, at a tenth of the CPU of
 * the promise API (the survey's git processes want that CPU).
 */
export function readAdminKeys(commonDir: string): Map<string, string> {
  const keys = new Map<string, string>();
  const root = join(commonDir, "worktrees");
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch {
    return keys;
  }
  for (const key of names) {
    try {
      const gitdir = readFileSync(join(root, key, "gitdir"), "utf8").trim();
      // Relative to the admin dir where git wrote it so (worktree.useRelativePaths, git 2.48).
      keys.set(dirname(resolve(root, key, gitdir)), key);
    } catch {
      // Not a worktree admin dir (or half-written by a concurrent add): skip it.
    }
  }
  return keys;
}

/** The admin dir a checkout's `.git` file points at, or null when it is not a linked worktree. */
export async function readGitFile(checkoutPath: string): Promise<string | null> {
  try {
    return gitFileTarget(await readFile(join(checkoutPath, ".git"), "utf8"));
  } catch {
    return null;
  }
}

/** readGitFile, read synchronously (io/checkout-guess.ts, before anything else runs). */
export function readGitFileSync(checkoutPath: string): string | null {
  try {
    return gitFileTarget(readFileSync(join(checkoutPath, ".git"), "utf8"));
  } catch {
    return null;
  }
}

function gitFileTarget(text: string): string | null {
  const match = /^gitdir: (.*)$/m.exec(text);
  return match?.[1]?.trim() ?? null;
}

/** What a git dir's HEAD file says: a symbolic ref, a detached commit, or null (absent, unreadable). */
export type HeadFile = { ref: string } | { oid: string } | null;

/** The HEAD file of a git dir (a worktree's admin dir), read as a file: no process. */
export function readHeadFile(gitDir: string): HeadFile {
  let text: string;
  try {
    text = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
  } catch {
    return null;
  }
  const symbolic = /^ref: (.+)$/.exec(text);
  if (symbolic?.[1] !== undefined) return { ref: symbolic[1].trim() };
  return isObjectId(text) ? { oid: text } : null;
}
