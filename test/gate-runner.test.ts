import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CheckRun,
  orderChecks,
  type PlannedCheck,
  runChecks,
} from "../src/core/landing/gate-runner.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

let dir: TempDir;
afterEach(() => dir?.cleanup());

function check(
  name: string,
  command: string,
  after: string[] = [],
  timeoutMs = 30_000,
): PlannedCheck {
  return { name, command, after, timeoutMs };
}

function run(checks: PlannedCheck[], extra: { failFast?: boolean; parallelism?: number } = {}) {
  dir = makeTempDir();
  return runChecks(checks, {
    cwd: dir.path,
    env: { ...dir.env, MARKS: dir.path },
    logDir: join(dir.path, "logs"),
    failFast: extra.failFast ?? true,
    parallelism: extra.parallelism ?? 2,
  });
}

function byName(runs: CheckRun[]): Record<string, CheckRun> {
  return Object.fromEntries(runs.map((r) => [r.name, r]));
}

/** Waits (up to 20 s) for the other check's start marker: passes only if both run at once. */
const waitFor = (mine: string, other: string) =>
  `touch "$MARKS/${mine}.started"; i=0; while [ ! -f "$MARKS/${other}.started" ]; do i=$((i+1)); [ $i -gt 200 ] && exit 1; sleep 0.1; done`;

describe("orderChecks", () => {
  it("puts dependencies first and keeps declaration order otherwise", () => {
    const order = orderChecks([
      { name: "test", after: ["build"] },
      { name: "lint", after: [] },
      { name: "build", after: ["deps"] },
      { name: "deps", after: [] },
    ]);
    expect(order.map((c) => c.name)).toEqual(["deps", "build", "test", "lint"]);
  });
});

describe("runChecks", () => {
  it("finishes a check before starting the one declared after it", async () => {
    const runs = await run([
      check("b", 'echo b-start >> "$MARKS/order"', ["a"]),
      check("a", 'sleep 0.3; echo a-done >> "$MARKS/order"'),
    ]);
    expect(runs.map((r) => [r.name, r.outcome])).toEqual([
      ["a", "passed"],
      ["b", "passed"],
    ]);
    expect(readFileSync(join(dir.path, "order"), "utf8")).toBe("a-done\nb-start\n");
    const { a, b } = byName(runs);
    expect(b?.startedAt).toBeGreaterThanOrEqual(a?.finishedAt ?? Number.POSITIVE_INFINITY);
  });

  it("runs independent checks at the same time", async () => {
    const runs = await run([check("x", waitFor("x", "y")), check("y", waitFor("y", "x"))]);
    expect(runs.map((r) => r.outcome)).toEqual(["passed", "passed"]);
  });

  it("never runs more checks at once than the bound", async () => {
    const runs = await run(
      ["p", "q", "r", "s"].map((name) => check(name, "sleep 0.2")),
      { parallelism: 2 },
    );
    expect(runs.every((r) => r.outcome === "passed")).toBe(true);
    const intervals = runs.map((r) => [r.startedAt ?? 0, r.finishedAt ?? 0] as const);
    const most = Math.max(
      ...intervals.map(([start]) => intervals.filter(([s, f]) => s <= start && start < f).length),
    );
    expect(most).toBe(2);
  });

  it("with fail_fast, stops the running checks and starts no more", async () => {
    const runs = byName(
      await run([
        check("fails", "echo broken; exit 4"),
        check("slow", `touch "$MARKS/slow.started"; sleep 30; touch "$MARKS/slow.finished"`),
        check("later", "true", ["slow"]),
      ]),
    );
    expect(runs.fails).toMatchObject({ outcome: "failed", exitCode: 4, reason: "exit 4" });
    expect(runs.fails?.tail).toBe("broken");
    expect(runs.slow?.outcome).toBe("stopped");
    expect(runs.later).toMatchObject({ outcome: "skipped", startedAt: null });
    expect(runs.later?.reason).toContain("fail_fast");
    expect(existsSync(join(dir.path, "slow.finished"))).toBe(false);
  });

  it("without fail_fast, finishes independent checks and skips dependants of a failure", async () => {
    const runs = byName(
      await run(
        [
          check("fails", "exit 1"),
          check("other", "sleep 0.2; echo fine"),
          check("needs", "true", ["fails"]),
          check("deeper", "true", ["needs"]),
        ],
        { failFast: false },
      ),
    );
    expect(runs.other?.outcome).toBe("passed");
    expect(runs.needs).toMatchObject({ outcome: "skipped", reason: "after fails failed" });
    expect(runs.deeper).toMatchObject({ outcome: "skipped", reason: "after needs was skipped" });
  });

  it("reports a check past its timeout as timed out", async () => {
    const runs = await run([check("hangs", "sleep 30", [], 300)]);
    expect(runs[0]?.outcome).toBe("timed_out");
    expect(runs[0]?.reason).toContain("timed out after 0.3 s");
  });

  it("writes each check's output to its own log file", async () => {
    const runs = byName(
      await run([check("unit tests", "echo one; echo two >&2"), check("lint", "echo clean")]),
    );
    expect(runs["unit tests"]?.logPath).toBe(join(dir.path, "logs", "unit_tests.log"));
    expect(readFileSync(runs["unit tests"]?.logPath ?? "", "utf8")).toBe("one\ntwo\n");
    expect(readFileSync(runs.lint?.logPath ?? "", "utf8")).toBe("clean\n");
  });

  it("decodes UTF-8 split across reads, in the log and the tail (issue 15: é became U+FFFD)", async () => {
    // "é" is C3 A9 and "修" is E4 BF AE: each is written in two parts, a pause apart,
    // so the reader gets them in separate chunks, on stdout and on stderr.
    const split =
      "printf 'caf\\303'; sleep 0.3; printf '\\251 ok\\n'; printf '\\344\\277' >&2; sleep 0.3; printf '\\256\\n' >&2";
    const [result] = await run([check("utf8", split)]);
    expect(result?.outcome).toBe("passed");
    const log = readFileSync(result?.logPath ?? "", "utf8");
    expect(log).toBe("café ok\n修\n");
    expect(result?.tail).toBe("café ok\n修");
    expect(log).not.toContain("\uFFFD");
  });

  it("stops everything when its signal aborts", async () => {
    dir = makeTempDir();
    const controller = new AbortController();
    const pending = runChecks([check("long", "sleep 30"), check("after", "true", ["long"])], {
      cwd: dir.path,
      env: dir.env,
      logDir: join(dir.path, "logs"),
      failFast: true,
      parallelism: 2,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.kind === "start") controller.abort();
      },
    });
    const runs = byName(await pending);
    expect(runs.long?.outcome).toBe("stopped");
    expect(runs.after).toMatchObject({ outcome: "skipped", reason: "interrupted" });
  });
});
