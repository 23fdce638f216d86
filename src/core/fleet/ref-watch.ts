import { dirname, join } from "node:path";
import { perBerthDir } from "../../io/paths.js";
import type { WatchedFolder } from "../../io/watch.js";

/**
 * Ref watching: the one place that knows where a repository's refs live as
 * files, so a waiter learns of a change from file events (src/io/watch.ts)
 * and can tell "nothing changed" from a few stat calls. await and the desk
 * feed both ask here. A branch's value lives in one of three places:
 *   1. a loose file under refs/heads, in its name's folder (a name with a
 *      slash lives deeper);
 *   2. a line of packed-refs (rewritten via packed-refs.lock, then renamed);
 *   3. the reftable backend's tables (listed in reftable/tables.list).
 * Besides refs, a waiter may watch worktree registrations (a berth made or
 * removed) and a berth's per-berth folder (its gate receipt, ready marker).
 */

export interface RefWatchScope {
  /** Any branch under this prefix: the folder its loose refs live in. */
  branchPrefix?: string;
  /** Branches whose loose ref's folder is watched (the trunk, an awaited branch). */
  branches?: readonly string[];
  /** `<common>/worktrees`: registrations added or removed. */
  registrations?: boolean;
  /** Admin dirs whose per-berth folder (gate receipt, ready marker) is watched, in this order. */
  berths?: readonly string[];
}

/** Where a change in the scope shows up as a file event; each folder once. */
export function refWatchFolders(commonDir: string, scope: RefWatchScope): WatchedFolder[] {
  const heads = join(commonDir, "refs", "heads");
  const folders: WatchedFolder[] = [{ path: heads }];
  if (scope.branchPrefix !== undefined) {
    folders.push({ path: dirname(join(heads, `${scope.branchPrefix}x`)) });
  }
  for (const branch of scope.branches ?? []) folders.push({ path: dirname(join(heads, branch)) });
  folders.push(
    { path: commonDir, accepts: (name) => name.startsWith("packed-refs") },
    { path: join(commonDir, "reftable") },
  );
  if (scope.registrations === true) folders.push({ path: join(commonDir, "worktrees") });
  for (const adminDir of scope.berths ?? []) folders.push({ path: perBerthDir(adminDir) });
  const seen = new Set<string>();
  return folders.filter((f) => !seen.has(f.path) && seen.add(f.path));
}

/**
 * Every file the branches' values can be read from. Their fingerprint
 * (io/watch.ts `fileFingerprint`) changes whenever one of the refs moves, so
 * an unchanged fingerprint means unchanged values.
 */
export function refFiles(commonDir: string, branches: readonly string[]): string[] {
  return [
    ...branches.map((branch) => join(commonDir, "refs", "heads", branch)),
    join(commonDir, "packed-refs"),
    join(commonDir, "reftable", "tables.list"),
  ];
}
