import { type ChildProcess, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  berthBranches,
  ledgerFiles,
  markerLines,
  startBerth,
  worktreePaths,
} from "./helpers/fleet.js";
import { gitShim, REAL_GIT } from "./helpers/git-shim.js";
import { isGone, leftovers, recordedPid, waitFor } from "./helpers/processes.js";
import { BERTH_BIN, collectRun, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Ctrl-C (or SIGTERM) while `start`, `drop`, `park`, `prune` or `update`
 * runs a project command. The
 * command runs in its own process group, so the terminal's signal never
 * reaches it: berth must stop it, then undo (start) or stop before the next
 * step (drop), and say so. Before, berth died at once: the command ran on as
 * an orphan, a started berth was left half made, and a re-run drop destroyed
 * a resource the orphan was still destroying.
 */

let repo: TestRepo | undefined;
const spawned = leftovers();
afterEach(() => {
  spawned.killAll();
  repo?.cleanup();
});

/** A long-running child the command starts, recorded so the test can watch it. */
const LONG = 'sleep 300 & echo $! > "$PIDFILE"; wait';

function setUp(config: string): { env: NodeJS.ProcessEnv; log: string; pidFile: string } {
  repo = makeRepo();
  repo.write("berth.toml", config);
  repo.commit("berth.toml");
  const log = join(repo.dir.path, "commands.log");
  const pidFile = join(repo.dir.path, "command.pid");
  return { env: { ...repo.env, LOG: log, PIDFILE: pidFile }, log, pidFile };
}

/** berth in a process group of its own, as a shell runs a foreground job. */
function spawnBerth(args: string[], cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [BERTH_BIN, ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
}

/** What a terminal's Ctrl-C does: SIGINT to berth's whole group (its git processes too). */
async function ctrlCOnceRunning(child: ChildProcess, pidFile: string): Promise<number> {
  await waitFor("the project command to start", () => recordedPid(pidFile) !== null, 30_000);
  const sleeper = recordedPid(pidFile) as number;
  spawned.add(sleeper);
  expect(isGone(sleeper)).toBe(false);
  process.kill(-(child.pid as number), "SIGINT");
  return sleeper;
}

async function lastFinish(verb: string): Promise<Record<string, unknown>> {
  const r = repo as TestRepo;
  const run = await runBerth(["logbook", "--json", "--verb", verb], { cwd: r.path, env: r.env });
  const events = run.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return events.filter((e) => e.event === "finish").at(-1) ?? {};
}

describe("Ctrl-C during berth start", () => {
  it("while a resource is created: the command is stopped and the whole run undone", async () => {
    const { env, log, pidFile } = setUp(
      `[worktree.resources.db]\ncreate = 'echo "create $BERTH_RESOURCE" >> "$LOG"; ${LONG}'\ndestroy = 'echo "destroy $BERTH_RESOURCE" >> "$LOG"'\n`,
    );
    const r = repo as TestRepo;
    const child = spawnBerth(["start", "one", "--json"], r.path, env);
    const done = collectRun(child);
    const sleeper = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toMatch(/interrupted/);
    expect(run.json.error.message).toMatch(/Everything this run created was undone/);
    await waitFor("the create command's child to end", () => isGone(sleeper), 5_000);
    // The undo ran the destroy, once; the fleet is as it was.
    expect(markerLines(log)).toEqual(["create db", "destroy db"]);
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(berthBranches(r)).toEqual([]);
    expect(ledgerFiles(r)).toEqual([]);
    expect(await lastFinish("start")).toMatchObject({ outcome: "interrupted" });
  }, 60_000);

  it("while a setup step runs: the step is stopped and its resources destroyed", async () => {
    const { env, log, pidFile } = setUp(
      `[worktree.setup]\nsteps = ['${LONG}']\n\n[worktree.resources.db]\ncreate = 'echo "create $BERTH_RESOURCE" >> "$LOG"'\ndestroy = 'echo "destroy $BERTH_RESOURCE" >> "$LOG"'\n`,
    );
    const r = repo as TestRepo;
    const child = spawnBerth(["start", "two", "--json"], r.path, env);
    const done = collectRun(child);
    const sleeper = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    expect(run.json.error.message).toMatch(/setup step 1 was interrupted/);
    await waitFor("the setup step's child to end", () => isGone(sleeper), 5_000);
    expect(markerLines(log)).toEqual(["create db", "destroy db"]);
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(berthBranches(r)).toEqual([]);
    expect(ledgerFiles(r)).toEqual([]);
  }, 60_000);
});

describe("Ctrl-C during berth worktree drop", () => {
  it("stops the destroy, keeps its record and the checkout; dropping again destroys it once", async () => {
    const { env, log, pidFile } = setUp(
      `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'if [ -e "$SLOW" ]; then ${LONG}; fi; echo "destroy $BERTH_RESOURCE" >> "$LOG"'\n`,
    );
    const r = repo as TestRepo;
    const slow = join(r.dir.path, "slow");
    writeFileSync(slow, "");
    const berth = await startBerth(r, "three", { ...env, SLOW: slow });
    const child = spawnBerth(["worktree", "drop", berth.id, "--yes", "--json"], r.path, {
      ...env,
      SLOW: slow,
    });
    const done = collectRun(child);
    const sleeper = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("teardown_failed");
    expect(run.json.error.message).toMatch(/interrupted/);
    expect(run.json.error.next).toBe(`berth worktree drop ${berth.id} --yes`);
    await waitFor("the destroy command's child to end", () => isGone(sleeper), 5_000);
    // Stopped before the destroy finished: still recorded, still checked out.
    expect(markerLines(log)).toEqual([]);
    expect(ledgerFiles(r)).toHaveLength(1);
    expect(worktreePaths(r)).toContain(berth.path);
    expect(await lastFinish("worktree drop")).toMatchObject({ outcome: "interrupted" });

    rmSync(slow);
    const again = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: r.path,
      env,
    });
    expect(again.code).toBe(0);
    expect(markerLines(log)).toEqual(["destroy db"]);
    expect(ledgerFiles(r)).toEqual([]);
    expect(worktreePaths(r)).toEqual([r.path]);
  }, 60_000);
});

