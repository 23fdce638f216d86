import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyAccept, planAccept } from "../src/core/landing/accept.js";
import { runGate } from "../src/core/landing/gate.js";
import { trunkHolders } from "../src/core/landing/main-checkout-follow.js";
import { submitEntry } from "../src/core/landing/queue.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { UserError } from "../src/errors.js";
import { parseNameStatus, type WorktreeEntry } from "../src/git/parse.js";
import { findPathsInTheWay } from "../src/io/in-the-way.js";
import { readQueue } from "../src/io/queue-store.js";
import {
  deleteLandingRecord,
  type LandingRecord,
  readLandingRecords,
  writeLandingRecord,
} from "../src/io/unfinished-landing.js";
import { berthBranches } from "./helpers/fleet.js";
import { makeRepo, makeTempDir, runBerth, type TestRepo, testContext } from "./helpers/repo.js";
import { stopAnAm } from "./helpers/stopped-am.js";

/** accept's pieces in process, and the crash points of a landing (spec section 9.7). */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const A = "a".repeat(40);
const B = "b".repeat(40);

async function landable(name: string) {
  repo = makeRepo();
  const { ctx } = testContext(repo.path, repo.env);
  const started = await startBerth(ctx, { name });
  const berth = started.data as NonNullable<typeof started.data>;
  repo.write(`${name}.txt`, `${name}\n`, berth.path);
  const commit = repo.commit(name, berth.path);
  const gated = await runGate(testContext(berth.path, repo.env).ctx);
  expect(gated.ok).toBe(true);
  return { repo, berth, commit, old: repo.git(["rev-parse", "main"]) };
}

function record(fields: Partial<LandingRecord> & Pick<LandingRecord, "id" | "branch">) {
  return {
    version: 1 as const,
    path: "/nowhere",
    trunk: "main",
    old: A,
    new: B,
    validated_by: "receipt" as const,
    main_checkout: null,
    created_at: "2026-06-01T12:00:00.000Z",
    ...fields,
  };
}

