import { spawn } from "node:child_process";
import type { Duplex, Readable } from "node:stream";
import { lazyCrypto } from "../lazy-crypto.js";
import { parseStatusPorcelainV2, type StatusSummary } from "./parse.js";
import { type GitRunner, gitEnv, runGit } from "./run.js";

export const STATUS_ARGS = [
  "status",
  "--porcelain=v2",
  "-z",
  "--untracked-files=normal",
  // Changes inside a submodule are changes (spec section 7), whatever
  // `submodule.<name>.ignore` or `diff.ignoreSubmodules` say; git recurses
  // into populated submodules itself, so this costs no process of berth's.
  "--ignore-submodules=none",
] as const;

/**
 * One worktree's changes, submodules' included. Read-only: with
 * GIT_OPTIONAL_LOCKS=0 git neither takes the index lock nor refreshes the
 * index on disk.
 */
export async function readWorktreeStatus(
  path: string,
  run: GitRunner = runGit,
): Promise<StatusSummary> {
  const { stdout } = await run(STATUS_ARGS, { cwd: path });
  return parseStatusPorcelainV2(stdout);
}

/**
 * `git status` for many worktrees: still one git process each, but forked by
 * `lanes` loops, subshells of one small `sh`, instead of by Node, whose
 * per-spawn cost (a fork of a large process) is several times git's own run
 * time in a big fleet (decisions 0015, 0063). The script text is fixed;
 * paths reach it only as arguments, never spliced in. Each result is framed
 * by a random marker that git's -z output cannot forge. A worktree git
 * cannot read yields null.
 */
export async function readWorktreeStatuses(
  paths: readonly string[],
  lanes: number,
  /** Called as each status arrives (the index into `paths`), before the set is complete. */
  onStatus?: (index: number, status: StatusSummary | null) => void,
): Promise<(StatusSummary | null)[]> {
  const results = new Array<StatusSummary | null>(paths.length).fill(null);
  if (paths.length <= lanes) {
    // A lane of one would spawn `sh` only to spawn git: spawn git directly.
    await Promise.all(
      paths.map(async (path, i) => {
        results[i] = await readWorktreeStatus(path).catch(() => null);
        onStatus?.(i, results[i] ?? null);
      }),
    );
    return results;
  }
  // The lanes take the paths one at a time as they finish the last, so a lane the
  // scheduler gives less CPU takes fewer: no lane is left running alone at the end.
  let next = 0;
  const queue: LaneQueue = {
    take: () => (next < paths.length ? next++ : null),
    settle: (index, output) => {
      results[index] = output === null ? null : parseStatusPorcelainV2(output);
      onStatus?.(index, results[index] ?? null);
    },
  };
  const laneCount = Math.min(lanes, paths.length);
  // Each lane holds a few paths ahead, never so many that a lane started last finds none.
  const ahead = Math.max(1, Math.min(QUEUED_PER_LANE, Math.floor(paths.length / laneCount)));
  const shells = Array.from({ length: Math.ceil(laneCount / LANES_PER_SHELL) }, (_, s) =>
    Math.min(LANES_PER_SHELL, laneCount - s * LANES_PER_SHELL),
  );
  await Promise.all(shells.map((count) => runStatusLanes(paths, count, ahead, queue)));
  return results;
}

/** The paths not yet taken, shared by every lane, and where each result goes. */
interface LaneQueue {
  /** The next path's index, or null when every path is taken. */
  take(): number | null;
  /** A path's output (null where git failed). */
  settle(index: number, output: string | null): void;
}

// Each lane talks over one descriptor, 3 to 9 (sh names 0-9 only).
const LANES_PER_SHELL = 7;
// Paths a lane holds at most: enough that a lane never waits on Node's thread.
const QUEUED_PER_LANE = 4;

/**
 * The lanes' script: its arguments are the nonce, then the paths. Lane k
 * reads path numbers from descriptor 3 + k (a socket Node writes them to as
 * the lane's results arrive) and writes each status, framed by the marker,
 * back to it; it ends when Node ends its input. Each lane closes the other
 * lanes' descriptors, so each socket ends with its own lane.
 */
function lanesScript(lanes: number): string {
  const all = Array.from({ length: lanes }, (_, k) => k + 3);
  const lines = all.map((fd) => {
    const others = all.filter((other) => other !== fd).map((other) => `${other}>&-`);
    const loop = `while read -r i; do eval "wt=\\\${$i}"; git -C "$wt" ${STATUS_ARGS.join(" ")} 2>/dev/null; printf '\\000%s %s\\000' "$nonce" "$?"; done`;
    return `( exec <&${fd} >&${fd} ${others.join(" ")}; ${loop} ) &`;
  });
  return [
    "nonce=$1; shift",
    ...lines,
    `exec ${all.map((fd) => `${fd}>&-`).join(" ")}`,
    "wait",
  ].join("\n");
}