describe("Ctrl-C during berth worktree prune --contained", () => {
  it("stops the row being torn down, starts no other, and says partial", async () => {
    const { env, log, pidFile } = setUp(
      `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'if [ -e "$SLOW" ]; then ${LONG}; fi; echo "destroy $BERTH_ID" >> "$LOG"'\n`,
    );
    const r = repo as TestRepo;
    const slow = join(r.dir.path, "slow");
    const stageEnv = { ...env, SLOW: slow };
    // A train of three: the first two stages travel inside the third.
    const stages: { id: string; path: string; branch: string }[] = [];
    for (const name of ["one", "two", "three"]) {
      const from = stages.at(-1)?.branch;
      const args = ["start", name, ...(from ? ["--from", from] : []), "--json"];
      const started = await runBerth(args, { cwd: r.path, env: stageEnv });
      expect(started.code).toBe(0);
      const stage = started.json.data as { id: string; path: string; branch: string };
      r.write(`${name}.txt`, `${name}\n`, stage.path);
      r.commit(name, stage.path);
      stages.push(stage);
    }
    writeFileSync(slow, "");
    const child = spawnBerth(
      ["worktree", "prune", "--contained", "--yes", "--json"],
      r.path,
      stageEnv,
    );
    const done = collectRun(child);
    const sleeper = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("partial");
    expect(run.json.error.next).toBe("berth worktree prune --contained");
    expect(run.json.data.applied).toEqual([]);
    const reasons = (run.json.data.skipped as { reason: string }[]).map((s) => s.reason);
    expect(reasons).toHaveLength(2);
    expect(reasons.filter((reason) => reason.startsWith("not started"))).toHaveLength(1);
    await waitFor("the destroy command's child to end", () => isGone(sleeper), 5_000);
    // Nothing was destroyed or removed: every stage is still there, still recorded.
    expect(markerLines(log)).toEqual([]);
    expect(ledgerFiles(r)).toHaveLength(3);
    for (const stage of stages) expect(worktreePaths(r)).toContain(stage.path);
    expect(await lastFinish("worktree prune")).toMatchObject({ outcome: "interrupted" });
  }, 90_000);
});

