import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type DeskFeed,
  deskFolders,
  measuredRead,
  nextReadDelay,
  startDeskFeed,
} from "../src/core/desk/feed.js";
import { parseProcStatCpuMs } from "../src/io/process-cpu.js";
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
      "/r/.git/berth/briefs",
    ]);
    const common = folders.find((f) => f.path === "/r/.git");
    expect(common?.accepts?.("packed-refs")).toBe(true);
    expect(common?.accepts?.("index")).toBe(false);
  });
});

describe("desk feed pacing", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("waits at least ten times the last reading's cost, never less than the poll", () => {
    expect(nextReadDelay(0, 3_000, 10)).toBe(3_000);
    expect(nextReadDelay(120, 3_000, 10)).toBe(3_000);
    expect(nextReadDelay(800, 3_000, 10)).toBe(8_000);
    expect(nextReadDelay(2_345.2, 3_000, 10)).toBe(23_452);
  });

  it("counts a reading's CPU time, capped at what its cores could spend in its wall time", async () => {
    let cpu = 0;
    const spend = (ms: number, wait: number) => async () => {
      await sleep(wait);
      cpu += ms;
      return "read";
    };
    // 40 ms of CPU in a ~20 ms reading on four cores: the CPU is the cost.
    const counted = await measuredRead(spend(40, 20), () => cpu, 4);
    expect(counted.costMs).toBeGreaterThanOrEqual(40);
    // A minute of CPU reaped during a short reading (a gate's checks ending): capped.
    const capped = await measuredRead(spend(60_000, 20), () => cpu, 2);
    expect(capped.costMs).toBeLessThan(5_000);
    expect(capped.value).toBe("read");
  });

  it("re-reads periodically no sooner than ten times the reading's CPU cost", async () => {
    // Each reading "costs" 40 ms of CPU (an injected clock), so the next waits >= 400 ms.
    let cpu = 0;
    const at: number[] = [];
    feed = startDeskFeed<number>(
      {
        read: async () => {
          at.push(Date.now());
          await sleep(20);
          cpu += 40;
          return at.length;
        },
        folders: () => [],
        onSnapshot: () => undefined,
        onError: () => undefined,
        pollMs: 20,
        cpuMs: () => cpu,
        cores: 4,
        initialCostMs: 40,
      },
      0,
    );
    await sleep(1_500);
    feed.close();
    expect(at.length).toBeGreaterThanOrEqual(2);
    // 20 ms of poll alone would have read some 70 times.
    expect(at.length).toBeLessThanOrEqual(4);
    for (let i = 1; i < at.length; i++) {
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(390);
    }
  });

  it("still reads at once on a ref change while the periodic re-read waits", async () => {
    dir = makeTempDir();
    const heads = join(dir.path, "refs", "heads", "berth");
    mkdirSync(heads, { recursive: true });
    const at: number[] = [];
    let changed: () => void = () => undefined;
    const second = new Promise<void>((resolve) => {
      changed = resolve;
    });
    const start = Date.now();
    feed = startDeskFeed<number>(
      {
        read: async () => {
          at.push(Date.now() - start);
          if (at.length === 1) changed();
          return at.length;
        },
        folders: () => deskFolders(dir?.path ?? "", "berth/", []),
        onSnapshot: () => undefined,
        onError: () => undefined,
        pollMs: 20,
        debounceMs: 20,
        // The last reading cost a minute: the periodic re-read is ten minutes away.
        initialCostMs: 60_000,
        cpuMs: () => 0,
      },
      0,
    );
    writeFileSync(join(heads, "x-1"), `${"a".repeat(40)}\n`);
    await Promise.race([
      second,
      new Promise((_, reject) => setTimeout(() => reject(new Error("no reading")), 10_000)),
    ]);
    expect(at).toHaveLength(1);
    expect(at[0]).toBeLessThan(10_000);
  });

  it("reads CPU time from a /proc stat line, command names with spaces included", () => {
    const line =
      "4242 (node (desk) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 300 45 20 0 11 0 1 1 1";
    expect(parseProcStatCpuMs(line)).toBe((150 + 25 + 300 + 45) * 10);
    expect(parseProcStatCpuMs("garbage")).toBeNull();
  });
});
