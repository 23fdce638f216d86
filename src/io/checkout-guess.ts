import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { readGitFileSync } from "./admin-dirs.js";

/**
 * Where git's own discovery will find the repository from a folder, read
 * from the files alone: the nearest `.git` up the tree, as git looks for it.
 * A guess, made only to start read-only work (the fleet's statuses) before
 * rev-parse answers; its user checks it against rev-parse's answer and drops
 * what it started when the two differ (core/fleet/early-statuses.ts).
 */
export interface CheckoutGuess {
  /** The folder holding the `.git` that was found. */
  toplevel: string;
  /** The common dir it leads to (real path). */
  commonDir: string;
  /** A linked worktree's `.git` file, not the main checkout's folder. */
  linked: boolean;
}

/** Variables that move git's discovery elsewhere: with any of them set, no guess is made. */
const DISCOVERY_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

export function guessCheckout(
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): CheckoutGuess | null {
  if (DISCOVERY_VARIABLES.some((name) => env[name] !== undefined)) return null;
  try {
    for (let dir = realpathSync.native(cwd); ; dir = dirname(dir)) {
      // Inside a git dir git finds that dir, with no checkout: not a case worth starting for.
      if (basename(dir) === ".git") return null;
      const dotGit = join(dir, ".git");
      const found = statSync(dotGit, { throwIfNoEntry: false });
      if (found?.isDirectory()) {
        // A common dir has no `commondir` file of its own; anything else is not the usual layout.
        if (statSync(join(dotGit, "commondir"), { throwIfNoEntry: false })) return null;
        return { toplevel: dir, commonDir: realpathSync.native(dotGit), linked: false };
      }
      if (found?.isFile()) return linkedCheckout(dir);
      if (dirname(dir) === dir) return null;
    }
  } catch {
    return null;
  }
}

/** A `.git` file: `gitdir: <admin dir>`, whose `commondir` names the common dir. */
function linkedCheckout(dir: string): CheckoutGuess | null {
  const target = readGitFileSync(dir);
  if (target === null) return null;
  const adminDir = resolve(dir, target);
  const common = readFileSync(join(adminDir, "commondir"), "utf8").trim();
  return { toplevel: dir, commonDir: realpathSync.native(resolve(adminDir, common)), linked: true };
}
