import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runGate } from "../src/core/landing/gate.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { berthBranches, fleetSnapshot, ledgerFiles, markerLines } from "./helpers/fleet.js";
import { gitShim, REAL_GIT } from "./helpers/git-shim.js";
import { waitFor } from "./helpers/processes.js";
import {
  BERTH_BIN,
  collectRun,
  makeRepo,
  runBerth,
  type TestRepo,
  testContext,
} from "./helpers/repo.js";

/**
 * `berth accept` end to end, through the built binary: it lands only a
 * proved commit, moves the trunk only by fast-forward, refuses before
 * changing anything, and a landing that stopped half-way is finished by
 * running it again.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

interface Berth {
  id: string;
  branch: string;
  path: string;
}

/** A resource whose create/destroy append a line to $MARKER (outside the repository). */
const RESOURCE = `[worktree.resources.db]
create = 'echo "create $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy $BERTH_ID" >> "$MARKER"'
`;

/** A check that appends the commit it ran on to $MARKER: proof of whether the gate ran, and where. */
const RECORDING_CHECK = `[gate]
checks = [{ name = "record", run = 'echo "check $(git rev-parse HEAD)" >> "$MARKER"' }]
`;

function setUp(config?: string) {
  repo = makeRepo(config === undefined ? {} : { config });
  const marker = join(repo.dir.path, "marker");
  return { repo, marker, env: { ...repo.env, MARKER: marker } };
}

async function start(
  r: TestRepo,
  env: NodeJS.ProcessEnv,
  name: string,
  from?: Berth,
  commits = 1,
): Promise<Berth> {
  const { ctx } = testContext(r.path, env);
  const result = await startBerth(ctx, { name, from: from?.branch });
  const data = result.data;
  if (!result.ok || !data) throw new Error(`start ${name} failed`);
  for (let i = 0; i < commits; i++) {
    r.write(`${name}-${i}.txt`, `${name} ${i}\n`, data.path);
    r.commit(`${name} ${i}`, data.path);
  }
  return { id: data.id, branch: data.branch, path: data.path };
}

async function gate(env: NodeJS.ProcessEnv, path: string): Promise<void> {
  const { ctx } = testContext(path, env);
  const result = await runGate(ctx, { parallelism: 1 });
  if (!result.ok) throw new Error(`gate failed: ${JSON.stringify(result.error)}`);
}

function tip(r: TestRepo, ref: string): string {
  return r.git(["rev-parse", ref]);
}

function isAncestor(r: TestRepo, a: string, b: string): boolean {
  try {
    r.git(["merge-base", "--is-ancestor", a, b]);
    return true;
  } catch {
    return false;
  }
}

/** Everything a refused accept must leave alone, the main checkout's files included. */
function snapshot(r: TestRepo): string {
  return JSON.stringify({
    fleet: fleetSnapshot(r),
    main: r.git(["status", "--porcelain=v1", "--untracked-files=all"]),
    landing: landingRecords(r),
  });
}

function landingRecords(r: TestRepo): string[] {
  const dir = join(r.path, ".git", "berth", "landing");
  return existsSync(dir) ? readdirSync(dir) : [];
}

function trunkMoves(r: TestRepo): number {
  return r.git(["reflog", "show", "--format=%gs", "refs/heads/main"]).split("\n").length;
}

