import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DeskFeed, deskFolders, startDeskFeed } from "../src/core/desk/feed.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

/**
 * The desk's refresh: never two readings at once, a change during a reading
 * makes exactly one more, and a ref change arrives by file event (the poll
 * is set far beyond the test's deadline, so only the event can explain it).
 */

let feed: DeskFeed | undefined;
let dir: TempDir | undefined;
afterEach(() => {
  feed?.close();
  dir?.cleanup();
});

const FAR = 600_000;

function gate() {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("desk feed", () => {
  it("never overlaps readings and coalesces the changes made during one into one more", async () => {
    let active = 0;
    let most = 0;
    let reads = 0;
    const release = [gate(), gate(), gate()];
    const seen: number[] = [];
    feed = startDeskFeed<number>(
      {
        read: async () => {
          active++;
          most = Math.max(most, active);
          const n = reads++;
          await release[n]?.promise;
          active--;
          return n;
        },
        folders: () => [],
        onSnapshot: (n) => seen.push(n),
        onError: (error) => {
          throw error;
        },
        pollMs: FAR,
      },
      -1,
    );
    const first = feed.refresh();
    const queued = [feed.refresh(), feed.refresh(), feed.refresh()];
    expect(reads).toBe(1);
    release[0]?.open();
    await first;
    release[1]?.open();
    await Promise.all(queued);
    expect(reads).toBe(2);
    expect(most).toBe(1);
    expect(seen).toEqual([0, 1]);
  });

  it("reads again when a watched ref folder changes", async () => {
    dir = makeTempDir();
    const heads = join(dir.path, "refs", "heads", "berth");
    mkdirSync(heads, { recursive: true });
    let reads = 0;
    let notified: () => void = () => undefined;
    const changed = new Promise<void>((resolve) => {
      notified = resolve;
    });
    feed = startDeskFeed<number>(
      {
        read: async () => ++reads,
        folders: () => deskFolders(dir?.path ?? "", "berth/", []),
        onSnapshot: () => notified(),
        onError: () => undefined,
        pollMs: FAR,
        debounceMs: 20,
      },
      0,
    );
    writeFileSync(join(heads, "x-1"), `${"a".repeat(40)}\n`);
    await Promise.race([
      changed,
      new Promise((_, reject) => setTimeout(() => reject(new Error("no reading")), 10_000)),
    ]);
    expect(reads).toBeGreaterThanOrEqual(1);
  });

  it("reads nothing while paused and catches up on resume", async () => {
    let reads = 0;
    feed = startDeskFeed<number>(
      {
        read: async () => ++reads,
        folders: () => [],
        onSnapshot: () => undefined,
        onError: () => undefined,
        pollMs: FAR,
      },
      0,
    );
    feed.pause();
    await feed.refresh();
    expect(reads).toBe(0);
    feed.resume();
    await feed.refresh();
    expect(reads).toBeGreaterThanOrEqual(1);
  });

  it("watches branch refs, packed refs, registrations and each berth's receipt folder", () => {
    const folders = deskFolders("/r/.git", "berth/", ["b-2", "a-1"]);
    expect(folders.map((f) => f.path)).toEqual([
      "/r/.git/refs/heads",
      "/r/.git/refs/heads/berth",
      "/r/.git",
      "/r/.git/reftable",
      "/r/.git/worktrees",
      "/r/.git/worktrees/a-1/berth",
      "/r/.git/worktrees/b-2/berth",
    ]);
    const common = folders.find((f) => f.path === "/r/.git");
    expect(common?.accepts?.("packed-refs")).toBe(true);
    expect(common?.accepts?.("index")).toBe(false);
  });
});
