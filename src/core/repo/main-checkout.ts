import type { WorktreeEntry } from "../../git/parse.js";

/**
 * The one place the main checkout is decided (docs/decisions/0001): the
 * checkout berth.toml is read from, that is never removed and whose files
 * follow the trunk when accept moves it. In `git worktree list` order:
 * 1. the first entry, when it is a checkout (every repository with a working tree);
 * 2. in a bare repository, whose first entry is the bare folder itself, the
 *    worktree that has the bare repository's HEAD branch (its default branch,
 *    what a bare clone took from origin) checked out;
 * 3. otherwise none: berth refuses (openRepository says how to make one).
 */
export function findMainCheckout(
  entries: readonly WorktreeEntry[],
  bareHeadBranch: string | null,
): WorktreeEntry | null {
  const first = entries[0];
  if (first === undefined) return null;
  if (!first.bare) return first;
  if (bareHeadBranch === null) return null;
  return entries.find((e) => !e.bare && !e.prunable && e.branch === bareHeadBranch) ?? null;
}

/** What tells the main checkout apart once openRepository found it. */
export interface MainCheckoutPlace {
  mainPath: string;
  /** Set when the fleet hangs off a bare repository (rule 2 above). */
  bareDir: string | null;
}

/**
 * Which of `entries` (in `git worktree list` order, bare entries kept or
 * dropped) is the main checkout: the first, unless the fleet hangs off a bare
 * repository; then the entry at `mainPath` (both paths come from `git
 * worktree list`, spelled alike). -1 for none.
 */
export function mainCheckoutIndex(
  entries: readonly WorktreeEntry[],
  place: MainCheckoutPlace,
): number {
  if (place.bareDir === null) return entries.length > 0 ? 0 : -1;
  return entries.findIndex((e) => !e.bare && e.path === place.mainPath);
}
