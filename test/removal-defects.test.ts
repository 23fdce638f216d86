import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commonDirOf, worktreePaths } from "./helpers/fleet.js";
import { appendEvents, beginEvent } from "./helpers/logbook.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Issue 15's removal defects, end to end through the built binary: every plan
 * that removes a checkout names its ignored files (item 7), a verb in flight
 * holds a berth (item 8), and berth deletes only branches it made (item 9).
 */

let repo: TestRepo | undefined;
let sleeper: ChildProcess | undefined;
afterEach(() => {
  sleeper?.kill("SIGKILL");
  sleeper = undefined;
  repo?.cleanup();
});

interface Berth {
  id: string;
  branch: string;
  path: string;
}

function setUp(config = "") {
  repo = makeRepo({ config });
  const r = repo;
  const berth = (args: string[], cwd = r.path) => runBerth(args, { cwd, env: r.env });
  const start = async (name: string): Promise<Berth> => {
    const run = await berth(["start", name, "--json"]);
    if (run.code !== 0) throw new Error(`start ${name}: ${run.stdout}${run.stderr}`);
    return run.json.data as Berth;
  };
  return { repo: r, berth, start };
}

/** Lands a berth's commit on the trunk by hand (fast-forward in the main checkout). */
function landByHand(r: TestRepo, b: Berth, file: string): void {
  r.write(file, `${file}\n`, b.path);
  r.commit(file, b.path);
  r.git(["merge", "-q", "--ff-only", b.branch]);
}

describe("removal plans name the ignored files that go (item 7)", () => {
  it("prune --dry-run shows, per berth, ignored files, bytes and the largest paths, in JSON and text", async () => {
    const f = setUp();
    f.repo.write(".gitignore", "build/\n*.log\n");
    f.repo.commit("ignore build output");
    const b = await f.start("built");
    mkdirSync(join(b.path, "build"), { recursive: true });
    writeFileSync(join(b.path, "build", "bundle.js"), "x".repeat(5000));
    writeFileSync(join(b.path, "debug.log"), "y".repeat(300));
    landByHand(f.repo, b, "built.txt");

    const dry = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    const [row] = dry.json.data.sections.landed;
    expect(row).toMatchObject({ kind: "worktree", id: b.id });
    expect(row.ignored).toEqual({
      files: 2,
      bytes: 5300,
      largest: [
        { path: "build", bytes: 5000 },
        { path: "debug.log", bytes: 300 },
      ],
    });
    const text = await f.berth(["worktree", "prune", "--dry-run"]);
    expect(text.stdout).toContain(
      "2 ignored file(s), 5.2 KiB (largest: build 4.9 KiB, debug.log 300 bytes)",
    );
  });
});

