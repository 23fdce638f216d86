import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { surveyFleet } from "../src/core/fleet/survey.js";
import { runGate } from "../src/core/landing/gate.js";
import { applyPark, planPark } from "../src/core/lifecycle/park.js";
import { teardownTargetOf } from "../src/core/lifecycle/removal-facts.js";
import { applyTeardown } from "../src/core/lifecycle/teardown.js";
import { resolveTarget } from "../src/core/repo/berth-target.js";
import { openRepository } from "../src/core/repo/repository.js";
import { readGitFile } from "../src/io/admin-dirs.js";
import { receiptPath } from "../src/io/receipt-file.js";
import { fleetSnapshot, startBerth } from "./helpers/fleet.js";
import { gitShim } from "./helpers/git-shim.js";
import { refusal } from "./helpers/refusal.js";
import {
  makeRepo,
  makeSubmoduleOrigin,
  runBerth,
  submodule,
  type TestRepo,
  testContext,
} from "./helpers/repo.js";

/**
 * Edits in files flagged `--assume-unchanged` / `--skip-worktree` are
 * invisible to `git status`. Only `drop --force` may destroy them (spec
 * invariant 2), and a gate must never prove contents its commit does not
 * hold (invariant 3): drop, park, the teardown and the gate look for them.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A berth holding config.ini (assume-unchanged) and t2.txt (skip-worktree), both edited. */
async function hiddenEditsBerth(config?: string) {
  repo = makeRepo(config === undefined ? {} : { config });
  const r = repo;
  r.write("config.ini", "cfg\n");
  r.write("t2.txt", "t\n");
  r.commit("base");
  const berth = await startBerth(r, "au");
  r.git(["update-index", "--assume-unchanged", "config.ini"], berth.path);
  r.git(["update-index", "--skip-worktree", "t2.txt"], berth.path);
  r.write("config.ini", "cfg\nmy local edits\n", berth.path);
  r.write("t2.txt", "t\nmore local edits\n", berth.path);
  expect(r.git(["status", "--porcelain"], berth.path)).toBe("");
  return { r, berth };
}

function edits(path: string) {
  return [
    readFileSync(join(path, "config.ini"), "utf8"),
    readFileSync(join(path, "t2.txt"), "utf8"),
  ];
}

const EDITED = ["cfg\nmy local edits\n", "t\nmore local edits\n"];

