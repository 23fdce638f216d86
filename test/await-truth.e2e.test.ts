import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { logbookLines } from "./helpers/logbook.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { startWithCommit } from "./helpers/train.js";
import { begun, sleep, startBackground, type Waiter } from "./helpers/waiter.js";

/**
 * Issue 16 end to end: the built binary answering `await` truly while other
 * processes land, reset, drop and reclaim what it waits for, continuing a
 * wait across calls, and the logbook and status saying what happened.
 */

let repo: TestRepo;
const running: Waiter[] = [];
afterEach(() => {
  for (const waiter of running.splice(0)) if (waiter.exit === null) waiter.kill("SIGKILL");
  repo?.cleanup();
});

function waiter(args: string[], cwd: string, env = repo.env): Waiter {
  const started = startBackground(args, cwd, env);
  running.push(started);
  return started;
}

const berth = (args: string[], cwd = repo.path, env = repo.env) => runBerth(args, { cwd, env });
const tipOf = (ref: string) => repo.git(["rev-parse", ref]);
const continuations = () => {
  const dir = join(repo.path, ".git", "berth", "await");
  return existsSync(dir) ? readdirSync(dir) : [];
};
const finishesOf = (pid: number) =>
  logbookLines(repo.path)
    .map((line) => JSON.parse(line))
    .filter((e) => e.event === "finish" && e.pid === pid);

describe("await --landed after accept, and after a reset", () => {
  it("a waiter woken by a real accept, and a fresh call after it, answer met with the landed commit", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const tip = tipOf(b.branch);
    const w = waiter(["await", "--landed", b.id, "--timeout", "60", "--json"], repo.path);
    await begun(w, repo.path);
    const accept = await berth(["accept", b.id, "--yes", "--json"]);
    expect(accept.code).toBe(0);
    const done = Date.now();
    const run = await w.done;
    expect(run.code).toBe(0);
    expect((w.exitedAt as number) - done).toBeLessThan(3000);
    expect(run.json.data).toMatchObject({ met: true, landed_commit: tip, pinned: [tip] });

    // The branch is gone: a new call answers from the landing log.
    expect(repo.git(["branch", "--list", b.branch])).toBe("");
    const fresh = await berth(["await", "--landed", b.branch, "--json"]);
    expect(fresh.code).toBe(0);
    expect(fresh.json.data).toMatchObject({
      met: true,
      met_by: "landed",
      landed_commit: tip,
      landing: { id: b.id, branch: b.branch, tip, new_trunk: tip },
    });
    const green = await berth(["await", "--green", b.id, "--json"]);
    expect(green.code).toBe(0);
    expect(green.json.data).toMatchObject({ met: true, met_by: "landed", landed_commit: tip });
  });

  it("a branch reset to the trunk while a waiter waits: not met, exit 124 at its timeout", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const work = tipOf(b.branch);
    const w = waiter(["await", "--landed", b.id, "--timeout", "4", "--json"], repo.path);
    await begun(w, repo.path);
    repo.commit("the trunk moves on");
    repo.git(["reset", "-q", "--hard", "main"], b.path);
    const run = await w.done;
    expect(run.code).toBe(124);
    expect(run.json.data).toMatchObject({ met: false, tip: tipOf("main"), pinned: [work] });
    const fresh = await berth(["await", "--landed", b.id, "--timeout", "0", "--json"]);
    expect(fresh.code).toBe(124);
    expect(fresh.json.data).toMatchObject({ met: false, pinned: [] });
  });
});

describe("a landing that carried an older tip of the awaited branch", () => {
  it("is not the pinned work landing: a stage that moved while the stack above it gated is not met", async () => {
    repo = makeRepo({
      config: `[gate]
checks = [{ name = "held", run = 'if [ -e "$BLOCK" ]; then touch "$GATING"; while [ -e "$BLOCK" ]; do sleep 0.05; done; fi' }]
`,
    });
    const block = join(repo.dir.path, "block");
    const gating = join(repo.dir.path, "gating");
    const env = { ...repo.env, BLOCK: block, GATING: gating };
    const a = await startWithCommit(repo, "a");
    const olderTip = tipOf(a.branch);
    const b = await startWithCommit(repo, "b", a);
    writeFileSync(block, "");
    const accept = berth(["accept", b.id, "--yes", "--json"], repo.path, env);
    for (let i = 0; i < 400 && !existsSync(gating); i++) await sleep(50);
    expect(existsSync(gating)).toBe(true);
    // The lower stage moves on while the stack above it is gated at its older tip.
    repo.write("a-more.txt", "more\n", a.path);
    const pinned = repo.commit("a: more work", a.path);
    const w = waiter(["await", "--landed", a.id, "--timeout", "5", "--json"], repo.path);
    await begun(w, repo.path);
    rmSync(block);
    const landed = await accept;
    expect(landed.code).toBe(0);
    expect(repo.git(["merge-base", "--is-ancestor", olderTip, "main"])).toBe("");

    const run = await w.done;
    expect(run.code).toBe(124);
    expect(run.json.data).toMatchObject({ met: false, pinned: [pinned] });
    const fresh = await berth(["await", "--landed", a.id, "--timeout", "0", "--json"]);
    expect(fresh.json.data.met).toBe(false);
  });
});

