import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  berthBranches,
  fleetSnapshot,
  ledgerFiles,
  markerLines,
  startBerth,
  worktreePaths,
} from "./helpers/fleet.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { stopAnAm } from "./helpers/stopped-am.js";

/** `berth worktree drop` end to end: refusals change nothing, forced drops keep a recovery ref. */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const RESOURCE = `[worktree.resources.db]
create = 'echo "create $BERTH_ID" >> "$MARKER"'
destroy = 'sleep "\${DESTROY_SLEEP:-0}"; echo "destroy $BERTH_ID" >> "$MARKER"'
`;

function setUp(config = RESOURCE) {
  repo = makeRepo({ config });
  repo.write(".gitignore", "build/\n");
  repo.commit("ignore build output");
  const marker = join(repo.dir.path, "marker");
  return { repo, marker, env: { ...repo.env, MARKER: marker } };
}

function recoveryRefs(r: TestRepo): string[] {
  const out = r.git(["for-each-ref", "--format=%(refname)", "refs/berth/recovery"]);
  return out === "" ? [] : out.split("\n");
}

describe("drop refuses work it would discard without --force", () => {
  it("names an uncommitted file and changes nothing", async () => {
    const { repo, marker, env } = setUp();
    const berth = await startBerth(repo, "dirty", env);
    repo.write("notes.txt", "half a thought\n", berth.path);
    const before = fleetSnapshot(repo);

    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("uncommitted");
    expect(run.json.error.message).toContain("notes.txt");
    expect(run.json.error.next).toContain("--force");
    expect(fleetSnapshot(repo)).toBe(before);
    expect(existsSync(join(berth.path, "notes.txt"))).toBe(true);
    expect(markerLines(marker)).toEqual([`create ${berth.id}`]);
  });

  it("names an unlanded commit and changes nothing; --force --yes drops it and a recovery ref keeps the commit", async () => {
    const { repo, marker, env } = setUp();
    const berth = await startBerth(repo, "unlanded", env);
    repo.write("feature.txt", "work\n", berth.path);
    const commit = repo.commit("add the feature", berth.path);
    const before = fleetSnapshot(repo);

    const refused = await runBerth(["worktree", "drop", berth.id, "--yes"], {
      cwd: repo.path,
      env,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("1 commit(s) not on the trunk");
    expect(refused.stderr).toContain(commit.slice(0, 8));
    expect(refused.stderr).toContain("add the feature");
    expect(refused.stderr).toContain("Nothing changed.");
    expect(fleetSnapshot(repo)).toBe(before);

    const forced = await runBerth(["worktree", "drop", berth.id, "--force", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(forced.code).toBe(0);
    expect(forced.json.data.forced).toBe(true);
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
    expect(markerLines(marker)).toEqual([`create ${berth.id}`, `destroy ${berth.id}`]);
    const refs = recoveryRefs(repo);
    expect(refs).toHaveLength(1);
    expect(refs[0]).toMatch(
      new RegExp(`^refs/berth/recovery/\\d{8}T\\d{6}\\.\\d{3}Z-${berth.id}$`),
    );
    expect(forced.json.data.recovery_ref).toBe(refs[0]);
    // Invariant 1: the commit is still reachable, from the recovery ref.
    repo.git(["merge-base", "--is-ancestor", commit, refs[0] as string]);
  });

  it("a commit subject and a file name with control characters: the refusal shows them as escapes, --json keeps them", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "spoof", env);
    repo.write("feature.txt", "work\n", berth.path);
    const subject = "innocent\x1b[2K\r\x1b[31mdestroys NOTHING (safe)\x1b[0m";
    repo.commit(subject, berth.path);
    repo.write("odd\x1b[31mname.txt", "uncommitted\n", berth.path);
    const refused = await runBerth(["worktree", "drop", berth.id, "--yes"], {
      cwd: repo.path,
      env,
    });
    expect(refused.code).toBe(1);
    expect(["\x1b", "\r"].filter((c) => refused.stderr.includes(c))).toEqual([]);
    expect(refused.stderr).toContain("innocent\\x1b[2K\\x0d\\x1b[31mdestroys NOTHING");
    expect(refused.stderr).toContain("odd\\x1b[31mname.txt");
    const json = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    const unlanded = json.json.data.reasons.find((r: { kind: string }) => r.kind === "unlanded");
    expect(unlanded.commits[0].subject).toBe(subject);
  });

  it("a berth whose branch was deleted under it: the plan names the commit in its HEAD log, and --force keeps it in a recovery ref", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "orphaned", env);
    repo.write("feature.txt", "feature\n", berth.path);
    const commit = repo.commit("add the feature", berth.path);
    repo.git(["update-ref", "-d", `refs/heads/${berth.branch}`]);

    const plan = await runBerth(["worktree", "drop", berth.id, "--force", "--dry-run", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(plan.code).toBe(0);
    expect(plan.json.data).toMatchObject({ head: null, delete_branch: null, recovery_tip: commit });
    expect(JSON.stringify(plan.json.data.reasons)).toContain(
      `its branch ${berth.branch} was deleted under it`,
    );
    const text = await runBerth(["worktree", "drop", berth.id, "--force", "--dry-run"], {
      cwd: repo.path,
      env,
    });
    expect(text.stdout).toContain(
      `recovery ref refs/berth/recovery/<utc>-${berth.id} at ${commit.slice(0, 8)}`,
    );
    expect(text.stdout).not.toContain(`keeps     branch ${berth.branch}`);

    const run = await runBerth(["worktree", "drop", berth.id, "--force", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(0);
    expect(existsSync(berth.path)).toBe(false);
    const refs = recoveryRefs(repo);
    expect(refs).toHaveLength(1);
    expect(repo.git(["rev-parse", refs[0] as string])).toBe(commit);
  });

  it("a truncated ledger file: drop, forced or not, refuses before anything (no recovery ref), naming the file; prune's hint names it whole; removed, the drop goes on", async () => {
    const { repo, marker, env } = setUp();
    const berth = await startBerth(repo, "torn", env);
    repo.write("feature.txt", "feature\n", berth.path);
    repo.commit("add the feature", berth.path);
    const [file] = ledgerFiles(repo);
    const ledgerFile = join(repo.path, ".git", "berth", "ledger", file as string);
    writeFileSync(ledgerFile, readFileSync(ledgerFile, "utf8").slice(0, 20));

    for (const force of [[], ["--force"]]) {
      const run = await runBerth(["worktree", "drop", berth.id, ...force, "--yes", "--json"], {
        cwd: repo.path,
        env,
      });
      expect(run.code).toBe(1);
      expect(run.json.error.code).toBe("teardown_failed");
      expect(run.json.error.message).toContain(
        "berth cannot tell which resource that file records",
      );
      expect(run.json.error.message).toContain(`rm -- ${ledgerFile}`);
      expect(run.json.error.next).toBe(`cat -- ${ledgerFile}`);
    }
    expect(recoveryRefs(repo)).toEqual([]);
    expect(existsSync(berth.path)).toBe(true);
    const prune = await runBerth(["worktree", "prune", "--dry-run", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(prune.json.hints).toContain(
      `unreadable ledger file ${ledgerFile}: not valid JSON (left alone)`,
    );

    rmSync(ledgerFile);
    const run = await runBerth(["worktree", "drop", berth.id, "--force", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(0);
    expect(existsSync(berth.path)).toBe(false);
    expect(recoveryRefs(repo)).toHaveLength(1);
    expect(markerLines(marker)).toEqual([`create ${berth.id}`]);
  });

  it("names a git am stopped half-way in a clean berth and changes nothing; --force drops it", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "patching", env);
    stopAnAm(repo, berth.path);
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain(
      `an am is in progress; continue it with git -C ${berth.path} am --continue`,
    );
    expect(run.json.error.next).toContain("--force");
    expect(fleetSnapshot(repo)).toBe(before);
    const forced = await runBerth(["worktree", "drop", berth.id, "--force", "--yes"], {
      cwd: repo.path,
      env,
    });
    expect(forced.code).toBe(0);
    expect(worktreePaths(repo)).toEqual([repo.path]);
  });

  it("drops a clean berth whose work is on the trunk without --force, and writes no recovery ref", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "clean", env);
    const run = await runBerth(["worktree", "drop", berth.branch, "--yes"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(0);
    expect(recoveryRefs(repo)).toEqual([]);
    expect(worktreePaths(repo)).toEqual([repo.path]);
  });
});

describe("commits on a branch the drop keeps", () => {
  it("a berth switched to a branch of its own: the drop keeps that branch and its commits, needs no --force, and the plan does not say it discards them", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "switched", env);
    repo.git(["switch", "-q", "-c", "other"], berth.path);
    repo.write("other.txt", "work\n", berth.path);
    const commit = repo.commit("other work", berth.path);

    const dry = await runBerth(["worktree", "drop", berth.id, "--dry-run"], {
      cwd: repo.path,
      env,
    });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("keeps     branch other");
    expect(dry.stdout).not.toContain("discards");
    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.data).toMatchObject({ forced: false, reasons: [], delete_branch: null });
    expect(existsSync(berth.path)).toBe(false);
    expect(repo.git(["rev-parse", "other"])).toBe(commit);
  });
});

describe("drop never touches what it must not", () => {
  it("refuses a locked worktree even with --force", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "locked", env);
    repo.git(["worktree", "lock", "--reason", "on a USB stick", berth.path]);
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "drop", berth.id, "--force", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("locked");
    expect(run.json.error.message).toContain("on a USB stick");
    expect(fleetSnapshot(repo)).toBe(before);
    expect(existsSync(berth.path)).toBe(true);
  });

  it("refuses the main checkout", async () => {
    const { repo, env } = setUp();
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "drop", repo.path, "--force", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("main checkout");
    expect(fleetSnapshot(repo)).toBe(before);
  });

  it("refuses a worktree berth did not create", async () => {
    const { repo, env } = setUp();
    const path = join(repo.dir.path, "hand-made");
    repo.git(["worktree", "add", "-q", "-b", "berth/hand-made", path]);
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "drop", path, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("ready marker");
    expect(fleetSnapshot(repo)).toBe(before);
    // By the id status shows for it, its folder's name: the same refusal, not "no such worktree".
    const status = await runBerth(["status", "--json"], { cwd: repo.path, env });
    const ids = status.json.data.worktrees.map((w: { id: string }) => w.id);
    expect(ids).toContain("hand-made");
    const byId = await runBerth(["worktree", "drop", "hand-made", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(byId.json.error.code).toBe("precondition_failed");
    expect(byId.json.error.message).toContain("ready marker");
    const main = ids.find((id: string) => id !== "hand-made");
    const mainById = await runBerth(["worktree", "drop", main, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(mainById.json.error.message).toContain("main checkout");
    expect(fleetSnapshot(repo)).toBe(before);
  });

  it("refuses an unknown target naming similar berths", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "similar", env);
    const run = await runBerth(["worktree", "drop", "similar", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("unknown_target");
    expect(run.json.data.candidates).toEqual([
      { id: berth.id, path: berth.path, branch: berth.branch },
    ]);
  });
});

describe("the confirmation", () => {
  it("refuses with confirmation_required and prints the plan, with the ignored files, when there is no terminal", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "confirm", env);
    mkdirSync(join(berth.path, "build"));
    writeFileSync(join(berth.path, "build", "a.o"), "x".repeat(1000));
    writeFileSync(join(berth.path, "build", "b.o"), "y".repeat(20));
    const before = fleetSnapshot(repo);

    const human = await runBerth(["worktree", "drop", berth.id], { cwd: repo.path, env });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(`Drop ${berth.id}`);
    expect(human.stderr).toContain("resources db");
    expect(human.stderr).toContain("2 ignored file(s), 1020 bytes (largest: build 1020 bytes)");
    expect(human.stderr).toContain(`branch ${berth.branch}`);
    expect(human.stderr).toContain(`next: berth worktree drop ${berth.id} --yes`);

    const json = await runBerth(["worktree", "drop", berth.id, "--json"], { cwd: repo.path, env });
    expect(json.json.error.code).toBe("confirmation_required");
    expect(json.json.plan.steps.map((s: { step: string }) => s.step)).toEqual([
      "destroy resource",
      "remove worktree",
      "delete branch",
    ]);
    expect(json.json.data.ignored).toEqual({
      files: 2,
      bytes: 1020,
      largest: [{ path: "build", bytes: 1020 }],
    });
    expect(fleetSnapshot(repo)).toBe(before);

    // With --yes no plan is shown: the result says which ignored files went.
    const dropped = await runBerth(["worktree", "drop", berth.id, "--yes"], {
      cwd: repo.path,
      env,
    });
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout + dropped.stderr).toContain(
      `  removed   ${berth.path}, with 2 ignored file(s), 1020 bytes (largest: build 1020 bytes)\n`,
    );
  });

  it("--dry-run prints the plan and changes nothing", async () => {
    const { repo, marker, env } = setUp();
    const berth = await startBerth(repo, "dry", env);
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "drop", berth.id, "--dry-run", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(0);
    expect(run.json.steps).toBeUndefined();
    expect(run.json.plan.steps).toHaveLength(3);
    expect(fleetSnapshot(repo)).toBe(before);
    expect(markerLines(marker)).toEqual([`create ${berth.id}`]);
  });
});

describe("the fleet lock", () => {
  it("lets two drops started together both finish, one waiting for the other", async () => {
    const { repo, marker, env } = setUp();
    const a = await startBerth(repo, "first", env);
    const b = await startBerth(repo, "second", env);
    const slow = { ...env, DESTROY_SLEEP: "1" };
    const [ra, rb] = await Promise.all([
      runBerth(["worktree", "drop", a.id, "--yes"], { cwd: repo.path, env: slow }),
      runBerth(["worktree", "drop", b.id, "--yes"], { cwd: repo.path, env: slow }),
    ]);
    expect([ra.code, rb.code, ra.stderr, rb.stderr]).toEqual([0, 0, "", ""]);
    expect(worktreePaths(repo)).toEqual([repo.path]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(
      markerLines(marker)
        .filter((l) => l.startsWith("destroy"))
        .sort(),
    ).toEqual([`destroy ${a.id}`, `destroy ${b.id}`].sort());
    expect(existsSync(join(repo.path, ".git", "berth", "lock"))).toBe(false);
  });

  it("recovers a lock left by a killed process", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "stale", env);
    const pid = await deadPid();
    writeFileSync(
      join(repo.path, ".git", "berth", "lock"),
      JSON.stringify({
        pid,
        hostname: hostname(),
        verb: "start",
        acquired_at: "2026-01-01T00:00:00Z",
        pid_start: null,
      }),
    );
    const run = await runBerth(["worktree", "drop", berth.id, "--yes"], { cwd: repo.path, env });
    expect(run.code).toBe(0);
    expect(worktreePaths(repo)).toEqual([repo.path]);
  });

  it("waits briefly for a live holder, then refuses with locked and changes nothing", async () => {
    const { repo, env } = setUp();
    const berth = await startBerth(repo, "busy", env);
    // This test process is alive: its lock must be respected.
    writeFileSync(
      join(repo.path, ".git", "berth", "lock"),
      JSON.stringify({
        pid: process.pid,
        hostname: hostname(),
        verb: "start",
        acquired_at: "2026-01-01T00:00:00Z",
        pid_start: null,
      }),
    );
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("locked");
    expect(run.json.error.message).toContain(`pid ${process.pid}`);
    expect(fleetSnapshot(repo)).toBe(before);
    expect(existsSync(berth.path)).toBe(true);
  });
});

/** The pid of a process that has exited (killed with SIGKILL). */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(child.pid as number));
    child.kill("SIGKILL");
  });
}
