import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { surveyFleet } from "../src/core/fleet/survey.js";
import { applyDrop, planDrop } from "../src/core/lifecycle/drop.js";
import {
  pruneRecoveryRefs,
  RECOVERY_PREFIX,
  recoveryRefName,
  recoveryRefsBeyond,
} from "../src/core/lifecycle/recovery-refs.js";
import { teardownTargetOf } from "../src/core/lifecycle/removal-facts.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { applyTeardown } from "../src/core/lifecycle/teardown.js";
import { resolveTarget } from "../src/core/repo/berth-target.js";
import { openRepository } from "../src/core/repo/repository.js";
import { UserError } from "../src/errors.js";
import {
  berthBranches,
  fleetSnapshot,
  ledgerFiles,
  markerLines,
  worktreePaths,
} from "./helpers/fleet.js";
import { makeRepo, runBerth, type TestRepo, testContext } from "./helpers/repo.js";
import { stopAnAm } from "./helpers/stopped-am.js";

/** The shared teardown and the pieces around it, in process. */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const RESOURCES = `[worktree.resources.db]
create = 'echo "create db $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy db $BERTH_ID" >> "$MARKER"'
[worktree.resources.keep]
create = 'echo "create keep $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy keep $BERTH_ID" >> "$MARKER"'
gc = false
`;

async function setUp(config = RESOURCES) {
  repo = makeRepo({ config });
  const marker = join(repo.dir.path, "marker");
  const env = { ...process.env, MARKER: marker };
  const { ctx } = testContext(repo.path, env);
  const started = await startBerth(ctx, { name: "tear me" });
  const data = started.data as NonNullable<typeof started.data>;
  const repository = await openRepository(ctx);
  const survey = await surveyFleet(repository);
  const worktree = resolveTarget(survey, repo.path, data.id, "test");
  const target = teardownTargetOf(worktree);
  if (target === null) throw new Error("no target");
  return { repo, ctx, marker, data, repository, worktree, target };
}

