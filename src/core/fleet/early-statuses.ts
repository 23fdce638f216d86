import type { StatusSummary } from "../../git/parse.js";
import { mainCheckoutOf } from "../../git/repo.js";
import { readStatusesByPath } from "../../git/status.js";
import { readAdminKeys } from "../../io/admin-dirs.js";
import { guessCheckout } from "../../io/checkout-guess.js";
import { DEFAULT_POOL_SIZE } from "./pool.js";

/**
 * The fleet's `git status` lanes, started before discovery has answered.
 * A status of the fleet spends nearly all its time in them, and everything
 * they need is in files: the common dir that the nearest `.git` leads to,
 * and the checkouts that its `worktrees/*\/gitdir` files name
 * (io/checkout-guess.ts). So a plain `berth status` starts them with its
 * first reads (status-reads.ts), ~20 ms before the survey could.
 *
 * The guess is checked, never trusted: the survey takes these statuses only
 * when rev-parse names the same common dir, keys them by path as git's
 * worktree list names them, and reads itself whatever is missing; a wrong
 * guess costs only the read-only work it started. Each status is still read
 * fresh by this run (decision 0014).
 */
export interface EarlyStatuses {
  /** The common dir the paths were read from (real path). */
  commonDir: string;
  /** What readAdminKeys read there: checkout path → admin key. */
  adminKeys: Map<string, string>;
  /** Each path's status (null where git could not read it), once all are in. */
  statuses: Promise<[string, StatusSummary | null][]>;
  /** Tells `onStatus` each status as it arrives, those already in first. */
  listen(onStatus: (path: string, status: StatusSummary | null) => void): void;
}

/**
 * Starts the statuses of every checkout but the one berth runs in (which
 * status reads itself), when the run will want the fleet's: from the main
 * checkout, or anywhere with `--all` (status.ts decides the same from
 * discovery). Null when no guess can be made or the fleet is not wanted.
 */
export function startEarlyStatuses(
  cwd: string,
  scope: { all?: boolean; local?: boolean },
): EarlyStatuses | null {
  const guess = guessCheckout(cwd);
  if (guess === null) return null;
  if (!(scope.all === true || (scope.local !== true && !guess.linked))) return null;
  const adminKeys = readAdminKeys(guess.commonDir);
  const paths = [mainCheckoutOf(guess.commonDir), ...adminKeys.keys()].filter(
    (path) => path !== guess.toplevel,
  );
  const arrived: [string, StatusSummary | null][] = [];
  let listener: ((path: string, status: StatusSummary | null) => void) | undefined;
  const statuses = readStatusesByPath(paths, DEFAULT_POOL_SIZE, (path, status) => {
    arrived.push([path, status]);
    listener?.(path, status);
  });
  // Awaited by the survey, if it takes them; handled now so that a failure is not unhandled meanwhile.
  void statuses.catch(() => undefined);
  return {
    commonDir: guess.commonDir,
    adminKeys,
    statuses,
    listen: (onStatus) => {
      for (const [path, status] of arrived) onStatus(path, status);
      listener = onStatus;
    },
  };
}