describe("a target that changes under the wait ends it at once with a fresh call's answer", () => {
  for (const how of ["dropped", "reclaimed"] as const) {
    it(`--green on a stage that is ${how} meanwhile: exit 1 within 3 s, naming the nearest container`, async () => {
      repo = makeRepo();
      const a = await startWithCommit(repo, "a");
      const b = await startWithCommit(repo, "b", a);
      const w = waiter(["await", "--green", a.id, "--timeout", "60", "--json"], repo.path);
      await begun(w, repo.path);
      await sleep(300);
      expect(w.exit).toBeNull();

      const change =
        how === "dropped"
          ? await berth(["worktree", "drop", a.id, "--force", "--yes", "--json"])
          : await berth(["worktree", "prune", "--contained", "--yes", "--json"]);
      expect(change.code).toBe(0);
      const changedAt = Date.now();
      const run = await w.done;
      expect(run.code).toBe(1);
      expect((w.exitedAt as number) - changedAt).toBeLessThan(3000);
      expect(run.json.error.code).toBe("unknown_target");
      expect(run.json.error.message).toContain(b.branch);
      expect(run.json.error.next).toBe(`berth await --green ${b.branch}`);
      expect(run.json.data).toMatchObject({ contained_by: b.branch });
      // A fresh call gives the same answer.
      const fresh = await berth(["await", "--green", a.id, "--timeout", "60", "--json"]);
      expect(fresh.code).toBe(1);
      expect(fresh.json.error).toEqual(run.json.error);
      expect(finishesOf(w.pid)).toMatchObject([{ outcome: "refused", target: a.branch }]);
    });
  }

  it("--trunk-moved started inside a berth that is then removed keeps watching and answers truly", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const start = tipOf("main");
    const w = waiter(["await", "--trunk-moved", "--timeout", "60", "--json"], b.path);
    await begun(w, repo.path);
    expect((await berth(["worktree", "drop", b.id, "--force", "--yes"])).code).toBe(0);
    expect(existsSync(b.path)).toBe(false);
    await sleep(2500); // A poll or two with the waiter's folder gone.
    expect(w.exit).toBeNull();
    const moved = repo.commit("the trunk moves");
    const run = await w.done;
    expect(run.code).toBe(0);
    expect(run.json.data).toMatchObject({
      met: true,
      trunk_tip_at_start: start,
      trunk_tip: moved,
    });
  });
});

describe("continuations: one wait over many short calls", () => {
  it("a trunk that moved between two calls counts for --trunk-moved; the handle is gone once met", async () => {
    repo = makeRepo();
    const start = tipOf("main");
    const first = await berth(["await", "--trunk-moved", "--timeout", "1", "--json"]);
    expect(first.code).toBe(124);
    const handle = first.json.data.resume as string;
    expect(handle).toMatch(/^[0-9a-f]{16}$/);
    expect(first.json.hints[0]).toContain(`berth await --resume ${handle}`);
    expect(continuations()).toEqual([`${handle}.json`]);

    // Between the calls (the agent's tool call was cut): the trunk moves.
    const moved = repo.commit("the trunk moves");
    const second = await berth(["await", "--resume", handle, "--timeout", "5", "--json"]);
    expect(second.code).toBe(0);
    expect(second.json.data).toMatchObject({
      met: true,
      resumed: true,
      resume: null,
      trunk_tip_at_start: start,
      trunk_tip: moved,
    });
    expect(continuations()).toEqual([]);
    const gone = await berth(["await", "--resume", handle, "--json"]);
    expect(gone.code).toBe(1);
    expect(gone.json.error.code).toBe("unknown_target");
  });

  it("--landed keeps its pins across calls: work pinned by the first call lands and is reset away before the second", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b", a);
    const pinned = tipOf(a.branch);
    const first = await berth(["await", "--landed", a.id, "--timeout", "0", "--json"]);
    expect(first.code).toBe(124);
    expect(first.json.data.pinned).toEqual([pinned]);
    const handle = first.json.data.resume as string;
    // Between the calls: b (carrying a's work) lands by hand, and a is reset to the new trunk.
    repo.git(["update-ref", "refs/heads/main", tipOf(b.branch), tipOf("main")]);
    repo.git(["reset", "-q", "--hard", "main"], a.path);
    // A fresh call sees a at a trunk commit with no landing record: nothing of its own.
    const fresh = await berth(["await", "--landed", a.id, "--timeout", "0", "--json"]);
    expect(fresh.code).toBe(124);
    const resumed = await berth(["await", "--resume", handle, "--timeout", "5", "--json"]);
    expect(resumed.code).toBe(0);
    expect(resumed.json.data).toMatchObject({ met: true, landed_commit: pinned, resumed: true });
  });
});