describe("applyTeardown", () => {
  it("destroys resources newest first, removes the checkout, and verifies it is gone", async () => {
    const { repo, ctx, marker, data, repository, target } = await setUp();
    const result = await applyTeardown(repository, ctx, target, {
      force: false,
      requireClean: true,
    });
    expect(result).toMatchObject({
      ok: true,
      destroyed: ["keep", "db"],
      worktreeRemoved: true,
      failure: null,
    });
    expect(markerLines(marker)).toEqual([
      `create db ${data.id}`,
      `create keep ${data.id}`,
      `destroy keep ${data.id}`,
      `destroy db ${data.id}`,
    ]);
    expect(existsSync(data.path)).toBe(false);
    expect(worktreePaths(repo)).toEqual([repo.path]);
    expect(ledgerFiles(repo)).toEqual([]);
    // Teardown does not delete branches: its callers do, by compare-and-swap.
    expect(berthBranches(repo)).toEqual([data.branch]);
  });

  it("does nothing when HEAD moved since the plan", async () => {
    const { repo, ctx, marker, data, repository, worktree, target } = await setUp();
    repo.write("later.txt", "x\n", data.path);
    repo.commit("later", data.path);
    const result = await applyTeardown(repository, ctx, target, {
      force: false,
      requireClean: true,
      expectHead: worktree.entry.head,
    });
    expect(result.ok).toBe(false);
    expect(result.failure?.stage).toBe("changed");
    expect(result.failure?.reason).toContain("changed since the plan");
    expect(markerLines(marker)).toHaveLength(2);
    expect(existsSync(data.path)).toBe(true);
  });

  it("does nothing when a git operation was stopped half-way and a clean checkout was required", async () => {
    const { repo, ctx, data, repository, target } = await setUp();
    stopAnAm(repo, data.path);
    const result = await applyTeardown(repository, ctx, target, {
      force: false,
      requireClean: true,
    });
    expect(result.failure).toMatchObject({ stage: "changed" });
    expect(result.failure?.reason).toContain("an am is in progress; continue it with");
    expect(ledgerFiles(repo)).toHaveLength(2);
    expect(existsSync(join(data.path, ".git"))).toBe(true);
  });

  it("does nothing when the tree became dirty and a clean one was required", async () => {
    const { repo, ctx, data, repository, target } = await setUp();
    repo.write("new.txt", "x\n", data.path);
    const result = await applyTeardown(repository, ctx, target, {
      force: false,
      requireClean: true,
    });
    expect(result.failure).toMatchObject({ stage: "changed" });
    expect(ledgerFiles(repo)).toHaveLength(2);
    expect(existsSync(join(data.path, "new.txt"))).toBe(true);
  });

  it("housekeeping leaves a berth with a gc = false resource alone", async () => {
    const { repo, ctx, repository, target } = await setUp();
    const result = await applyTeardown(repository, ctx, target, {
      force: false,
      requireClean: true,
      housekeeping: true,
    });
    expect(result.failure).toMatchObject({ stage: "kept" });
    expect(result.failure?.reason).toContain("keep");
    expect(ledgerFiles(repo)).toHaveLength(2);
    expect(worktreePaths(repo)).toHaveLength(2);
  });

  it("refuses a checkout whose ready marker names another berth", async () => {
    const { repo, ctx, repository, target } = await setUp();
    const result = await applyTeardown(
      repository,
      ctx,
      { ...target, id: "someone-else" },
      {
        force: true,
        requireClean: false,
      },
    );
    expect(result.failure?.reason).toContain("ready marker");
    expect(worktreePaths(repo)).toHaveLength(2);
  });

  it("tears down a berth whose folder was deleted by hand: resources are destroyed, the registration goes", async () => {
    const { repo, marker, data } = await setUp(RESOURCES.replace("gc = false", ""));
    rmSync(data.path, { recursive: true, force: true });
    const run = await runBerth(["worktree", "drop", data.id, "--yes", "--json"], {
      cwd: repo.path,
      env: { ...repo.env, MARKER: marker },
    });
    expect(run.code).toBe(0);
    expect(run.json.data.resources_destroyed).toEqual(["keep", "db"]);
    expect(worktreePaths(repo)).toEqual([repo.path]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(berthBranches(repo)).toEqual([]);
  });
});

describe("the ledger is written before create runs", () => {
  it("lets the create command see its own ledger entry", async () => {
    repo = makeRepo({
      config: `[worktree.resources.db]\ncreate = 'test -f "$BERTH_REPO/.git/berth/ledger/$BERTH_ID/$BERTH_RESOURCE.json"'\ndestroy = 'true'\n`,
    });
    const { ctx } = testContext(repo.path, process.env);
    const result = await startBerth(ctx, { name: "ledger first" });
    expect(result.ok).toBe(true);
    expect(ledgerFiles(repo)).toHaveLength(1);
  });
});

describe("target resolution", () => {
  it("finds a berth by id, branch, path and a folder inside it; refuses unknown names", async () => {
    const { repo, repository, data, worktree } = await setUp();
    const survey = await surveyFleet(repository);
    for (const name of [data.id, data.branch, data.path, `refs/heads/${data.branch}`]) {
      expect(resolveTarget(survey, repo.path, name, "test").entry.path).toBe(worktree.entry.path);
    }
    expect(resolveTarget(survey, data.path, ".", "test").entry.path).toBe(data.path);
    expect(resolveTarget(survey, repo.path, "main", "test").isMain).toBe(true);
    expect(() => resolveTarget(survey, repo.path, "tear", "test")).toThrow(UserError);
    try {
      resolveTarget(survey, repo.path, "tear", "test");
    } catch (error) {
      expect((error as UserError).code).toBe("unknown_target");
      expect((error as UserError).data).toEqual({
        candidates: [{ id: data.id, path: data.path, branch: data.branch }],
      });
    }
  });

  it("refuses a bare word that is a file here and the start of a berth id", async () => {
    const { repo, repository, data } = await setUp();
    // `berth start tear` made an id that starts "tear"; the main checkout has a file so named.
    writeFileSync(join(repo.path, "tear"), "");
    const survey = await surveyFleet(repository);
    const refusal = (() => {
      try {
        resolveTarget(survey, repo.path, "tear", "drop");
      } catch (error) {
        return error as UserError;
      }
      return null;
    })();
    expect(refusal?.code).toBe("ambiguous_target");
    expect(refusal?.message).toContain("or the path as ./tear");
    expect(refusal?.data).toEqual({
      candidates: [
        { id: null, path: repo.path, branch: "main" },
        { id: data.id, path: data.path, branch: data.branch },
      ],
    });
    // Written as a path, it is one.
    expect(resolveTarget(survey, repo.path, "./tear", "drop").isMain).toBe(true);
  });

  it("refuses a name that is one berth's id and another's branch", async () => {
    const { repo, repository, data } = await setUp();
    // A second berth whose branch is literally named like the first berth's id.
    const other = join(repo.dir.path, "other");
    repo.git(["worktree", "add", "-q", "-b", data.id, other]);
    const survey = await surveyFleet(repository);
    expect(() => resolveTarget(survey, repo.path, data.id, "test")).toThrow(
      expect.objectContaining({ code: "ambiguous_target" }),
    );
  });
});

describe("recovery refs", () => {
  it("are named by UTC time and id", () => {
    expect(recoveryRefName(new Date("2026-06-01T12:34:56.789Z"), "fix-1a2b3c")).toBe(
      `${RECOVERY_PREFIX}20260601T123456.789Z-fix-1a2b3c`,
    );
  });

  it("keep the newest 32", async () => {
    repo = makeRepo();
    const head = repo.git(["rev-parse", "HEAD"]);
    const refs = Array.from({ length: 35 }, (_, i) =>
      recoveryRefName(new Date(Date.UTC(2026, 0, 1, 0, 0, i)), `b${i}`),
    );
    for (const ref of refs) repo.git(["update-ref", ref, head]);
    expect(
      recoveryRefsBeyond(
        refs.map((ref) => ({ ref, oid: head })),
        32,
      ).map((r) => r.ref),
    ).toEqual(refs.slice(0, 3).reverse());
    const deleted = await pruneRecoveryRefs(repo.path);
    expect(deleted.sort()).toEqual(refs.slice(0, 3).sort());
    const left = repo
      .git(["for-each-ref", "--format=%(refname)", "refs/berth/recovery"])
      .split("\n");
    expect(left).toEqual(refs.slice(3));
  });
});

describe("a forced drop that cannot write its recovery ref", () => {
  it("stops before destroying anything", async () => {
    const { repo, ctx, marker, data } = await setUp();
    repo.write("work.txt", "unlanded\n", data.path);
    repo.commit("unlanded work", data.path);
    // A file where the recovery refs' folder should be: git cannot create the ref.
    mkdirSync(join(repo.path, ".git", "refs", "berth"), { recursive: true });
    writeFileSync(join(repo.path, ".git", "refs", "berth", "recovery"), "not a folder\n");
    const before = fleetSnapshot(repo);
    const plan = await planDrop(ctx, { target: data.id, force: true });
    expect(plan.data.forced).toBe(true);
    const error = (await applyDrop(ctx, plan).catch((e: unknown) => e)) as UserError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toContain("Could not write a recovery ref");
    expect(fleetSnapshot(repo)).toBe(before);
    expect(markerLines(marker)).toHaveLength(2);
    expect(existsSync(data.path)).toBe(true);
  });
});

describe("a forced drop re-checks the work it was planned to discard", () => {
  it("an edit and a new file made while the confirmation waited: refused, both kept, no resource destroyed", async () => {
    const { repo, ctx, marker, data } = await setUp();
    repo.write("work.txt", "unlanded\n", data.path);
    repo.commit("unlanded work", data.path);
    const plan = await planDrop(ctx, { target: data.id, force: true });
    expect(plan.data.reasons.map((r) => r.kind)).toEqual(["unlanded"]);
    // Work done while the [y/N] is up: the plan named only the commit.
    repo.write("work.txt", "edited after the plan\n", data.path);
    repo.write("notes.txt", "new after the plan\n", data.path);
    const error = (await applyDrop(ctx, plan).catch((e: unknown) => e)) as UserError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toContain("changed since the plan");
    expect(error.message).toContain("work.txt, notes.txt");
    expect(readFileSync(join(data.path, "work.txt"), "utf8")).toBe("edited after the plan\n");
    expect(readFileSync(join(data.path, "notes.txt"), "utf8")).toBe("new after the plan\n");
    expect(markerLines(marker)).toHaveLength(2);
  });

  it("the uncommitted files the plan listed, as it listed them: dropped", async () => {
    const { repo, ctx, data } = await setUp();
    repo.write("scratch.txt", "listed\n", data.path);
    const plan = await planDrop(ctx, { target: data.id, force: true });
    expect(plan.data.reasons.map((r) => r.kind)).toEqual(["uncommitted"]);
    const result = await applyDrop(ctx, plan);
    expect(result.ok).toBe(true);
    expect(existsSync(data.path)).toBe(false);
  });

  it("a listed file written to again while the confirmation waited: refused, the new edit kept", async () => {
    const { repo, ctx, marker, data } = await setUp();
    repo.write("scratch.txt", "listed\n", data.path);
    const plan = await planDrop(ctx, { target: data.id, force: true });
    expect(plan.data.reasons.map((r) => r.kind)).toEqual(["uncommitted"]);
    // The same size, so only the file's times tell the edit apart.
    repo.write("scratch.txt", "edited\n", data.path);
    const error = (await applyDrop(ctx, plan).catch((e: unknown) => e)) as UserError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toContain("written to after the plan listed them: scratch.txt");
    expect(readFileSync(join(data.path, "scratch.txt"), "utf8")).toBe("edited\n");
    expect(markerLines(marker)).toHaveLength(2);
  });
});
