import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { berthWith, queueFixture } from "./helpers/queue.js";
import { BERTH_BIN, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Gate capacity (`[gate.capacity].max_parallel`, spec section 11): slot
 * files under <common>/berth/gate-slots/ held by live pids; a waiting gate
 * says so on stderr and in status; a dead holder's slot is taken over.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A check that logs when it starts and ends (ms since the epoch), sleeping between. */
const TIMED = `[gate]
checks = [{ name = "timed", run = 'echo "start $BERTH_ID $(date +%s%3N)" >> "$MARKER"; sleep 1; echo "end $BERTH_ID $(date +%s%3N)" >> "$MARKER"' }]

[gate.capacity]
max_parallel = 1
`;

function intervals(marker: string): Map<string, { start: number; end: number }> {
  const spans = new Map<string, { start: number; end: number }>();
  for (const line of readFileSync(marker, "utf8").trim().split("\n")) {
    const [kind, id, at] = line.split(" ");
    const span = spans.get(id ?? "") ?? { start: 0, end: 0 };
    if (kind === "start") span.start = Number(at);
    else span.end = Number(at);
    spans.set(id ?? "", span);
  }
  return spans;
}

function gateIn(path: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BERTH_BIN, "gate", "--json"], { cwd: path, env });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("close", (code) => resolve({ code: code ?? -1, stderr }));
  });
}

describe("gate capacity", () => {
  it("max_parallel = 1 with three gates started at once: their checks never overlap; the waiting ones say so on stderr and in status", async () => {
    const fx = queueFixture(TIMED);
    repo = fx.repo;
    const { env, marker } = fx;
    const berths = [
      await berthWith(repo, env, "x", { "x.txt": "x\n" }),
      await berthWith(repo, env, "y", { "y.txt": "y\n" }),
      await berthWith(repo, env, "z", { "z.txt": "z\n" }),
    ];
    const runs = berths.map((b) => gateIn(b.path, env));
    let sawWaiting = false;
    for (let i = 0; i < 40 && !sawWaiting; i++) {
      const status = await runBerth(["status", "--json"], { cwd: repo.path, env });
      sawWaiting = status.json.data.worktrees.some(
        (w: { running: string | null }) => w.running === "gate (waiting for a slot)",
      );
      if (!sawWaiting) await new Promise((r) => setTimeout(r, 100));
    }
    const done = await Promise.all(runs);
    expect(done.map((d) => d.code)).toEqual([0, 0, 0]);
    expect(sawWaiting).toBe(true);
    expect(done.filter((d) => d.stderr.includes("waiting for a slot")).length).toBeGreaterThan(0);
    const spans = [...intervals(marker).values()].sort((a, b) => a.start - b.start);
    expect(spans).toHaveLength(3);
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i]?.start).toBeGreaterThanOrEqual(spans[i - 1]?.end ?? Number.POSITIVE_INFINITY);
    }
  });

  it("by default (max_parallel = 0) as many gates run at once as there are cores, never more", async () => {
    const fx = queueFixture(TIMED.replace("max_parallel = 1", "max_parallel = 0"));
    repo = fx.repo;
    const { env, marker } = fx;
    const cores = availableParallelism();
    const berths = [];
    for (let i = 0; i <= cores; i++) {
      berths.push(await berthWith(repo, env, `b${i}`, { [`b${i}.txt`]: `${i}\n` }));
    }
    const done = await Promise.all(berths.map((b) => gateIn(b.path, env)));
    expect(done.map((d) => d.code)).toEqual(berths.map(() => 0));
    const spans = [...intervals(marker).values()];
    expect(spans).toHaveLength(cores + 1);
    // At no check's start were all `cores` slots' other checks still running.
    for (const span of spans) {
      const overlapping = spans.filter((o) => o.start <= span.start && o.end > span.start);
      expect(overlapping.length).toBeLessThanOrEqual(cores);
    }
  });

  it("a slot held by a dead process is taken over", async () => {
    const fx = queueFixture(TIMED);
    repo = fx.repo;
    const { env } = fx;
    const b = await berthWith(repo, env, "solo", { "solo.txt": "s\n" });
    const slots = join(repo.path, ".git", "berth", "gate-slots");
    mkdirSync(slots, { recursive: true });
    // A pid far beyond pid_max on this host: no such process.
    writeFileSync(
      join(slots, "0"),
      `${JSON.stringify({ pid: 4_194_999, hostname: (await import("node:os")).hostname(), verb: "gate", acquired_at: "2026-01-01T00:00:00Z", pid_start: null })}\n`,
    );
    const run = await gateIn(b.path, env);
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain("waiting for a slot");
  });
});