describe("a crash in the middle of a landing", () => {
  it("after the trunk moved but before the main checkout followed: accept again brings its files along and finishes", async () => {
    const { repo, berth, commit, old } = await landable("crashed");
    // What a SIGKILL right after the compare-and-swap leaves behind.
    await writeLandingRecord(
      join(repo.path, ".git"),
      record({
        id: berth.id,
        branch: berth.branch,
        path: berth.path,
        old,
        new: commit,
        main_checkout: repo.path,
      }),
    );
    repo.git(["update-ref", "refs/heads/main", commit, old]);
    expect(repo.git(["status", "--porcelain"])).not.toBe("");

    const run = await runBerth(["accept", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(run.code).toBe(0);
    expect(run.json.data).toMatchObject({
      resumed: true,
      validated: { commit, by: "receipt" },
      trunk: { old, new: commit },
    });
    expect(run.json.data.landing).toEqual({
      trunk_landed: true,
      main_checkout_updated: true,
      resources_destroyed: true,
      worktree_removed: true,
      branch_deleted: true,
    });
    expect(repo.git(["status", "--porcelain", "--untracked-files=all"])).toBe("");
    expect(readFileSync(join(repo.path, "crashed.txt"), "utf8")).toBe("crashed\n");
    expect(repo.git(["rev-parse", "main"])).toBe(commit);
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
    expect(await readLandingRecords(join(repo.path, ".git"))).toEqual([]);
  });

  it("before the trunk moved (only the record was written): accept lands as if nothing happened", async () => {
    const { repo, berth, commit, old } = await landable("early");
    await writeLandingRecord(
      join(repo.path, ".git"),
      record({ id: berth.id, branch: berth.branch, path: berth.path, old, new: commit }),
    );
    const { ctx } = testContext(repo.path, repo.env);
    const plan = await planAccept(ctx, { target: berth.id });
    expect(plan.mode).toBe("land");
    const result = await applyAccept(ctx, plan);
    expect(result.ok).toBe(true);
    expect(result.data?.landing.trunk_landed).toBe(true);
    expect(repo.git(["rev-parse", "main"])).toBe(commit);
    expect(repo.git(["reflog", "--format=%gs", "main"]).split("\n")).toEqual([
      `berth accept ${berth.id}`,
      "commit (initial): initial commit",
    ]);
    expect(await readLandingRecords(join(repo.path, ".git"))).toEqual([]);
  });
});

describe("apply re-checks the plan under the lock", () => {
  it("the trunk moved between plan and apply: moved, the trunk stays where the other writer put it", async () => {
    const { repo, berth, commit, old } = await landable("raced");
    const { ctx } = testContext(repo.path, repo.env);
    const plan = await planAccept(ctx, { target: berth.id });
    expect(plan.data.trunk).toMatchObject({ old, new: commit });
    repo.write("other.txt", "someone else landed first\n");
    const other = repo.commit("someone else");

    const error = await applyAccept(ctx, plan).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe("moved");
    expect(repo.git(["rev-parse", "main"])).toBe(other);
    expect(existsSync(berth.path)).toBe(true);
    expect(repo.git(["rev-parse", berth.branch])).toBe(commit);
    expect(await readLandingRecords(join(repo.path, ".git"))).toEqual([]);
  });

  it("a commit added to the berth between plan and apply: moved, nothing lands", async () => {
    const { repo, berth, old } = await landable("grew");
    const { ctx } = testContext(repo.path, repo.env);
    const plan = await planAccept(ctx, { target: berth.id });
    repo.write("more.txt", "more\n", berth.path);
    repo.commit("more", berth.path);
    const error = await applyAccept(ctx, plan).catch((e: unknown) => e);
    expect((error as UserError).code).toBe("moved");
    expect(repo.git(["rev-parse", "main"])).toBe(old);
    expect(existsSync(berth.path)).toBe(true);
  });
});

describe("a detached berth", () => {
  it("is refused, and the command named keeps the commit only its HEAD reaches before switching back", async () => {
    const { repo, berth, old } = await landable("detached");
    repo.git(["checkout", "-q", "--detach"], berth.path);
    repo.write("later.txt", "made while detached\n", berth.path);
    const later = repo.commit("made while detached", berth.path);
    const { ctx } = testContext(repo.path, repo.env);
    const error = await planAccept(ctx, { target: berth.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    const refusal = error as UserError;
    expect(refusal.message).toContain("detached or unborn HEAD");
    expect(refusal.message).toContain(`HEAD is ahead of ${berth.branch}`);
    expect(repo.git(["rev-parse", "main"])).toBe(old);
    execFileSync("sh", ["-c", String(refusal.next)], { env: repo.env, stdio: "pipe" });
    expect(repo.git(["rev-parse", berth.branch])).toBe(later);
    expect(repo.git(["symbolic-ref", "--short", "HEAD"], berth.path)).toBe(berth.branch);
  });
});

describe("a berth whose branch was deleted under it", () => {
  it("is refused, and the command named makes the branch again at its last commit", async () => {
    const { repo, berth, old } = await landable("orphaned");
    const last = repo.git(["rev-parse", "HEAD"], berth.path);
    repo.git(["update-ref", "-d", `refs/heads/${berth.branch}`]);
    const { ctx } = testContext(repo.path, repo.env);
    const error = await planAccept(ctx, { target: berth.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    const refusal = error as UserError;
    expect(refusal.message).toContain(`${berth.branch} was deleted under it`);
    expect(String(refusal.next)).toBe(`git -C ${berth.path} branch ${berth.branch} ${last}`);
    expect(repo.git(["rev-parse", "main"])).toBe(old);
    execFileSync("sh", ["-c", String(refusal.next)], { env: repo.env, stdio: "pipe" });
    expect(repo.git(["rev-parse", berth.branch])).toBe(last);
    expect(repo.git(["status", "--porcelain"], berth.path)).toBe("");
  });
});

describe("a berth with a git am stopped half-way", () => {
  const amStopped = (repo: TestRepo, path: string) =>
    existsSync(
      join(repo.git(["rev-parse", "--absolute-git-dir"], path), "rebase-apply", "applying"),
    );

  it("is refused before the trunk moves, though its receipt is honored; once the am is ended, it lands", async () => {
    const { repo, berth, commit, old } = await landable("patching");
    stopAnAm(repo, berth.path);
    const { ctx } = testContext(repo.path, repo.env);
    const error = await planAccept(ctx, { target: berth.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    const refusal = error as UserError;
    expect(refusal.code).toBe("precondition_failed");
    expect(refusal.message).toContain("has an am in progress");
    expect(refusal.message).toContain("git am --abort");
    expect(String(refusal.next)).toBe(`git am --continue && berth accept ${berth.id}`);
    expect(repo.git(["rev-parse", "main"])).toBe(old);
    expect(amStopped(repo, berth.path)).toBe(true);
    repo.git(["am", "--abort"], berth.path);
    const plan = await planAccept(ctx, { target: berth.id });
    const landed = await applyAccept(ctx, plan);
    expect(landed.ok).toBe(true);
    expect(repo.git(["rev-parse", "main"])).toBe(commit);
  });

  it("landed by hand: refused instead of a landing that cannot finish, and the am stays", async () => {
    const { repo, berth, commit, old } = await landable("patched");
    stopAnAm(repo, berth.path);
    repo.git(["update-ref", "refs/heads/main", commit, old]);
    repo.git(["reset", "-q", "--hard", commit]);
    const { ctx } = testContext(repo.path, repo.env);
    const error = await planAccept(ctx, { target: berth.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe("precondition_failed");
    expect(amStopped(repo, berth.path)).toBe(true);
    expect(repo.git(["worktree", "list", "--porcelain"])).toContain(berth.path);
  });
});

describe("pure pieces", () => {
  it("parseNameStatus reads status/path pairs", () => {
    expect(parseNameStatus("A\0new file.txt\0D\0old\0M\0x\0")).toEqual([
      { status: "A", path: "new file.txt" },
      { status: "D", path: "old" },
      { status: "M", path: "x" },
    ]);
    expect(parseNameStatus("")).toEqual([]);
  });

  it("trunkHolders tells the main checkout from linked worktrees", () => {
    const entry = (path: string, branch: string | null): WorktreeEntry => ({
      path,
      head: A,
      branch,
      detached: branch === null,
      bare: false,
      locked: false,
      lockReason: null,
      prunable: false,
      prunableReason: null,
    });
    const classic = { mainPath: "/r", bareDir: null };
    expect(trunkHolders([entry("/r", "main"), entry("/w", "berth/x")], "main", classic)).toEqual({
      mainFollows: true,
      linked: [],
    });
    expect(trunkHolders([entry("/r", null), entry("/w", "main")], "main", classic)).toEqual({
      mainFollows: false,
      linked: ["/w"],
    });
    // A bare repository: its main checkout is the worktree on its default branch, wherever listed.
    const bare = { ...entry("/r.git", null), head: null, bare: true };
    const fleet = [bare, entry("/w", "berth/x"), entry("/main", "main")];
    const bareRepo = { mainPath: "/main", bareDir: "/r.git" };
    expect(trunkHolders(fleet, "main", bareRepo)).toEqual({ mainFollows: true, linked: [] });
    expect(trunkHolders(fleet.slice(1), "main", bareRepo)).toEqual({
      mainFollows: true,
      linked: [],
    });
    expect(trunkHolders(fleet, "berth/x", bareRepo)).toEqual({
      mainFollows: false,
      linked: ["/w"],
    });
  });

  it("findPathsInTheWay finds existing files and files where a folder must go", async () => {
    const dir = makeTempDir();
    try {
      const root = dir.path;
      writeFileSync(join(root, "present.txt"), "x");
      writeFileSync(join(root, "blocker"), "a file where a folder must go");
      writeFileSync(join(root, "leaving"), "a tracked file the landing deletes");
      mkdirSync(join(root, "dir"));
      const found = await findPathsInTheWay(
        root,
        ["present.txt", "absent.txt", "blocker/inner.txt", "leaving/inner.txt", "dir/new.txt"],
        ["leaving"],
      );
      expect(found).toEqual(["blocker", "present.txt"]);
    } finally {
      dir.cleanup();
    }
  });

  it("landing records round-trip; unreadable files are skipped", async () => {
    const dir = makeTempDir();
    try {
      const common = dir.path;
      const written = record({ id: "x-1", branch: "berth/x-1" });
      await writeLandingRecord(common, written);
      writeFileSync(join(common, "berth", "landing", "junk.json"), "{not json");
      expect(await readLandingRecords(common)).toEqual([written]);
      await deleteLandingRecord(common, "x-1");
      expect(await readLandingRecords(common)).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });
});

describe("submitting one berth twice at once", () => {
  it("makes one open entry: the second submission refreshes the first's", async () => {
    const { repo, berth, commit } = await landable("twice");
    const { ctx } = testContext(repo.path, repo.env);
    const plan = await planAccept(ctx, { target: berth.id });
    // Both read the queue before either writes: in one process, as two accepts would race.
    const [one, two] = await Promise.all([
      submitEntry(ctx, plan, false),
      submitEntry(ctx, plan, true),
    ]);
    const entries = await readQueue(join(repo.path, ".git"));
    expect(entries.map((e) => [e.id, e.state, e.tip])).toEqual([[berth.id, "queued", commit]]);
    expect([one.seq, two.seq]).toEqual([1, 1]);
    expect(entries[0]?.authority).toBe("confirmed");
  });
});
