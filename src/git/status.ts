import { spawn } from "node:child_process";
import { lazyCrypto } from "../lazy-crypto.js";
import { parseStatusPorcelainV2, type StatusSummary } from "./parse.js";
import { type GitRunner, gitEnv, runGit } from "./run.js";

const STATUS_ARGS = [
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
 * `lanes` small `sh` loops instead of by Node, whose per-spawn cost (a fork of
 * a large process) is several times git's own run time in a big fleet. The
 * script text is fixed; paths reach it only as arguments, never spliced in.
 * Each result is framed by a random marker that git's -z output cannot forge.
 * A worktree git cannot read yields null.
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
  const laneCount = Math.max(1, Math.min(lanes, paths.length));
  const byLane = Array.from({ length: laneCount }, () => [] as number[]);
  for (let i = 0; i < paths.length; i++) byLane[i % laneCount]?.push(i);
  await Promise.all(
    byLane.map((indexes) =>
      runStatusLane(
        indexes.map((i) => paths[i] as string),
        (k, output) => {
          const pathIndex = indexes[k] as number;
          results[pathIndex] = output === null ? null : parseStatusPorcelainV2(output);
          onStatus?.(pathIndex, results[pathIndex] ?? null);
        },
      ),
    ),
  );
  return results;
}

const LANE_SCRIPT = `nonce=$1; shift
for wt do
  git -C "$wt" ${STATUS_ARGS.join(" ")} 2>/dev/null
  printf '\\000%s %s\\000' "$nonce" "$?"
done`;

/**
 * Runs one lane; `onOutput` gets each worktree's output (null where git
 * failed) as soon as its marker has arrived, so a caller can show it at once.
 */
function runStatusLane(
  paths: readonly string[],
  onOutput: (k: number, output: string | null) => void,
): Promise<void> {
  const nonce = `berth-${lazyCrypto().randomBytes(16).toString("hex")}`;
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", LANE_SCRIPT, "sh", nonce, ...paths], {
      env: gitEnv(),
      stdio: ["ignore", "pipe", "ignore"],
    });
    const marker = Buffer.from(`\0${nonce} `);
    // Markers are searched for only where one can be — the new chunk and the
    // few bytes before it — so a large output is not rescanned per chunk.
    const keep = marker.length + 8;
    let parts: Buffer[] = [];
    let tail = Buffer.alloc(0);
    let emitted = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      const window = Buffer.concat([tail, chunk]);
      parts.push(chunk);
      tail = window.subarray(Math.max(0, window.length - keep));
      if (window.indexOf(marker) === -1) return;
      let stream = Buffer.concat(parts);
      for (let at = stream.indexOf(marker); at !== -1; at = stream.indexOf(marker)) {
        const end = stream.indexOf(0, at + marker.length);
        if (end === -1) break;
        const code = stream.subarray(at + marker.length, end).toString("latin1");
        const body = code === "0" ? stream.subarray(0, at).toString("utf8") : null;
        if (emitted < paths.length) onOutput(emitted++, body);
        stream = stream.subarray(end + 1);
      }
      parts = stream.length > 0 ? [stream] : [];
      tail = stream.subarray(Math.max(0, stream.length - keep));
    });
    child.on("error", reject);
    child.on("close", () => {
      while (emitted < paths.length) onOutput(emitted++, null);
      resolve();
    });
  });
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
