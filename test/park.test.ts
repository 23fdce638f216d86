import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeBerth } from "../src/core/berth/describe.js";
import { readStatus } from "../src/core/fleet/status.js";
import { applyPark, planPark } from "../src/core/lifecycle/park.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { UserError } from "../src/errors.js";
import { readBriefRecord } from "../src/io/briefs.js";
import { fleetSnapshot } from "./helpers/fleet.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";
import { stopAnAm } from "./helpers/stopped-am.js";
import { startWithCommit } from "./helpers/train.js";

/**
 * Parking and resuming, in process: the refusals (each changes nothing), a
 * resume whose old folder is taken, and a failed resume, whose undo must
 * never delete the parked branch it was given.
 */

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const commonDir = (r: TestRepo) => join(r.path, ".git");

async function refusal(run: () => Promise<unknown>): Promise<UserError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

async function park(r: TestRepo, target: string) {
  const { ctx } = testContext(r.path, r.env);
  return applyPark(ctx, await planPark(ctx, { target }));
}

describe("park refuses, changing nothing", () => {
  it("the main checkout, a locked berth, a detached one, and one with uncommitted changes", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const locked = await startWithCommit(r, "locked");
    const detached = await startWithCommit(r, "detached");
    const dirty = await startWithCommit(r, "dirty");
    r.git(["worktree", "lock", "--reason", "on a USB disk", locked.path]);
    r.git(["checkout", "-q", "--detach"], detached.path);
    writeFileSync(join(dirty.path, "README.md"), "edited\n");
    const before = fleetSnapshot(r);

    expect((await refusal(() => planPark(ctx, { target: r.path }))).message).toContain(
      "is the main checkout",
    );
    expect((await refusal(() => planPark(ctx, { target: locked.id }))).message).toContain(
      "is locked (on a USB disk)",
    );
    expect((await refusal(() => planPark(ctx, { target: detached.id }))).message).toContain(
      "is not on a branch",
    );
    const why = await refusal(() => planPark(ctx, { target: dirty.id }));
    expect(why.code).toBe("precondition_failed");
    expect(why.message).toContain("1 uncommitted change(s)");
    expect(why.message).toContain("README.md");
    expect(why.next).toBe(
      `cd ${dirty.path} && git add -A && git commit -m 'work in progress' && berth worktree park ${dirty.id}`,
    );
    expect(fleetSnapshot(r)).toBe(before);
    expect(readBriefRecord(commonDir(r), dirty.branch)).toBeNull();
  });

  it("one with a git am stopped half-way, its tree clean: the refusal names the way on", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const b = await startWithCommit(r, "patching");
    stopAnAm(r, b.path);
    const before = fleetSnapshot(r);
    const why = await refusal(() => planPark(ctx, { target: b.id }));
    expect(why.code).toBe("precondition_failed");
    expect(why.message).toContain("an am is in progress");
    expect(why.next).toBe(`git -C ${b.path} am --continue`);
    expect(fleetSnapshot(r)).toBe(before);
  });

  it("a detached berth: the commands it names park it without leaving a commit behind", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const commitIn = (path: string, file: string) => {
      writeFileSync(join(path, file), `${file}\n`);
      return r.commit(file, path);
    };
    // Each case: the berth, detached as a user leaves one, and the commits only HEAD reaches.
    const cases = {
      "at its own tip": async () => {
        const b = await startWithCommit(r, "at-tip");
        r.git(["checkout", "-q", "--detach"], b.path);
        return { b, kept: [r.git(["rev-parse", "HEAD"], b.path)], expected: "switch" };
      },
      "ahead of its branch": async () => {
        const b = await startWithCommit(r, "ahead");
        r.git(["checkout", "-q", "--detach"], b.path);
        return { b, kept: [commitIn(b.path, "ahead.txt")], expected: "update-ref" };
      },
      "diverged from its branch": async () => {
        const b = await startWithCommit(r, "diverged");
        commitIn(b.path, "on-branch.txt");
        r.git(["checkout", "-q", "--detach", "HEAD~1"], b.path);
        return { b, kept: [commitIn(b.path, "detached.txt")], expected: "-detached-" };
      },
      "whose branch was deleted": async () => {
        const b = await startWithCommit(r, "deleted");
        r.git(["checkout", "-q", "--detach"], b.path);
        r.git(["branch", "-q", "-D", b.branch]);
        return { b, kept: [commitIn(b.path, "orphan.txt")], expected: "switch -c" };
      },
      unborn: async () => {
        // Its branch deleted while checked out: HEAD is unborn, the HEAD log names the tip.
        const b = await startWithCommit(r, "unborn");
        const tip = r.git(["rev-parse", "HEAD"], b.path);
        r.git(["update-ref", "-d", `refs/heads/${b.branch}`]);
        return { b, kept: [tip], expected: `branch ${b.branch} ${tip}` };
      },
    };
    for (const [name, make] of Object.entries(cases)) {
      const { b, kept, expected } = await make();
      const before = fleetSnapshot(r);
      const why = await refusal(() => planPark(ctx, { target: b.id }));
      expect(why.message, name).toContain(
        name === "unborn" ? "has no commit checked out" : "is not on a branch",
      );
      expect(fleetSnapshot(r), name).toBe(before);
      const next = String(why.next);
      const parkAgain = ` && berth worktree park ${b.id}`;
      expect(next.endsWith(parkAgain), name).toBe(true);
      expect(next, name).toContain(expected);
      // The git commands as printed, then the park they lead to.
      execFileSync("sh", ["-c", next.slice(0, -parkAgain.length)], { env: r.env, stdio: "pipe" });
      await park(r, b.id);
      expect(existsSync(b.path), name).toBe(false);
      for (const commit of kept) {
        expect(
          r.git(["for-each-ref", "--contains", commit, "refs/heads"]),
          `${name}: ${commit}`,
        ).not.toBe("");
      }
    }
  });

  it("a branch parked already: refused with the resume command, by branch and by id", async () => {
    repo = makeRepo();
    const r = repo;
    const b = await startWithCommit(r, "shelved");
    await park(r, b.id);
    const { ctx } = testContext(r.path, r.env);
    const before = fleetSnapshot(r);
    for (const target of [b.branch, b.id]) {
      const why = await refusal(() => planPark(ctx, { target }));
      expect(why.code, target).toBe("precondition_failed");
      expect(why.message, target).toContain(`${b.branch} is parked already`);
      expect(why.next, target).toBe(`berth start --from ${b.branch}`);
    }
    expect(fleetSnapshot(r)).toBe(before);
  });

  it("a berth that changed between the plan and the apply is kept, and not marked parked", async () => {
    repo = makeRepo();
    const r = repo;
    const berth = await startWithCommit(r, "racing");
    const { ctx } = testContext(r.path, r.env);
    const plan = await planPark(ctx, { target: berth.id });
    writeFileSync(join(berth.path, "late.txt"), "late\n");
    const why = await refusal(() => applyPark(ctx, plan));
    expect(why.message).toContain("changed since the plan");
    expect(existsSync(berth.path)).toBe(true);
    expect(readBriefRecord(commonDir(r), berth.branch)).toBeNull();
  });
});