describe("the logbook says what happened, about which berth", () => {
  it("a timed-out await is `timeout`; a refused accept run from the main checkout names its target", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    repo.write("dirt.txt", "uncommitted\n", b.path);
    const waited = await berth(["await", "--landed", b.id, "--timeout", "0", "--json"]);
    expect(waited.code).toBe(124);
    const refused = await berth(["accept", b.id, "--yes", "--json"]);
    expect(refused.code).toBe(1);
    const unknown = await berth(["accept", "no-such-berth", "--yes", "--json"]);
    expect(unknown.json.error.code).toBe("unknown_target");

    const events = logbookLines(repo.path).map((line) => JSON.parse(line));
    const finishes = events.filter((e) => e.event === "finish");
    expect(finishes.map((e) => [e.verb, e.outcome, e.branch, e.target])).toEqual([
      ["await", "timeout", "main", b.branch],
      ["accept", "refused", "main", b.branch],
      ["accept", "refused", "main", "no-such-berth"],
    ]);
    const logbook = await berth(["logbook", "--branch", b.branch, "--json"]);
    const found = logbook.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(found.filter((e) => e.event === "finish").map((e) => e.verb)).toEqual([
      "await",
      "accept",
    ]);
    const human = await berth(["logbook", "--branch", b.id]);
    expect(human.stdout).toContain(`main -> ${b.branch}`);
    expect(human.stdout).toContain("timeout");
  });

  it("a Ctrl-C'd gate is `interrupted`; a SIGKILLed one shows as `interrupted gate` in status and still withholds the contained offer", async () => {
    repo = makeRepo();
    repo.write("berth.toml", `[gate]\nchecks = [{ name = "slow", run = "sleep 2" }]\n`);
    repo.commit("a slow gate");
    const a = await startWithCommit(repo, "a");
    await startWithCommit(repo, "b", a);

    const stopped = waiter(["gate", "--json"], a.path);
    await begun(stopped, repo.path, "gate");
    stopped.kill("SIGINT");
    expect((await stopped.done).code).toBe(1);
    expect(finishesOf(stopped.pid)).toMatchObject([
      { verb: "gate", outcome: "interrupted", error_code: "gate_failed", target: a.branch },
    ]);

    const killed = waiter(["gate", "--json"], a.path);
    await begun(killed, repo.path, "gate");
    killed.kill("SIGKILL");
    await killed.done;
    const status = await berth(["status", "--json"]);
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === a.path);
    expect(row.running).toBe("interrupted gate");
    expect(row.state).not.toBe("contained");
    const human = await berth(["status"]);
    expect(human.stdout).toContain("interrupted gate");
    expect(human.stdout).not.toContain("running interrupted");
  });
});

describe("a landing note needs a git identity", () => {
  it("without one, accept lands, logs the landing and says the note was skipped", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const tip = tipOf(b.branch);
    repo.git(["config", "user.useConfigOnly", "true"]);
    const anonymous = Object.fromEntries(
      Object.entries(repo.env).filter(
        ([key]) => !/^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL)$/.test(key),
      ),
    );
    const accept = await berth(["accept", b.id, "--yes", "--json"], repo.path, anonymous);
    expect(accept.code).toBe(0);
    expect(tipOf("main")).toBe(tip);
    expect(accept.json.hints.join("\n")).toContain("no git identity is configured");
    expect(repo.git(["for-each-ref", "refs/notes/berth-landings"])).toBe("");
    const landed = await berth(["await", "--landed", b.branch, "--json"], repo.path, anonymous);
    expect(landed.json.data).toMatchObject({ met: true, landed_commit: tip });
  });
});
