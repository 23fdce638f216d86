import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fleetSnapshot } from "./helpers/fleet.js";
import { logbookLines } from "./helpers/logbook.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { startWithCommit } from "./helpers/train.js";
import { begun, sleep, startBackground, type Waiter } from "./helpers/waiter.js";

/**
 * `berth await` end to end: the built binary waiting in the background while
 * the fleet changes, measured from the change to the waiter's exit.
 */

let repo: TestRepo;
const running: Waiter[] = [];
afterEach(() => {
  for (const waiter of running.splice(0)) if (waiter.exit === null) waiter.kill("SIGKILL");
  repo?.cleanup();
});

/** Starts the binary in the background; killed after the test if still waiting. */
function startWaiter(args: string[], cwd: string): Waiter {
  const waiter = startBackground(args, cwd, repo.env);
  running.push(waiter);
  return waiter;
}

const tipOf = (ref: string) => repo.git(["rev-parse", ref]);

/** CPU seconds a live process and its reaped children (git) have used so far. */
function cpuSeconds(pid: number): number {
  const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14-17 of proc(5): utime, stime, cutime, cstime (this list starts at field 3).
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return ticks / ticksPerSecond;
}

describe("berth await (binary)", () => {
  it("--trunk-moved --timeout 0 with an unchanged trunk exits 124 after one look, without waiting for a poll", async () => {
    repo = makeRepo();
    const run = await runBerth(["await", "--trunk-moved", "--timeout", "0", "--json"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(run.code).toBe(124);
    expect(run.json).toMatchObject({
      ok: true,
      verb: "await",
      data: { met: false, condition: "trunk-moved", trunk_tip: tipOf("main") },
    });
    // One look, no wait: the verb's own time stays below the 2-second poll it would
    // otherwise sleep through (Node's start on a loaded machine is not its to answer for).
    expect(run.json.data.waited_ms).toBeLessThan(2000);
  });

  it("answers under safe.bareRepository = explicit, which refuses git found from inside .git", async () => {
    repo = makeRepo();
    const global = join(repo.dir.path, "explicit.gitconfig");
    writeFileSync(global, "[safe]\n\tbareRepository = explicit\n");
    const b = await startWithCommit(repo, "b");
    const env = { ...repo.env, GIT_CONFIG_GLOBAL: global };
    for (const condition of [["--trunk-moved"], ["--landed", b.id]]) {
      const run = await runBerth(["await", ...condition, "--timeout", "0", "--json"], {
        cwd: repo.path,
        env,
      });
      expect(run.code, run.stdout + run.stderr).toBe(124);
      expect(run.json).toMatchObject({ ok: true, data: { met: false } });
    }
  });

  it("--landed in the background exits 0 within 3 s of the landing; the caller's row shows running: await", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const c = await startWithCommit(repo, "c");
    const waiter = startWaiter(["await", "--landed", c.id, "--timeout", "60", "--json"], b.path);
    await begun(waiter, repo.path);

    const status = await runBerth(["status", "--json"], { cwd: repo.path, env: repo.env });
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === b.path);
    expect(row.running).toBe("await");
    expect(waiter.exit).toBeNull();

    const tip = tipOf(c.branch);
    const acceptStarted = Date.now();
    const accept = await runBerth(["accept", c.id, "--yes", "--json"], {
      cwd: repo.path,
      env: repo.env,
    });
    const acceptDone = Date.now();
    expect(accept.code).toBe(0);
    expect(accept.json.data.landing.trunk_landed).toBe(true);
    const run = await waiter.done;
    expect(run.code).toBe(0);
    // The landing happened inside accept's run: the waiter noticed it within 3 s of accept's end.
    expect(waiter.exitedAt as number).toBeGreaterThanOrEqual(acceptStarted);
    expect((waiter.exitedAt as number) - acceptDone).toBeLessThan(3000);
    expect(run.json.data).toMatchObject({
      met: true,
      condition: "landed",
      branch: c.branch,
      tip,
      trunk_tip: tip,
    });
    const finished = logbookLines(repo.path).filter(
      (line) => line.includes(`"invocation"`) && JSON.parse(line).pid === waiter.pid,
    );
    expect(finished.map((line) => JSON.parse(line).event)).toEqual(["begin", "finish"]);
  });

  it("--green in the background ignores a stale receipt and exits 0 within 3 s of a gate in B", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    expect((await runBerth(["gate"], { cwd: b.path, env: repo.env })).code).toBe(0);
    repo.write("more.txt", "more\n", b.path);
    repo.commit("after the gate: the receipt is stale", b.path);

    const waiter = startWaiter(["await", "--green", b.id, "--timeout", "60", "--json"], repo.path);
    await begun(waiter, repo.path);
    await sleep(1000);
    expect(waiter.exit).toBeNull(); // The stale receipt did not count.

    const gate = await runBerth(["gate"], { cwd: b.path, env: repo.env });
    const gatedAt = Date.now();
    expect(gate.code).toBe(0);
    const run = await waiter.done;
    expect(run.code).toBe(0);
    expect((waiter.exitedAt as number) - gatedAt).toBeLessThan(3000);
    const tip = tipOf(b.branch);
    expect(run.json.data).toMatchObject({ met: true, met_by: "receipt", branch: b.branch, tip });
    expect(run.json.hints[0]).toContain(`berth start --from ${tip}`);
  });

  it("--green on a reclaimed stage refuses at once with unknown_target, naming C and --landed", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b", a);
    const c = await startWithCommit(repo, "c", b);
    const reclaim = await runBerth(["worktree", "prune", "--contained", "--yes", "--json"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(reclaim.code).toBe(0);
    expect(reclaim.json.data.applied.map((r: { target: string }) => r.target)).toEqual([
      a.path,
      b.path,
    ]);
    const before = fleetSnapshot(repo);

    const startedAt = Date.now();
    const run = await runBerth(["await", "--green", a.id, "--timeout", "60", "--json"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(Date.now() - startedAt).toBeLessThan(10_000); // Not the 60 s timeout.
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("unknown_target");
    expect(run.json.error.message).toContain(c.branch);
    expect(run.json.error.message).toContain("--landed");
    expect(run.json.error.next).toBe(`berth await --green ${c.branch}`);
    expect(fleetSnapshot(repo)).toBe(before);

    const human = await runBerth(["await", "--green", a.id], { cwd: repo.path, env: repo.env });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(c.branch);
    expect(human.stderr).toContain("Nothing changed.");
  });

  it("refuses an unknown branch (exit 1) and anything but one condition (exit 2)", async () => {
    repo = makeRepo();
    const env = repo.env;
    const before = fleetSnapshot(repo);
    const unknown = await runBerth(["await", "--green", "no-such-branch", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.code).toBe("unknown_target");

    for (const args of [
      ["--green", "x", "--trunk-moved"],
      ["--green", "x", "--landed", "y"],
      [],
      ["--trunk-moved", "--timeout", "soon"],
      ["--trunk-moved", "--timeout", "-5"],
    ]) {
      const run = await runBerth(["await", ...args, "--json"], { cwd: repo.path, env });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.json.error.code).toBe("usage");
    }
    expect(fleetSnapshot(repo)).toBe(before);
  });

  it("Ctrl-C ends the wait promptly with exit 130 and met: false", async () => {
    repo = makeRepo();
    const waiter = startWaiter(["await", "--trunk-moved", "--json"], repo.path);
    await begun(waiter, repo.path);
    waiter.kill("SIGINT");
    const interruptedAt = Date.now();
    const run = await waiter.done;
    expect(run.code).toBe(130);
    expect((waiter.exitedAt as number) - interruptedAt).toBeLessThan(2000);
    expect(run.json.data).toMatchObject({ met: false, interrupted: true, timeout_s: 3300 });
  });

  it("a 20-second wait costs under 0.5 s of CPU (no busy polling)", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const c = await startWithCommit(repo, "c");
    const waiters = [
      startWaiter(["await", "--green", b.id, "--timeout", "60", "--json"], repo.path),
      startWaiter(["await", "--landed", c.id, "--timeout", "60", "--json"], repo.path),
    ];
    for (const waiter of waiters) await begun(waiter, repo.path);
    await sleep(500); // Past the first evaluation: measure the wait itself.
    const before = waiters.map((w) => cpuSeconds(w.pid));
    await sleep(20_000);
    const used = waiters.map((w, i) => cpuSeconds(w.pid) - (before[i] as number));
    for (const waiter of waiters) expect(waiter.exit).toBeNull();
    for (const seconds of used) expect(seconds).toBeLessThan(0.5);
    for (const waiter of waiters) waiter.kill("SIGINT");
    for (const waiter of waiters) expect((await waiter.done).code).toBe(130);
  });
});
