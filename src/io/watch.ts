import { type FSWatcher, statSync, watch } from "node:fs";

/**
 * Change notification for a waiter: file events on a few folders, debounced,
 * with a slow poll as the backstop. Events are fast but not guaranteed (a
 * folder that does not exist yet, one git deleted and made again, a
 * filesystem without notifications), so the poll fires regardless and
 * re-arms any folder whose watch is missing or stale. Nothing here spins.
 */

export interface WatchedFolder {
  path: string;
  /** Which entries of the folder matter (default: all). */
  accepts?: (filename: string) => boolean;
}

export interface FolderWatchOptions {
  /** Events within this window after the first one fire once. */
  debounceMs: number;
  /** `onChange` also fires this often, events or not (unless `onPoll` is given). */
  pollMs: number;
  /**
   * Called by the poll instead of `onChange`: the caller paces its own
   * periodic work (the desk), and the poll only re-arms the watches.
   */
  onPoll?: () => void;
}

export interface FolderWatch {
  close(): void;
}

interface Armed {
  watcher: FSWatcher;
  /** The inode watched: a folder deleted and made again needs a new watch. */
  ino: number;
}

export function watchFolders(
  folders: readonly WatchedFolder[],
  onChange: () => void,
  options: FolderWatchOptions,
): FolderWatch {
  const armed = new Map<string, Armed>();
  let debounce: NodeJS.Timeout | null = null;
  let closed = false;

  const changed = () => {
    if (closed || debounce !== null) return;
    debounce = setTimeout(() => {
      debounce = null;
      if (!closed) onChange();
    }, options.debounceMs);
  };

  const disarm = (path: string) => {
    armed.get(path)?.watcher.close();
    armed.delete(path);
  };

  const arm = (folder: WatchedFolder) => {
    const ino = inodeOf(folder.path);
    const current = armed.get(folder.path);
    if (current !== undefined && current.ino === ino) return;
    disarm(folder.path);
    if (ino === null) return; // Not there (yet): the next poll looks again.
    try {
      const watcher = watch(folder.path, { persistent: false }, (_event, filename) => {
        if (filename === null || folder.accepts === undefined || folder.accepts(filename)) {
          changed();
        }
      });
      watcher.on("error", () => disarm(folder.path));
      armed.set(folder.path, { watcher, ino });
    } catch {
      // Gone between the stat and the watch, or not watchable: the poll covers it.
    }
  };

  const armAll = () => {
    for (const folder of folders) arm(folder);
  };

  armAll();
  const poll = setInterval(() => {
    armAll();
    (options.onPoll ?? onChange)();
  }, options.pollMs);

  return {
    close() {
      closed = true;
      clearInterval(poll);
      if (debounce !== null) clearTimeout(debounce);
      for (const path of [...armed.keys()]) disarm(path);
    },
  };
}

function inodeOf(path: string): number | null {
  try {
    const stats = statSync(path);
    return stats.isDirectory() ? stats.ino : null;
  } catch {
    return null;
  }
}

/**
 * A cheap summary of files' identities (inode, size, modification time to
 * the nanosecond; "-" when absent). It changes whenever one of them is
 * written, replaced by a rename, made or removed, so a waiter can tell
 * "nothing I depend on was touched" with a few stat calls instead of a process.
 */
export function fileFingerprint(paths: readonly string[]): string {
  return paths
    .map((path) => {
      try {
        const stats = statSync(path, { bigint: true });
        return `${stats.ino}:${stats.size}:${stats.mtimeNs}`;
      } catch {
        return "-";
      }
    })
    .join("|");
}