describe("a verb in flight holds a berth (item 8)", () => {
  async function inFlight(f: ReturnType<typeof setUp>, b: Berth, verb: string): Promise<void> {
    // A live process on this host, recorded as running `verb` in the berth.
    sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
    appendEvents(f.repo.path, [
      beginEvent({
        at: new Date().toISOString(),
        verb,
        branch: b.branch,
        path: b.path,
        pid: sleeper.pid as number,
      }),
    ]);
  }

  it("prune --yes skips a landed berth a verb is running in, and says why", async () => {
    const f = setUp("[logbook]\nenabled = true\n");
    const b = await f.start("awaiting");
    landByHand(f.repo, b, "awaiting.txt");
    await inFlight(f, b, "await");

    const prune = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(prune.code).toBe(0);
    expect(worktreePaths(f.repo)).toContain(b.path);
    expect(prune.json.data.sections.landed).toEqual([]);
    expect(prune.json.hints.join("\n")).toContain(
      `${b.id} has landed but is kept: a verb is in flight there (running await)`,
    );
  });

  it("a begin whose process is gone from this host (a killed verb) holds nothing", async () => {
    const f = setUp("[logbook]\nenabled = true\n");
    const b = await f.start("killed");
    landByHand(f.repo, b, "killed.txt");
    const gone = spawn("true", [], { stdio: "ignore" });
    await new Promise((done) => gone.on("exit", done));
    appendEvents(f.repo.path, [
      beginEvent({
        at: new Date().toISOString(),
        verb: "gate",
        branch: b.branch,
        path: b.path,
        pid: gone.pid as number,
      }),
    ]);

    const status = await f.berth(["status", "--json"]);
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === b.path);
    expect(row.running).toBe("interrupted gate");
    const prune = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(prune.code).toBe(0);
    expect(worktreePaths(f.repo)).not.toContain(b.path);
  });

  it("drop refuses a berth mid-gate without --force, naming the verb; --force drops it", async () => {
    const f = setUp("[logbook]\nenabled = true\n");
    const b = await f.start("gating");
    await inFlight(f, b, "gate");

    const refused = await f.berth(["worktree", "drop", b.id, "--yes", "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toContain("a verb is in flight there (running gate)");
    expect(worktreePaths(f.repo)).toContain(b.path);

    const forced = await f.berth(["worktree", "drop", b.id, "--force", "--yes", "--json"]);
    expect(forced.code).toBe(0);
    expect(worktreePaths(f.repo)).not.toContain(b.path);
  });

  it("park refuses a berth mid-gate (it has no --force), naming the verb; once it finished, park parks", async () => {
    const f = setUp("[logbook]\nenabled = true\n");
    const b = await f.start("gating");
    f.repo.write("work.txt", "committed\n", b.path);
    f.repo.commit("work", b.path);
    await inFlight(f, b, "gate");

    const refused = await f.berth(["worktree", "park", b.id, "--yes", "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toBe(
      `${b.id}: a verb is in flight there (running gate); parking removes the checkout under it. Park it once that verb has finished.`,
    );
    expect(refused.json.error.next).toBe(`berth worktree park ${b.id}`);
    expect(worktreePaths(f.repo)).toContain(b.path);

    sleeper?.kill("SIGKILL");
    await new Promise((done) => sleeper?.on("exit", done));
    const parked = await f.berth(["worktree", "park", b.id, "--yes", "--json"]);
    expect(parked.code, parked.stdout).toBe(0);
    expect(worktreePaths(f.repo)).not.toContain(b.path);
    expect(f.repo.git(["branch", "--list", b.branch])).toContain(b.branch);
  });
});

describe("berth deletes only branches it made (item 9)", () => {
  it("a hand-made, merged branch under the prefix is listed as not made by berth and kept", async () => {
    const f = setUp();
    f.repo.write("hand.txt", "by hand\n");
    f.repo.commit("hand work");
    f.repo.git(["branch", "berth/handmade"]);

    const dry = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.json.data.sections.landed).toEqual([]);
    expect(dry.json.data.sections.not_made_by_berth).toEqual([
      { branch: "berth/handmade", tip: f.repo.git(["rev-parse", "berth/handmade"]) },
    ]);
    const text = await f.berth(["worktree", "prune", "--dry-run"]);
    expect(text.stdout).toContain("not made by berth");
    expect(text.stdout).toContain("git branch -d berth/handmade");

    const apply = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(apply.code).toBe(0);
    expect(f.repo.git(["branch", "--list", "berth/handmade"])).toContain("berth/handmade");
  });

  it("a hand-made branch a plain git worktree holds is not listed with a git branch -d that git would refuse", async () => {
    const f = setUp();
    f.repo.git(["branch", "berth/manual"]);
    f.repo.git(["worktree", "add", "-q", join(f.repo.dir.path, "plain"), "berth/manual"]);

    const dry = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.json.data.sections.not_made_by_berth).toEqual([]);
    const text = await f.berth(["worktree", "prune", "--dry-run"]);
    expect(text.stdout).not.toContain("git branch -d berth/manual");
    expect(f.repo.git(["branch", "--list", "berth/manual"])).toContain("berth/manual");
  });

  it("start records its branch; the landed prune deletes it and forgets the record", async () => {
    const f = setUp();
    const b = await f.start("recorded");
    const records = join(commonDirOf(f.repo), "berth", "branches");
    expect(readdirSync(records)).toEqual([`${b.id}.json`]);
    landByHand(f.repo, b, "recorded.txt");

    const apply = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(apply.code).toBe(0);
    expect(f.repo.git(["branch", "--list", b.branch])).toBe("");
    expect(readdirSync(records)).toEqual([]);
  });

  it("a berth from before branch records is recorded when first seen by its teardown", async () => {
    const f = setUp();
    const b = await f.start("older");
    // As a berth started by an earlier version: a ready marker, no branch record.
    rmSync(join(commonDirOf(f.repo), "berth", "branches"), { recursive: true, force: true });
    landByHand(f.repo, b, "older.txt");

    const apply = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(apply.code).toBe(0);
    // The ready marker proved berth made it: the branch goes with the berth.
    expect(f.repo.git(["branch", "--list", b.branch])).toBe("");
    expect(worktreePaths(f.repo)).toEqual([f.repo.path]);
  });
});
