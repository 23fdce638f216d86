import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { briefsDir } from "../../io/briefs.js";
import { adminDirFor } from "../../io/paths.js";
import { processTreeCpuMs } from "../../io/process-cpu.js";
import { type FolderWatch, type WatchedFolder, watchFolders } from "../../io/watch.js";
import { refWatchFolders } from "../fleet/ref-watch.js";

/**
 * The desk feed: the one place that decides when the desk reads again
 * (spec section 8). In order:
 *   1. a ref change (a file event in the folders fleet/ref-watch.ts names, as
 *      for `berth await`, or in the briefs folder) reads again at once;
 *   2. otherwise the full re-read is periodic, and paces itself by what the
 *      last reading cost: the next one waits at least DESK_PACE_FACTOR times
 *      as long as the last took (its wall time or the CPU time it and its git
 *      processes used, whichever is more; measuredRead), and never less than
 *      the poll period. A fleet whose survey takes a second of CPU is re-read every
 *      ten seconds, so an idle desk does not keep a core busy;
 *   3. readings never overlap: a change during one makes exactly one more after it.
 * The watched folders follow the fleet (a new berth's per-berth folder is
 * watched once a reading has seen it).
 */

export const DESK_POLL_MS = 3_000;
export const DESK_DEBOUNCE_MS = 150;
/** The periodic re-read waits at least this many times as long as the last reading cost. */
export const DESK_PACE_FACTOR = 10;

export interface DeskFeedOptions<S> {
  read(): Promise<S>;
  /** The folders whose changes should trigger a reading, given the last one. */
  folders(snapshot: S): WatchedFolder[];
  onSnapshot(snapshot: S): void;
  onError(error: unknown): void;
  /** The shortest period of the full re-read (and the watches' re-arming poll). */
  pollMs?: number;
  debounceMs?: number;
  paceFactor?: number;
  /** CPU milliseconds used so far by this process and its children (default: io/process-cpu.ts). */
  cpuMs?: () => number;
  /** Cores a reading can use at once (default: the machine's); caps its CPU cost. */
  cores?: number;
  /** The initial snapshot's cost in ms (how long the reading before the feed took). */
  initialCostMs?: number;
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
  const pollMs = options.pollMs ?? DESK_POLL_MS;
  const factor = options.paceFactor ?? DESK_PACE_FACTOR;
  const cpuMs = options.cpuMs ?? processTreeCpuMs;
  let watch: FolderWatch | null = null;
  let watchedKey = "";
  let reading: Promise<void> | null = null;
  let again: Promise<void> | null = null;
  let paused = false;
  let closed = false;
  let lastCostMs = options.initialCostMs ?? 0;
  let periodic: NodeJS.Timeout | null = null;

  /** The next full re-read, paced by the last reading's cost; any reading re-schedules it. */
  const schedule = () => {
    if (periodic !== null) clearTimeout(periodic);
    periodic = null;
    if (closed || paused) return;
    periodic = setTimeout(
      () => {
        periodic = null;
        void refresh();
      },
      nextReadDelay(lastCostMs, pollMs, factor),
    );
  };

  const arm = (snapshot: S) => {
    const folders = options.folders(snapshot);
    const key = folders.map((f) => f.path).join("\0");
    if (key === watchedKey && watch !== null) return;
    watch?.close();
    watchedKey = key;
    // The watches' own poll only re-arms them: the periodic re-read is paced here.
    watch = watchFolders(folders, () => void refresh(), {
      debounceMs: options.debounceMs ?? DESK_DEBOUNCE_MS,
      pollMs,
      onPoll: () => undefined,
    });
  };

  const readOnce = async () => {
    const measured = await measuredRead(options.read, cpuMs, options.cores).then(
      (done) => done,
      (error: unknown) => ({ error, costMs: null }),
    );
    if (!closed) {
      if ("value" in measured) {
        lastCostMs = measured.costMs;
        arm(measured.value);
        if (!paused) options.onSnapshot(measured.value);
      } else {
        options.onError(measured.error);
      }
    }
    schedule();
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
  schedule();
  return {
    refresh,
    pause() {
      paused = true;
      schedule();
    },
    resume() {
      paused = false;
      void refresh();
    },
    close() {
      closed = true;
      schedule();
      watch?.close();
      watch = null;
    },
  };
}

/**
 * A reading and what it cost: its wall time or the CPU time it used, whichever
 * is more. The CPU time is capped at what every core could spend in that wall
 * time: a child reaped meanwhile that ran long before (a gate the desk ran)
 * must not pass its minutes off as the reading's.
 */
export async function measuredRead<S>(
  read: () => Promise<S>,
  cpuMs: () => number = processTreeCpuMs,
  cores: number = availableParallelism(),
): Promise<{ value: S; costMs: number }> {
  const wallStart = performance.now();
  const cpuStart = cpuMs();
  const value = await read();
  const wall = performance.now() - wallStart;
  const cpu = Math.min(cpuMs() - cpuStart, wall * cores);
  return { value, costMs: Math.max(wall, cpu) };
}

/** How long the periodic re-read waits after a reading that cost `costMs`. */
export function nextReadDelay(costMs: number, pollMs: number, factor: number): number {
  return Math.max(pollMs, Math.ceil(costMs * factor));
}

/**
 * Where a change the desk shows lands as a file event (fleet/ref-watch.ts
 * knows the folders): branch refs (loose, under the prefix's folder, or
 * packed), worktree registrations, each berth's per-berth folder (its
 * gate receipt), and the briefs folder (titles, parking). Working-tree edits
 * are not watched: the periodic re-read sees them.
 */
export function deskFolders(
  commonDir: string,
  branchPrefix: string,
  adminKeys: Iterable<string>,
): WatchedFolder[] {
  return [
    ...refWatchFolders(commonDir, {
      branchPrefix,
      registrations: true,
      berths: [...adminKeys].sort().map((key) => adminDirFor(commonDir, key)),
    }),
    { path: briefsDir(commonDir), accepts: (name) => name.endsWith(".json") },
  ];
}
