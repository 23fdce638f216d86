import { adminDirFor } from "../../io/paths.js";
import { type FolderWatch, type WatchedFolder, watchFolders } from "../../io/watch.js";
import { refWatchFolders } from "../fleet/ref-watch.js";

/**
 * The desk feed: the one place that decides when the desk reads again
 * (spec section 8): a fresh reading on ref changes (file events in the
 * folders fleet/ref-watch.ts names, as for `berth await`) and every few
 * seconds regardless. Readings never overlap: a change during one reading
 * makes exactly one more after it. The watched folders follow the fleet (a
 * new berth's per-berth folder is watched once a reading has seen it).
 */

export const DESK_POLL_MS = 3_000;
export const DESK_DEBOUNCE_MS = 150;

export interface DeskFeedOptions<S> {
  read(): Promise<S>;
  /** The folders whose changes should trigger a reading, given the last one. */
  folders(snapshot: S): WatchedFolder[];
  onSnapshot(snapshot: S): void;
  onError(error: unknown): void;
  pollMs?: number;
  debounceMs?: number;
}

export interface DeskFeed {
  /** Reads now (or once more right after the reading in progress); resolves when that reading ended. */
  refresh(): Promise<void>;
  /** Stops reading (the desk is suspended, e.g. for a shell); changes meanwhile are caught up on resume. */
  pause(): void;
  resume(): void;
  close(): void;
}

export function startDeskFeed<S>(options: DeskFeedOptions<S>, initial: S): DeskFeed {
  let watch: FolderWatch | null = null;
  let watchedKey = "";
  let reading: Promise<void> | null = null;
  let again: Promise<void> | null = null;
  let paused = false;
  let closed = false;

  const arm = (snapshot: S) => {
    const folders = options.folders(snapshot);
    const key = folders.map((f) => f.path).join("\0");
    if (key === watchedKey && watch !== null) return;
    watch?.close();
    watchedKey = key;
    watch = watchFolders(folders, () => void refresh(), {
      debounceMs: options.debounceMs ?? DESK_DEBOUNCE_MS,
      pollMs: options.pollMs ?? DESK_POLL_MS,
    });
  };

  const readOnce = async () => {
    try {
      const snapshot = await options.read();
      if (closed) return;
      arm(snapshot);
      if (!paused) options.onSnapshot(snapshot);
    } catch (error) {
      if (!closed) options.onError(error);
    }
  };

  const refresh = (): Promise<void> => {
    if (closed || paused) return Promise.resolve();
    if (reading === null) {
      reading = readOnce().finally(() => {
        reading = null;
      });
      return reading;
    }
    // One reading is running: queue exactly one more after it, shared by every caller meanwhile.
    if (again === null) {
      const current = reading;
      again = current.then(() => {
        again = null;
        return refresh();
      });
    }
    return again;
  };

  arm(initial);
  return {
    refresh,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      void refresh();
    },
    close() {
      closed = true;
      watch?.close();
      watch = null;
    },
  };
}

/**
 * Where a change the desk shows lands as a file event (fleet/ref-watch.ts
 * knows the folders): branch refs (loose, under the prefix's folder, or
 * packed), worktree registrations, and each berth's per-berth folder (its
 * gate receipt). Working-tree edits are not watched: the poll sees them.
 */
export function deskFolders(
  commonDir: string,
  branchPrefix: string,
  adminKeys: Iterable<string>,
): WatchedFolder[] {
  return refWatchFolders(commonDir, {
    branchPrefix,
    registrations: true,
    berths: [...adminKeys].sort().map((key) => adminDirFor(commonDir, key)),
  });
}