describe("accept lands a proved commit", () => {
  it("with an honored receipt: no check runs, the trunk is the receipt's commit, the berth is gone, the main checkout follows", async () => {
    const { repo, marker, env } = setUp(`${RESOURCE}${RECORDING_CHECK}`);
    const berth = await start(repo, env, "feature");
    await gate(env, berth.path);
    const receipt = JSON.parse(
      readFileSync(join(repo.path, ".git/worktrees", berth.id, "berth/receipt.json"), "utf8"),
    );
    const linesBefore = markerLines(marker);
    expect(linesBefore.filter((l) => l.startsWith("check"))).toHaveLength(1);

    // From inside the berth, naming nothing: the default target is the berth you are in.
    const run = await runBerth(["accept", "--yes", "--json"], { cwd: berth.path, env });
    expect(run.code).toBe(0);
    expect(run.json.ok).toBe(true);
    expect(run.json.data.validated).toMatchObject({ commit: receipt.commit, by: "receipt" });
    expect(run.json.data.landing).toEqual({
      trunk_landed: true,
      main_checkout_updated: true,
      resources_destroyed: true,
      worktree_removed: true,
      branch_deleted: true,
    });
    // No check ran: the marker gained only the destroy line.
    expect(markerLines(marker)).toEqual([...linesBefore, `destroy ${berth.id}`]);
    expect(tip(repo, "refs/heads/main")).toBe(receipt.commit);
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(landingRecords(repo)).toEqual([]);
    expect(run.json.hints.join("\n")).toContain(`cd ${repo.path}`);

    // The main checkout has main checked out: its files are the new tip's, and it is clean.
    expect(repo.git(["status", "--porcelain", "--untracked-files=all"])).toBe("");
    expect(repo.git(["rev-parse", "HEAD"])).toBe(receipt.commit);
    expect(readFileSync(join(repo.path, "feature-0.txt"), "utf8")).toBe("feature 0\n");
    expect(repo.git(["diff", "HEAD", "--stat"])).toBe("");
    expect(repo.git(["reflog", "-1", "--format=%gs", "refs/heads/main"])).toBe(
      `berth accept ${berth.id}`,
    );
  });

  it("without a receipt the gate runs now; red refuses with gate_failed and changes nothing", async () => {
    const { repo, marker, env } = setUp(
      `[gate]\nchecks = [{ name = "unit", run = 'echo "check ran" >> "$MARKER"; echo "2 != 3"; exit 1' }]\n`,
    );
    const berth = await start(repo, env, "red");
    const before = snapshot(repo);

    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("gate_failed");
    expect(run.json.error.message).toContain('"unit"');
    expect(run.json.data.landing.trunk_landed).toBe(false);
    expect(run.json.data.gate.failures[0]).toMatchObject({ name: "unit", tail: "2 != 3" });
    expect(markerLines(marker)).toEqual(["check ran"]);
    expect(snapshot(repo)).toBe(before);
    expect(existsSync(berth.path)).toBe(true);

    const human = await runBerth(["accept", berth.id, "--yes"], { cwd: repo.path, env });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain("2 != 3");
    expect(human.stderr).toContain("Nothing landed");
    expect(snapshot(repo)).toBe(before);
  });

  it("a commit added after the receipt: the gate runs on the new tip, which is what lands", async () => {
    const { repo, marker, env } = setUp(RECORDING_CHECK);
    const berth = await start(repo, env, "later");
    await gate(env, berth.path);
    const gated = tip(repo, berth.branch);
    repo.write("later.txt", "one more thing\n", berth.path);
    const newer = repo.commit("one more thing", berth.path);

    const run = await runBerth(["accept", berth.branch, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(run.code).toBe(0);
    expect(run.json.data.validated).toMatchObject({ commit: newer, by: "gate" });
    expect(markerLines(marker)).toEqual([`check ${gated}`, `check ${newer}`]);
    expect(tip(repo, "refs/heads/main")).toBe(newer);
  });

  it("the trunk keeps moving under every landing: moved after the queue's bounded retries, nothing of the berth torn down, the trunk not rewound", async () => {
    // The check itself commits to the trunk in the main checkout while accept runs the gate.
    const { repo, marker, env } = setUp(
      `${RESOURCE}[gate]\nchecks = [{ name = "sneaky", run = 'git -C "$BERTH_REPO" commit -q --allow-empty -m "sneaky trunk commit"' }]\n`,
    );
    const berth = await start(repo, env, "racer");
    const berthTip = tip(repo, berth.branch);
    const trunkBefore = tip(repo, "refs/heads/main");

    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("moved");
    expect(run.json.data.landing.trunk_landed).toBe(false);
    const trunkAfter = tip(repo, "refs/heads/main");
    expect(trunkAfter).not.toBe(trunkBefore);
    expect(repo.git(["log", "-1", "--format=%s", "main"])).toBe("sneaky trunk commit");
    expect(isAncestor(repo, berthTip, "main")).toBe(false);
    expect(existsSync(berth.path)).toBe(true);
    expect(tip(repo, berth.branch)).toBe(berthTip);
    // The berth's own resource lives on; each throwaway integration checkout made and destroyed its own.
    const lines = markerLines(marker);
    expect(lines[0]).toBe(`create ${berth.id}`);
    expect(lines).not.toContain(`destroy ${berth.id}`);
    const created = lines.filter((l) => l.startsWith("create integrate-")).length;
    const destroyed = lines.filter((l) => l.startsWith("destroy integrate-")).length;
    expect(created).toBeGreaterThan(0);
    expect(destroyed).toBe(created);
    expect(isAncestor(repo, trunkBefore, "main")).toBe(true);
    expect(ledgerFiles(repo)).toHaveLength(1);
    expect(landingRecords(repo)).toEqual([]);
  });
});

describe("the plan of a berth behind the trunk", () => {
  it("says it lands through an integration commit, never a fast-forward to the berth's tip", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "behind");
    repo.write("trunk.txt", "the trunk moved on\n");
    repo.commit("trunk moves on");
    const before = snapshot(repo);
    const human = await runBerth(["accept", berth.id, "--dry-run"], { cwd: repo.path, env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("-> the integration commit (fast-forward;");
    const tip = repo.git(["rev-parse", berth.branch]);
    expect(human.stdout).not.toContain(`-> ${tip.slice(0, 8)}`);
    const json = await runBerth(["accept", berth.id, "--dry-run", "--json"], {
      cwd: repo.path,
      env,
    });
    const follow = json.json.plan.steps.find(
      (s: { step: string }) => s.step === "update main checkout",
    );
    expect(follow.detail).toBe("its files follow main to the integration commit");
    expect(snapshot(repo)).toBe(before);
  });
});

describe("accept refuses before changing anything", () => {
  it("a branch behind the trunk lands through an integration commit (trunk first parent), no update needed", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "behind");
    const berthTip = tip(repo, berth.branch);
    repo.write("trunk.txt", "moved on\n");
    const moved = repo.commit("trunk moves on");
    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code, run.stderr).toBe(0);
    const landed = tip(repo, "refs/heads/main");
    expect(repo.git(["rev-parse", `${landed}^1`])).toBe(moved);
    expect(repo.git(["rev-parse", `${landed}^2`])).toBe(berthTip);
    expect(run.json.data.validated).toMatchObject({ commit: landed, by: "gate" });
    expect(existsSync(berth.path)).toBe(false);
  });

  it("[acceptance].queue = false: a branch behind the trunk is refused with next berth update, nothing changed", async () => {
    const { repo, env, marker } = setUp(`${RECORDING_CHECK}\n[acceptance]\nqueue = false\n`);
    const berth = await start(repo, env, "behind");
    const berthTip = tip(repo, berth.branch);
    repo.write("trunk.txt", "moved on\n");
    const moved = repo.commit("trunk moves on");
    const before = snapshot(repo);
    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("does not contain the tip of main");
    expect(run.json.error.message).toContain("[acceptance].queue = false");
    expect(run.json.error.next).toContain("berth update");
    expect(snapshot(repo)).toBe(before);
    expect(tip(repo, "refs/heads/main")).toBe(moved);
    expect(tip(repo, berth.branch)).toBe(berthTip);
    expect(markerLines(marker).filter((l) => l.startsWith("check "))).toEqual([]);
    const queue = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    expect(queue.json.data.entries).toEqual([]);

    // Updated, it contains the trunk and lands by fast-forward, as ever.
    const update = await runBerth(["update", "--json"], { cwd: berth.path, env });
    expect(update.code, update.stdout).toBe(0);
    const updated = tip(repo, berth.branch);
    const again = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(tip(repo, "refs/heads/main")).toBe(updated);
  });

  it("the main checkout on the trunk with a tracked change", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "main-dirty");
    repo.write("README.md", "edited in the main checkout\n");
    const before = snapshot(repo);
    const run = await runBerth(["accept", berth.id, "--yes"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("uncommitted change(s) to tracked files: README.md");
    expect(run.stderr).toContain("Nothing changed.");
    expect(snapshot(repo)).toBe(before);
    expect(readFileSync(join(repo.path, "README.md"), "utf8")).toBe(
      "edited in the main checkout\n",
    );
  });

  it("an untracked file in the berth", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "untracked");
    repo.write("scratch.txt", "not committed\n", berth.path);
    const before = snapshot(repo);
    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("scratch.txt");
    expect(run.json.error.message).toContain("1 untracked");
    expect(snapshot(repo)).toBe(before);
    expect(existsSync(join(berth.path, "scratch.txt"))).toBe(true);
  });

  it("untracked or ignored files in the main checkout that the landing would overwrite", async () => {
    const { repo, env } = setUp();
    repo.write(".gitignore", "build.log\n");
    repo.commit("ignore the build log");
    const berth = await start(repo, env, "overwrite");
    repo.write("build.log", "tracked on the berth\n", berth.path);
    repo.git(["add", "-f", "build.log"], berth.path);
    repo.commit("track the log", berth.path);

    for (const file of ["overwrite-0.txt", "build.log"]) {
      repo.write(file, "precious local file\n");
      const before = snapshot(repo);
      const run = await runBerth(["accept", berth.id, "--yes", "--json"], {
        cwd: repo.path,
        env,
      });
      expect(run.code).toBe(1);
      expect(run.json.error.message).toContain(
        "would overwrite untracked or ignored file(s) there",
      );
      expect(run.json.error.message).toContain(file);
      // The command it names lists the file, ignored or not.
      expect(run.json.error.next).toBe(`git -C ${repo.path} status --ignored --short`);
      expect(snapshot(repo)).toBe(before);
      expect(readFileSync(join(repo.path, file), "utf8")).toBe("precious local file\n");
      rmSync(join(repo.path, file));
    }
  });

  it("the main checkout's index locked by another git: refused before the trunk moves; once the lock is gone it lands", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "locked-index");
    const lock = join(repo.path, ".git", "index.lock");
    writeFileSync(lock, "");
    const before = snapshot(repo);
    const trunk = tip(repo, "main");
    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain(`its index is locked (${lock})`);
    expect(tip(repo, "main")).toBe(trunk);
    rmSync(lock);
    expect(snapshot(repo)).toBe(before);

    const again = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(again.code).toBe(0);
    expect(repo.git(["status", "--porcelain"])).toBe("");
  });

  it("a conflicting commit on the trunk in the main checkout while accept checks it can follow: the queue names the conflict, nothing changed", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "raced");
    await gate(env, berth.path);
    // A git on PATH that, at accept's second dry run of the main checkout's follow, first
    // commits the berth's file, other content, on the trunk there, as a person working there would.
    const count = join(repo.dir.path, "dry-runs");
    const PATH = gitShim(repo.dir.path, "committing", [
      'case " $* " in *" read-tree "*" -n "*)',
      `  echo x >> '${count}'`,
      `  if [ "$(wc -l < '${count}')" -eq 2 ]; then`,
      `    (unset GIT_INDEX_FILE; cd '${repo.path}' && echo mine > raced-0.txt && '${REAL_GIT}' add raced-0.txt && '${REAL_GIT}' commit -qm mine)`,
      "  fi ;;",
      "esac",
    ]);
    const shimmed = { ...env, PATH };

    const run = await runBerth(["accept", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env: shimmed,
    });
    // Not git's "would be overwritten" about the main checkout: the trunk moved, so the queue
    // tried the landing again on the new trunk, and found the berth's file conflicting.
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("rejected");
    expect(run.json.error.message).toContain("conflicts with main: raced-0.txt");
    const mine = tip(repo, "main");
    expect(repo.git(["log", "-1", "--format=%s", mine])).toBe("mine");
    expect(isAncestor(repo, tip(repo, berth.branch), "main")).toBe(false);
    expect(existsSync(berth.path)).toBe(true);
    expect(repo.git(["status", "--porcelain"])).toBe("");
  });

  it("the trunk checked out in a linked worktree; a berth with nothing of its own; a locked berth", async () => {
    const { repo, env } = setUp();
    const berth = await start(repo, env, "ok");
    repo.git(["switch", "-q", "--detach"]);
    const elsewhere = join(repo.dir.path, "trunk-elsewhere");
    repo.git(["worktree", "add", "-q", elsewhere, "main"]);
    let before = snapshot(repo);
    let run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain(`checked out in ${elsewhere}`);
    expect(snapshot(repo)).toBe(before);
    repo.git(["worktree", "remove", elsewhere]);

    const fresh = await start(repo, env, "fresh", undefined, 0);
    before = snapshot(repo);
    run = await runBerth(["accept", fresh.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("nothing to land");
    expect(run.json.error.next).toContain("berth worktree drop");
    expect(snapshot(repo)).toBe(before);

    repo.git(["worktree", "lock", "--reason", "agent busy", berth.path]);
    before = snapshot(repo);
    run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("agent busy");
    expect(snapshot(repo)).toBe(before);
  });

  it("--dry-run shows the plan; no terminal and no --yes hands it over for approval; neither changes the fleet", async () => {
    const { repo, marker, env } = setUp(`${RESOURCE}${RECORDING_CHECK}`);
    const berth = await start(repo, env, "planned", undefined, 2);
    const oldTrunk = tip(repo, "main");
    const newTip = tip(repo, berth.branch);
    const before = snapshot(repo);

    const dry = await runBerth(["accept", berth.id, "--dry-run", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(dry.code).toBe(0);
    expect(dry.json.data).toMatchObject({
      validated: { commit: newTip, by: "gate", checks: 1 },
      trunk: { name: "main", old: oldTrunk, new: newTip },
      commit_count: 2,
      resources: ["db"],
      delete_branch: berth.branch,
      main_checkout: { path: repo.path, follows_trunk: true },
    });
    expect(dry.json.data.commits.map((c: { subject: string }) => c.subject)).toEqual([
      "planned 1",
      "planned 0",
    ]);
    expect(dry.json.plan.steps.map((s: { step: string }) => s.step)).toEqual([
      "validate",
      "move trunk",
      "update main checkout",
      "destroy resource",
      "remove worktree",
      "delete branch",
    ]);
    const human = await runBerth(["accept", berth.id, "--dry-run"], { cwd: repo.path, env });
    expect(human.stdout).toContain("by running the gate now (1 check(s))");
    expect(human.stdout).toContain(`main ${oldTrunk.slice(0, 8)} -> ${newTip.slice(0, 8)}`);
    expect(human.stdout).toContain("planned 1");
    expect(human.stdout).toContain("resources db");

    // With no one to ask: handed over as an agent's accept is, waiting for a person's
    // approval; the next command is the person's, never one that confirms by itself.
    const unconfirmed = await runBerth(["accept", berth.id, "--json"], { cwd: repo.path, env });
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.json.error).toMatchObject({
      code: "awaiting_approval",
      next: `berth accept ${berth.id}`,
    });
    expect(unconfirmed.json.error.message).toContain(
      "an accept with no terminal to confirm on and no --yes lands only with a person's approval",
    );
    expect(unconfirmed.json.data.queue).toMatchObject({
      state: "awaiting_approval",
      authority: null,
    });
    expect(unconfirmed.json.plan.steps).toHaveLength(6);
    expect(markerLines(marker)).toEqual([`create ${berth.id}`]);
    expect(snapshot(repo)).toBe(before);
  });
});

describe("trains", () => {
  it("accepting the last stage of A -> B -> C lands all three; A and B show as landed", async () => {
    const { repo, env } = setUp();
    const a = await start(repo, env, "stage a");
    const b = await start(repo, env, "stage b", a);
    const c = await start(repo, env, "stage c", b);
    const tips = [a, b, c].map((s) => tip(repo, s.branch));

    const run = await runBerth(["accept", c.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(0);
    expect(run.json.data.validated.by).toBe("gate");
    expect(run.json.data.stages.map((s: { branch: string }) => s.branch)).toEqual([
      a.branch,
      b.branch,
    ]);
    for (const t of tips) expect(isAncestor(repo, t, "main")).toBe(true);
    expect(tip(repo, "main")).toBe(tips[2]);

    const status = await runBerth(["status", "--json"], { cwd: repo.path, env });
    const rows = status.json.data.worktrees as { branch: string; state: string }[];
    expect(rows.find((r) => r.branch === a.branch)?.state).toBe("landed");
    expect(rows.find((r) => r.branch === b.branch)?.state).toBe("landed");
    expect(rows.some((r) => r.branch === c.branch)).toBe(false);
    expect(berthBranches(repo).sort()).toEqual([a.branch, b.branch].sort());
  });
});

describe("a landing that stopped half-way is finished by accepting again", () => {
  it("a failed destroy: partial with the landing flags; fixed, accept <branch> finishes without moving the trunk again", async () => {
    const { repo, marker, env } = setUp();
    const failing = `[worktree.resources.db]\ncreate = 'echo "create $BERTH_ID" >> "$MARKER"'\ndestroy = 'echo "cannot drop"; exit 3'\n`;
    writeFileSync(join(repo.path, "berth.toml"), failing);
    const berth = await start(repo, env, "stuck");
    const landed = tip(repo, berth.branch);

    const first = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(first.code).toBe(1);
    expect(first.json.ok).toBe(false);
    expect(first.json.error).toMatchObject({
      code: "partial",
      next: `berth accept ${berth.branch}`,
    });
    expect(first.json.error.message).toContain("cannot drop");
    expect(first.json.data.landing).toEqual({
      trunk_landed: true,
      main_checkout_updated: true,
      resources_destroyed: false,
      worktree_removed: false,
      branch_deleted: false,
    });
    expect(tip(repo, "main")).toBe(landed);
    expect(existsSync(berth.path)).toBe(true);
    expect(ledgerFiles(repo)).toHaveLength(1);
    const status = await runBerth(["status", "--json"], { cwd: repo.path, env });
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === berth.path);
    expect(row.state).toBe("landed");
    const moves = trunkMoves(repo);

    // The recorded destroy command is what runs (spec section 7): fix it in the ledger.
    const [entryFile] = ledgerFiles(repo);
    const ledgerEntry = join(repo.path, ".git/berth/ledger", entryFile as string);
    const recorded = JSON.parse(readFileSync(ledgerEntry, "utf8"));
    recorded.destroy = `echo "destroy $BERTH_ID" >> "$MARKER"`;
    writeFileSync(ledgerEntry, JSON.stringify(recorded));
    const again = await runBerth(["accept", berth.branch, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(again.code).toBe(0);
    expect(again.json.data.resumed).toBe(true);
    expect(again.json.data.landing).toEqual({
      trunk_landed: true,
      main_checkout_updated: true,
      resources_destroyed: true,
      worktree_removed: true,
      branch_deleted: true,
    });
    expect(tip(repo, "main")).toBe(landed);
    expect(trunkMoves(repo)).toBe(moves);
    expect(markerLines(marker)).toEqual([`create ${berth.id}`, `destroy ${berth.id}`]);
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(landingRecords(repo)).toEqual([]);
  });

  it("the branch could not be deleted after the checkout was removed: accept <branch> from the main checkout deletes it", async () => {
    const { repo, env } = setUp();
    // The destroy command leaves a lock on the branch ref, so the branch deletion fails.
    const locking = `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'touch "$BERTH_REPO/.git/refs/heads/$BERTH_BRANCH.lock"'\n`;
    writeFileSync(join(repo.path, "berth.toml"), locking);
    const berth = await start(repo, env, "sticky");
    const landed = tip(repo, berth.branch);

    const first = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(first.code).toBe(1);
    expect(first.json.error.code).toBe("partial");
    expect(first.json.data.landing).toMatchObject({
      trunk_landed: true,
      resources_destroyed: true,
      worktree_removed: true,
      branch_deleted: false,
    });
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([berth.branch]);

    rmSync(join(repo.path, ".git/refs/heads", `${berth.branch}.lock`));
    const again = await runBerth(["accept", berth.branch, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(again.code).toBe(0);
    expect(again.json.data).toMatchObject({ resumed: true, path: null });
    expect(again.json.data.landing.branch_deleted).toBe(true);
    expect(berthBranches(repo)).toEqual([]);
    expect(tip(repo, "main")).toBe(landed);
    expect(landingRecords(repo)).toEqual([]);
  });
});

describe("two accepts of one berth at once", () => {
  it("the second, planned while the first tears the berth down, finds nothing left and answers ok, not partial", async () => {
    const { repo, marker, env } = setUp();
    const hold = join(repo.dir.path, "hold");
    const holding = `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'echo "destroy $BERTH_ID" >> "$MARKER"; while [ -e "$HOLD" ]; do sleep 0.05; done'\n`;
    writeFileSync(join(repo.path, "berth.toml"), holding);
    const berth = await start(repo, env, "twice");
    await gate(env, berth.path);
    const both = { ...env, HOLD: hold };
    writeFileSync(hold, "");
    const acceptIt = () =>
      collectRun(
        spawn(process.execPath, [BERTH_BIN, "accept", berth.id, "--yes", "--json"], {
          cwd: repo.path,
          env: both,
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
    const first = acceptIt();
    // The trunk has moved and the first is destroying the berth's resource, under the fleet lock.
    await waitFor("the first accept's destroy", () => markerLines(marker).length === 1, 30_000);
    const second = acceptIt();
    await waitFor("the second accept to begin", () => acceptBegins(repo) === 2, 30_000);
    rmSync(hold);

    const [one, two] = await Promise.all([first, second]);
    expect(one.code, one.stdout).toBe(0);
    // Before, it answered partial: "Still to do: destroy resources, remove the checkout, …".
    expect(two.code, two.stdout).toBe(0);
    expect(two.json.data.landing).toMatchObject({
      trunk_landed: true,
      resources_destroyed: true,
      worktree_removed: true,
      branch_deleted: true,
    });
    expect(markerLines(marker)).toEqual([`destroy ${berth.id}`]);
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
    expect(ledgerFiles(repo)).toEqual([]);
  });
});

/** How many accepts began applying (their logbook `begin`). */
function acceptBegins(r: TestRepo): number {
  const log = execFileSync(process.execPath, [BERTH_BIN, "logbook", "--json", "--verb", "accept"], {
    cwd: r.path,
    env: r.env,
    encoding: "utf8",
  });
  return log.split("\n").filter((line) => line.includes('"event":"begin"')).length;
}
