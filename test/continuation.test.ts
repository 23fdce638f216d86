import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CONTINUATION_TTL_MS,
  type Continuation,
  loadContinuation,
  MAX_CONTINUATIONS,
  newHandle,
  saveContinuation,
} from "../src/core/await/continuation.js";
import { continuationDir } from "../src/io/await-continuations.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

/** Await continuations on disk: their format, their 7 days, their limit of 512 (issue 16, item 7). */

let dir: TempDir | undefined;
afterEach(() => {
  dir?.cleanup();
  dir = undefined;
});

const NOW = new Date("2026-06-08T12:00:00.000Z");
const T = "1".repeat(40);
const P = "2".repeat(40);

function continuation(handle = newHandle()): Continuation {
  return {
    handle,
    condition: "landed",
    argument: "b",
    branch: "berth/b",
    trunk: "main",
    memory: {
      pinned: [P],
      held: [P],
      forkPoints: [T],
      goneAtStart: false,
      startedAt: "2026-06-08T11:00:00.000Z",
      trunkTipAtStart: T,
    },
  };
}

/** The file format (src/io/await-continuations.ts) of a continuation. */
function stored(c: Continuation) {
  const { memory } = c;
  return {
    version: 1,
    handle: c.handle,
    condition: c.condition,
    argument: c.argument,
    branch: c.branch,
    trunk: c.trunk,
    trunk_tip_at_start: memory.trunkTipAtStart,
    pinned: memory.pinned,
    held: memory.held,
    fork_points: memory.forkPoints,
    gone_at_start: memory.goneAtStart,
    started_at: memory.startedAt,
    updated_at: NOW.toISOString(),
  };
}

describe("await continuations", () => {
  it("round-trip: what a call leaves, the next call gets back", async () => {
    dir = makeTempDir();
    const saved = continuation();
    await saveContinuation(dir.path, saved, NOW);
    expect(readdirSync(continuationDir(dir.path))).toEqual([`${saved.handle}.json`]);
    expect(await loadContinuation(dir.path, saved.handle, NOW)).toEqual(saved);
  });

  it("a handle is unknown 7 days after the call that left it, and its file goes", async () => {
    dir = makeTempDir();
    const saved = continuation();
    await saveContinuation(dir.path, saved, new Date(NOW.getTime() - CONTINUATION_TTL_MS));
    expect((await loadContinuation(dir.path, saved.handle, NOW)).handle).toBe(saved.handle);
    const later = new Date(NOW.getTime() + 1000);
    await expect(loadContinuation(dir.path, saved.handle, later)).rejects.toMatchObject({
      code: "unknown_target",
    });
    expect(existsSync(join(continuationDir(dir.path), `${saved.handle}.json`))).toBe(false);
  });

  it(`keeps at most ${MAX_CONTINUATIONS}: the oldest go first, and expired ones whenever one is saved`, async () => {
    dir = makeTempDir();
    const path = dir.path;
    const expired = continuation();
    await saveContinuation(path, expired, new Date(NOW.getTime() - CONTINUATION_TTL_MS - 1));
    // 511 more, oldest first, written as a call would have left them (plain writes: fast).
    const handles: string[] = [];
    for (let i = 0; i < MAX_CONTINUATIONS - 1; i++) {
      const c = continuation();
      handles.push(c.handle);
      const at = new Date(NOW.getTime() - (MAX_CONTINUATIONS - i) * 1000);
      writeFileSync(
        join(continuationDir(path), `${c.handle}.json`),
        JSON.stringify({ ...stored(c), updated_at: at.toISOString() }),
      );
    }
    const names = () => readdirSync(continuationDir(path)).map((n) => n.slice(0, -5));
    expect(names()).toHaveLength(MAX_CONTINUATIONS);
    const last = continuation();
    handles.push(last.handle);
    await saveContinuation(path, last, new Date(NOW.getTime() - 1000));
    expect(names()).toHaveLength(MAX_CONTINUATIONS);
    expect(names()).not.toContain(expired.handle);
    expect(names()).toContain(handles[0]);

    const newest = continuation();
    await saveContinuation(path, newest, NOW);
    expect(names()).toHaveLength(MAX_CONTINUATIONS);
    expect(names()).toContain(newest.handle);
    expect(names()).not.toContain(handles[0]);
    expect(names()).toContain(handles[1]);
    // Saving the same handle again rewrites it; nothing else goes.
    await saveContinuation(path, { ...newest, memory: { ...newest.memory, pinned: [P, T] } }, NOW);
    expect(names()).toHaveLength(MAX_CONTINUATIONS);
    expect((await loadContinuation(path, newest.handle, NOW)).memory.pinned).toEqual([P, T]);
  });
});