describe("Ctrl-C during berth update's ensure", () => {
  it("stops the ensure command and says how to finish it", async () => {
    const { env, pidFile } = setUp(
      `[worktree.setup]\nensure = ['if [ -e "$SLOW" ]; then ${LONG}; fi']\n`,
    );
    const r = repo as TestRepo;
    const slow = join(r.dir.path, "slow");
    const berth = await startBerth(r, "four", { ...env, SLOW: slow });
    r.write("later.txt", "later\n");
    const trunkTip = r.commit("later on the trunk");
    writeFileSync(slow, "");
    const child = spawnBerth(["update", "--json"], berth.path, { ...env, SLOW: slow });
    const done = collectRun(child);
    const sleeper = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("partial");
    expect(run.json.error.message).toMatch(/interrupted/);
    expect(run.json.error.next).toBe("berth worktree setup");
    await waitFor("the ensure command's child to end", () => isGone(sleeper), 5_000);
    // The merge it finished before the ensure stays: the berth has the trunk's commit.
    expect(r.git(["merge-base", "--is-ancestor", trunkTip, "HEAD"], berth.path)).toBe("");
    expect(await lastFinish("update")).toMatchObject({ outcome: "interrupted" });
  }, 60_000);
});

describe("Ctrl-C during berth worktree park", () => {
  it("stops the destroy and keeps the checkout, its record and its branch", async () => {
    const { env, log, pidFile } = setUp(
      `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'if [ -e "$SLOW" ]; then ${LONG}; fi; echo "destroy $BERTH_RESOURCE" >> "$LOG"'\n`,
    );
    const r = repo as TestRepo;
    const slow = join(r.dir.path, "slow");
    const berth = await startBerth(r, "five", { ...env, SLOW: slow });
    r.write("five.txt", "five\n", berth.path);
    r.commit("five", berth.path);
    writeFileSync(slow, "");
    const child = spawnBerth(["worktree", "park", berth.id, "--yes", "--json"], r.path, {
      ...env,
      SLOW: slow,
    });
    const done = collectRun(child);
    const sleeper = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    expect(run.json.error.message).toMatch(/interrupted/);
    await waitFor("the destroy command's child to end", () => isGone(sleeper), 5_000);
    expect(markerLines(log)).toEqual([]);
    expect(ledgerFiles(r)).toHaveLength(1);
    expect(worktreePaths(r)).toContain(berth.path);
    expect(berthBranches(r)).toEqual([berth.branch]);
    expect(await lastFinish("worktree park")).toMatchObject({ outcome: "interrupted" });
  }, 60_000);
});

describe("Ctrl-C while git makes the checkout", () => {
  it("the half-made checkout and its branch are removed", async () => {
    const { env, pidFile } = setUp("");
    const r = repo as TestRepo;
    // git makes the checkout, then holds still as a slow `worktree add` would: Ctrl-C lands there.
    const PATH = gitShim(
      r.dir.path,
      "slow-add",
      [
        'case " $* " in *" worktree add "*)',
        `  '${REAL_GIT}' "$@" || exit $?`,
        '  echo $$ > "$PIDFILE"; sleep 300; exit 1 ;;',
        "esac",
      ],
      env.PATH,
    );
    const child = spawnBerth(["start", "six", "--json"], r.path, { ...env, PATH });
    const done = collectRun(child);
    const shim = await ctrlCOnceRunning(child, pidFile);

    const run = await done;
    expect(run.code).toBe(1);
    await waitFor("the slow git to end", () => isGone(shim), 5_000);
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(berthBranches(r)).toEqual([]);
    expect(ledgerFiles(r)).toEqual([]);
  }, 60_000);
});

describe("a stop signal after the last step a verb could stop", () => {
  it("drop finishes, and the logbook says ok, not interrupted", async () => {
    const { env, pidFile } = setUp("");
    const r = repo as TestRepo;
    const berth = await startBerth(r, "seven", env);
    // git's removal of the checkout holds still: the signal comes while it runs.
    const PATH = gitShim(
      r.dir.path,
      "slow-remove",
      [
        'case " $* " in *" worktree remove "*)',
        '  echo $$ > "$PIDFILE"; while [ -e "$PIDFILE" ]; do sleep 0.05; done ;;',
        "esac",
      ],
      env.PATH,
    );
    const child = spawnBerth(["worktree", "drop", berth.id, "--yes", "--json"], r.path, {
      ...env,
      PATH,
    });
    const done = collectRun(child);
    await waitFor("git's removal to start", () => recordedPid(pidFile) !== null, 30_000);
    // To berth alone (a `kill`, not a terminal's Ctrl-C): git goes on and finishes.
    process.kill(child.pid as number, "SIGTERM");
    await sleep(300);
    rmSync(pidFile);

    const run = await done;
    expect(run.code, run.stdout).toBe(0);
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(await lastFinish("worktree drop")).toMatchObject({ outcome: "ok" });
  }, 60_000);
});