describe("worktree drop counts hidden edits as uncommitted changes", () => {
  it("a plain drop --yes refuses, naming the files and how to unhide them, and changes nothing; --force drops", async () => {
    const { r, berth } = await hiddenEditsBerth();
    const before = fleetSnapshot(r);

    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("config.ini");
    expect(run.json.error.message).toContain("t2.txt");
    expect(run.json.error.message).toContain("update-index --no-assume-unchanged -- config.ini");
    expect(run.json.error.message).toContain("update-index --no-skip-worktree -- t2.txt");
    expect(run.json.data.reasons).toContainEqual({
      kind: "uncommitted",
      count: 2,
      files: ["config.ini", "t2.txt"],
      hidden: ["config.ini", "t2.txt"],
      reveal:
        `git -C ${berth.path} update-index --no-assume-unchanged -- config.ini && ` +
        `git -C ${berth.path} update-index --no-skip-worktree -- t2.txt`,
    });
    expect(fleetSnapshot(r)).toBe(before);
    expect(edits(berth.path)).toEqual(EDITED);

    const forced = await runBerth(["worktree", "drop", berth.id, "--force", "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(forced.code).toBe(0);
    expect(forced.json.data.forced).toBe(true);
    expect(existsSync(berth.path)).toBe(false);
  });

  it("a flagged file that is unedited, and a sparse skip-worktree file absent from disk, are no reason to force", async () => {
    repo = makeRepo();
    const r = repo;
    r.write("config.ini", "cfg\n");
    r.write("t2.txt", "t\n");
    r.commit("base");
    const berth = await startBerth(r, "flagged");
    r.git(["update-index", "--assume-unchanged", "config.ini"], berth.path);
    r.git(["update-index", "--skip-worktree", "t2.txt"], berth.path);
    rmSync(join(berth.path, "t2.txt"));

    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(0);
    expect(run.json.data.forced).toBe(false);
    expect(existsSync(berth.path)).toBe(false);
  });

  it("a flagged submodule with an edit inside is a reason to force: a plain drop refuses and the edit stays", async () => {
    repo = makeRepo();
    const r = repo;
    submodule(r, ["add", "-q", makeSubmoduleOrigin(r, "source"), "sub"]);
    r.commit("a submodule");
    const berth = await startBerth(r, "flagged-sub");
    submodule(r, ["update", "-q", "--init"], berth.path);
    r.git(["update-index", "--assume-unchanged", "sub"], berth.path);
    r.write("f.txt", "my edit inside\n", join(berth.path, "sub"));
    expect(r.git(["status", "--porcelain", "--ignore-submodules=none"], berth.path)).toBe("");

    const run = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.data.reasons).toContainEqual(
      expect.objectContaining({ kind: "uncommitted", hidden: ["sub"] }),
    );
    expect(readFileSync(join(berth.path, "sub", "f.txt"), "utf8")).toBe("my edit inside\n");
  });

  it("costs no git process on berth status, and only `ls-files -v` (no hash-object) in a drop with nothing flagged", async () => {
    repo = makeRepo();
    const r = repo;
    const berth = await startBerth(r, "counted");
    const log = join(r.dir.path, "git-calls");
    const PATH = gitShim(r.dir.path, "counting", [`echo "$*" >> '${log}'`]);
    const env = { ...r.env, PATH };

    expect((await runBerth(["status", "--json"], { cwd: r.path, env })).code).toBe(0);
    expect(readFileSync(log, "utf8")).not.toContain("ls-files -v");
    writeFileSync(log, "");

    expect(
      (await runBerth(["worktree", "drop", berth.id, "--yes"], { cwd: r.path, env })).code,
    ).toBe(0);
    const calls = readFileSync(log, "utf8").split("\n");
    // The force reasons, then the teardown's re-check: one each.
    expect(calls.filter((c) => c.includes("ls-files -v"))).toHaveLength(2);
    expect(calls.filter((c) => c.includes("hash-object"))).toEqual([]);
  });
});

describe("park and the teardown re-check see hidden edits", () => {
  it("park refuses, naming the files and the fix, and changes nothing", async () => {
    const { r, berth } = await hiddenEditsBerth();
    const { ctx } = testContext(r.path, r.env);
    const before = fleetSnapshot(r);
    const error = await refusal(planPark(ctx, { target: berth.id }));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("config.ini");
    expect(error.message).toContain("t2.txt");
    expect(error.message).toContain("assume-unchanged");
    expect(error.next).toContain(`update-index --no-assume-unchanged -- config.ini`);
    expect(error.next).toContain(`update-index --no-skip-worktree -- t2.txt`);
    expect(fleetSnapshot(r)).toBe(before);
    expect(edits(berth.path)).toEqual(EDITED);
  });

  it("park planned clean, then a hidden edit before the apply: the teardown re-check refuses and the checkout stays", async () => {
    repo = makeRepo();
    const r = repo;
    r.write("config.ini", "cfg\n");
    r.commit("base");
    const berth = await startBerth(r, "later");
    r.git(["update-index", "--assume-unchanged", "config.ini"], berth.path);
    const { ctx } = testContext(r.path, r.env);
    const plan = await planPark(ctx, { target: berth.id });
    r.write("config.ini", "cfg\nedited after the plan\n", berth.path);

    const error = await refusal(applyPark(ctx, plan));
    expect(error.message).toContain("config.ini");
    expect(existsSync(berth.path)).toBe(true);
    expect(readFileSync(join(berth.path, "config.ini"), "utf8")).toBe(
      "cfg\nedited after the plan\n",
    );
  });

  it("applyTeardown with requireClean refuses a checkout with hidden edits, naming them", async () => {
    const { r, berth } = await hiddenEditsBerth();
    const { ctx } = testContext(r.path, r.env);
    const repository = await openRepository(ctx);
    const worktree = resolveTarget(await surveyFleet(repository), r.path, berth.id, "test");
    const target = teardownTargetOf(worktree);
    if (target === null) throw new Error("no target");

    const result = await applyTeardown(repository, ctx, target, {
      force: false,
      requireClean: true,
    });
    expect(result.ok).toBe(false);
    expect(result.failure?.stage).toBe("changed");
    expect(result.failure?.reason).toContain("config.ini");
    expect(result.failure?.reason).toContain("t2.txt");
    expect(result.worktreeRemoved).toBe(false);
    expect(edits(berth.path)).toEqual(EDITED);
  });
});

const FLAG_CHECK = `[gate]\nchecks = [ { name = "check", run = "grep -q ^ok flag.txt" } ]\n`;

/** The commit says `broken`; the assume-unchanged file on disk says `ok` (repro-4). */
async function provedOnHiddenContents() {
  repo = makeRepo({ config: FLAG_CHECK });
  const r = repo;
  r.write("flag.txt", "ok\n");
  r.commit("base");
  const berth = await startBerth(r, "g");
  r.write("flag.txt", "broken\n", berth.path);
  const broken = r.commit("break it", berth.path);
  r.git(["update-index", "--assume-unchanged", "flag.txt"], berth.path);
  r.write("flag.txt", "ok\n", berth.path);
  return { r, berth, broken };
}

describe("the gate proves only what its commit holds", () => {
  it("refuses a checkout whose tested contents differ from its commit, naming the file and the fix; no receipt", async () => {
    const { r, berth } = await provedOnHiddenContents();
    const adminDir = (await readGitFile(berth.path)) as string;
    const { ctx } = testContext(berth.path, r.env);
    const error = await refusal(runGate(ctx, { parallelism: 1 }));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("flag.txt");
    expect(error.message).toContain("assume-unchanged");
    expect(error.next).toContain(
      `git -C ${berth.path} update-index --no-assume-unchanged -- flag.txt`,
    );
    expect(existsSync(receiptPath(adminDir))).toBe(false);
  });

  it("a flagged but unedited file, and a sparse skip-worktree file, do not stop a green gate", async () => {
    repo = makeRepo({ config: FLAG_CHECK });
    const r = repo;
    r.write("flag.txt", "ok\n");
    r.write("sparse.txt", "elsewhere\n");
    r.commit("base");
    const berth = await startBerth(r, "fine");
    r.git(["update-index", "--assume-unchanged", "flag.txt"], berth.path);
    r.git(["update-index", "--skip-worktree", "sparse.txt"], berth.path);
    rmSync(join(berth.path, "sparse.txt"));
    const { ctx } = testContext(berth.path, r.env);
    const result = await runGate(ctx, { parallelism: 1 });
    expect(result.ok).toBe(true);
    expect(result.data?.receipt.decision).toBe("written");
  });

  it("accept (repro-4) refuses the checkout the gate refused, and the trunk never gets the unproved commit", async () => {
    const { r, berth, broken } = await provedOnHiddenContents();
    const trunkBefore = r.git(["rev-parse", "main"]);
    const gate = await runBerth(["gate", "--json"], { cwd: berth.path, env: r.env });
    expect(gate.code).toBe(1);
    expect(gate.json.error.code).toBe("precondition_failed");

    const before = fleetSnapshot(r);
    const run = await runBerth(["accept", berth.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("flag.txt");
    expect(r.git(["rev-parse", "main"])).toBe(trunkBefore);
    expect(r.git(["branch", "--contains", broken, "main"])).toBe("");
    expect(fleetSnapshot(r)).toBe(before);
    expect(readFileSync(join(berth.path, "flag.txt"), "utf8")).toBe("ok\n");
  });

  it("accept with an honored receipt refuses a checkout holding hidden edits before the trunk moves", async () => {
    repo = makeRepo({ config: FLAG_CHECK });
    const r = repo;
    r.write("flag.txt", "ok\n");
    r.commit("base");
    const berth = await startBerth(r, "honored");
    r.write("work.txt", "work\n", berth.path);
    r.commit("work", berth.path);
    expect((await runBerth(["gate"], { cwd: berth.path, env: r.env })).code).toBe(0);
    r.git(["update-index", "--assume-unchanged", "flag.txt"], berth.path);
    r.write("flag.txt", "ok\nlocal notes\n", berth.path);
    const trunkBefore = r.git(["rev-parse", "main"]);
    const before = fleetSnapshot(r);

    const run = await runBerth(["accept", berth.id, "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("flag.txt");
    expect(r.git(["rev-parse", "main"])).toBe(trunkBefore);
    expect(fleetSnapshot(r)).toBe(before);
    expect(readFileSync(join(berth.path, "flag.txt"), "utf8")).toBe("ok\nlocal notes\n");
  });
});