/** Runs `lanes` lanes under one `sh`, feeding each from the queue as its results arrive. */
function runStatusLanes(
  paths: readonly string[],
  lanes: number,
  ahead: number,
  queue: LaneQueue,
): Promise<void> {
  const nonce = `berth-${lazyCrypto().randomBytes(16).toString("hex")}`;
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", lanesScript(lanes), "sh", nonce, ...paths], {
      env: gitEnv(null),
      stdio: [
        "ignore",
        "ignore",
        "ignore",
        ...Array.from({ length: lanes }, () => "pipe" as const),
      ],
    });
    child.on("error", reject);
    const read = Array.from({ length: lanes }, (_, k) => {
      const socket = child.stdio[k + 3] as Duplex;
      // Whatever a lane still held when it ended is unread (null), as a failed git is.
      const held: number[] = [];
      const feed = () => {
        const index = queue.take();
        if (index !== null) {
          held.push(index);
          socket.write(`${index + 1}\n`);
        } else if (held.length === 0) {
          socket.end();
        }
      };
      // A lane that died before its input ended: its results already say so.
      socket.on("error", () => undefined);
      for (let i = 0; i < ahead; i++) feed();
      return readLane(socket, nonce, (output) => {
        const index = held.shift();
        if (index === undefined) return;
        queue.settle(index, output);
        feed();
      }).then(() => {
        for (const index of held.splice(0)) queue.settle(index, null);
      });
    });
    // Settled once sh has exited too, as each lane's own process was waited for before.
    const exited = new Promise((settle) => child.once("close", settle));
    void Promise.all([...read, exited]).then(() => resolve());
  });
}

/** Reads one lane's stream, calling `onOutput` per worktree as its marker arrives. */
function readLane(
  stream: Readable,
  nonce: string,
  onOutput: (output: string | null) => void,
): Promise<void> {
  const marker = Buffer.from(`\0${nonce} `);
  // Markers are searched for only where one can be — the new chunk and the
  // few bytes before it — so a large output is not rescanned per chunk.
  const keep = marker.length + 8;
  let parts: Buffer[] = [];
  let tail = Buffer.alloc(0);
  return new Promise((resolve) => {
    stream.on("data", (chunk: Buffer) => {
      const window = Buffer.concat([tail, chunk]);
      parts.push(chunk);
      tail = window.subarray(Math.max(0, window.length - keep));
      if (window.indexOf(marker) === -1) return;
      let rest = Buffer.concat(parts);
      for (let at = rest.indexOf(marker); at !== -1; at = rest.indexOf(marker)) {
        const end = rest.indexOf(0, at + marker.length);
        if (end === -1) break;
        const code = rest.subarray(at + marker.length, end).toString("latin1");
        onOutput(code === "0" ? rest.subarray(0, at).toString("utf8") : null);
        rest = rest.subarray(end + 1);
      }
      parts = rest.length > 0 ? [rest] : [];
      tail = rest.subarray(Math.max(0, rest.length - keep));
    });
    stream.on("end", () => resolve());
    stream.on("error", () => resolve());
  });
}

/** `git status` of each path, keyed by path (null where git could not read it). */
export async function readStatusesByPath(
  paths: readonly (string | null)[],
  lanes: number,
  onStatus?: (path: string, status: StatusSummary | null) => void,
): Promise<[string, StatusSummary | null][]> {
  const unique = [...new Set(paths.filter((path): path is string => path !== null))];
  if (unique.length === 0) return [];
  const report =
    onStatus &&
    ((i: number, status: StatusSummary | null) => onStatus(unique[i] as string, status));
  const statuses = await readWorktreeStatuses(unique, lanes, report);
  return unique.map((path, i) => [path, statuses[i] ?? null]);
}

/** Splits a lane's stream into one output per worktree (null where git failed). */
export function splitLaneOutput(stream: string, nonce: string, count: number): (string | null)[] {
  const outputs: (string | null)[] = [];
  const marker = new RegExp(`\\0${nonce} (\\d+)\\0`, "g");
  let start = 0;
  for (const match of stream.matchAll(marker)) {
    const body = stream.slice(start, match.index);
    outputs.push(match[1] === "0" ? body : null);
    start = (match.index ?? 0) + match[0].length;
  }
  while (outputs.length < count) outputs.push(null);
  return outputs;
}

/**
 * Refreshes a checkout's index as a user's own `git status` would: the stat
 * data of files git had to re-read is written back, and the untracked cache
 * (where enabled) filled, so later read-only statuses need not re-hash them.
 * It takes the index lock: only for a checkout the caller owns, such as the
 * one `berth start` just made.
 */
export async function refreshWorktreeIndex(path: string): Promise<void> {
  await runGit(STATUS_ARGS, { cwd: path, optionalLocks: true });
}