describe("resume", () => {
  it("takes a fresh id when the old folder is taken, and keeps the branch and title", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const berth = await startWithCommit(r, "shelf");
    await describeBerth(ctx, { target: berth.id, change: { title: "On the shelf" } });
    const tip = r.git(["rev-parse", berth.branch]);
    await park(r, berth.id);
    mkdirSync(berth.path); // someone else's folder now
    const resumed = await startBerth(ctx, { from: berth.branch });
    expect(resumed.data).toMatchObject({
      branch: berth.branch,
      title: "On the shelf",
      resumed: true,
    });
    expect(resumed.data?.id).not.toBe(berth.id);
    expect(resumed.data?.id).toMatch(/^shelf-[0-9a-f]{6}$/);
    expect(resumed.hints.join("\n")).toContain(`${berth.id}'s folder or port is taken now`);
    expect(r.git(["rev-parse", "HEAD"], resumed.data?.path)).toBe(tip);
    const status = await readStatus(ctx, {});
    expect(status.data?.refs).toEqual([]);
    expect(status.data?.worktrees.find((w) => w.branch === berth.branch)?.title).toBe(
      "On the shelf",
    );
  });

  it("a failed resume undoes its checkout and parks the branch again; the branch is never deleted", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const berth = await startWithCommit(r, "fragile");
    const tip = r.git(["rev-parse", berth.branch]);
    await park(r, berth.id);
    const parked = readBriefRecord(commonDir(r), berth.branch);
    expect(parked?.parked?.tip).toBe(tip);
    r.write("berth.toml", '[worktree.setup]\nsteps = ["exit 3"]\n');

    const why = await refusal(() => startBerth(ctx, { from: berth.branch }));
    expect(why.message).toContain(`branch ${berth.branch} is parked again`);
    expect(r.git(["rev-parse", berth.branch])).toBe(tip);
    expect(existsSync(berth.path)).toBe(false);
    expect(readBriefRecord(commonDir(r), berth.branch)).toEqual(parked);
    const status = await readStatus(ctx, {});
    expect(status.data?.refs).toEqual([
      expect.objectContaining({ branch: berth.branch, state: "parked" }),
    ]);
  });

  it("a berth started from a live branch starts untitled; one from a branch with no checkout carries its title", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const a = await startWithCommit(r, "a");
    await describeBerth(ctx, { target: a.id, change: { title: "Stage A" } });
    const next = await startBerth(ctx, { name: "b", from: a.branch });
    expect(next.data?.title).toBeUndefined();
    expect(readBriefRecord(commonDir(r), next.data?.branch ?? "")).toBeNull();
    // a's checkout goes by hand: its branch (and title) stay, with no checkout.
    r.git(["worktree", "remove", a.path]);
    const back = await startBerth(ctx, { name: "again", from: a.branch });
    expect(back.data?.title).toBe("Stage A");
    expect(back.data?.resumed).toBeUndefined();
  });
});
