import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalSubject } from "../src/context.js";
import {
  type AwaitData,
  EXIT_INTERRUPTED,
  EXIT_NOT_MET,
  runAwait,
} from "../src/core/await/await.js";
import { type AwaitOptions, parseAwaitRequest } from "../src/core/await/request.js";
import { applyAccept, planAccept } from "../src/core/landing/accept.js";
import { runGate } from "../src/core/landing/gate.js";
import { readGitFile } from "../src/io/admin-dirs.js";
import { readReadyMarker, writeReadyMarker } from "../src/io/ready-marker.js";
import type { VerbResult } from "../src/result.js";
import { renderAwait } from "../src/ui/await-view.js";
import { colorsFor } from "../src/ui/style.js";
import { fleetSnapshot } from "./helpers/fleet.js";
import { refusal } from "./helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";
import { type StartedBerth, startWithCommit } from "./helpers/train.js";

/** `berth await` in-process: each condition against real repositories, and every refusal. */

let repo: TestRepo;
afterEach(() => repo?.cleanup());

function awaitFrom(
  cwd: string,
  options: AwaitOptions,
  signal?: AbortSignal,
): Promise<VerbResult<AwaitData>> {
  const { ctx } = testContext(cwd, repo.env);
  return runAwait(ctx, options, { signal });
}

const tipOf = (ref: string) => repo.git(["rev-parse", ref]);

/**
 * Starts a waiter and runs `act` once it is waiting (its first evaluation
 * said "not met" and its watches are armed). Fails if it never waits.
 */
async function waitThen(
  cwd: string,
  options: AwaitOptions,
  act: () => void | Promise<void>,
  signal?: AbortSignal,
): Promise<VerbResult<AwaitData>> {
  const { ctx } = testContext(cwd, repo.env);
  let acted: Promise<void> = Promise.resolve();
  let waited = false;
  const result = await runAwait(ctx, options, {
    signal,
    onWaiting: () => {
      waited = true;
      acted = Promise.resolve().then(act);
    },
  });
  await acted;
  expect(waited).toBe(true);
  return result;
}

async function train(): Promise<[StartedBerth, StartedBerth, StartedBerth]> {
  const a = await startWithCommit(repo, "a");
  const b = await startWithCommit(repo, "b", a);
  const c = await startWithCommit(repo, "c", b);
  return [a, b, c];
}

/** Lands `tip` the way accept moves the trunk: a compare-and-swap fast-forward. */
function landOnTrunk(tip: string): void {
  repo.git(["update-ref", "refs/heads/main", tip, tipOf("main")]);
}

function gateIn(path: string) {
  const { ctx } = testContext(path, repo.env);
  return runGate(ctx, {});
}

/** `berth accept` of the berth at `path`, in process (it gates first when it must). */
async function acceptIn(path: string) {
  const { ctx } = testContext(path, repo.env);
  const result = await applyAccept(ctx, await planAccept(ctx, {}));
  expect(result.ok).toBe(true);
  return result;
}

describe("parseAwaitRequest", () => {
  it("takes exactly one condition and a timeout in seconds (default 3300)", () => {
    expect(parseAwaitRequest({ trunkMoved: true })).toEqual({
      resume: null,
      condition: "trunk-moved",
      target: null,
      timeoutS: 3300,
    });
    expect(parseAwaitRequest({ green: "x", timeout: "0" })).toEqual({
      resume: null,
      condition: "green",
      target: "x",
      timeoutS: 0,
    });
    expect(parseAwaitRequest({ resume: "0123456789abcdef", timeout: "50" })).toEqual({
      resume: "0123456789abcdef",
      timeoutS: 50,
    });
    expect(parseAwaitRequest({ landed: "x", timeout: "2.5" }).timeoutS).toBe(2.5);
  });

  it.each<[string, AwaitOptions]>([
    ["no condition", {}],
    ["two conditions", { green: "x", trunkMoved: true }],
    ["three conditions", { green: "x", landed: "y", trunkMoved: true }],
    ["an empty target", { landed: " " }],
    ["a negative timeout", { trunkMoved: true, timeout: "-1" }],
    ["a word for a timeout", { trunkMoved: true, timeout: "soon" }],
    ["an empty timeout", { trunkMoved: true, timeout: "" }],
    ["an exponent", { trunkMoved: true, timeout: "1e3" }],
    ["a resume handle with a condition", { resume: "0123456789abcdef", trunkMoved: true }],
    ["a resume handle that is a path", { resume: "../../etc/passwd" }],
  ])("refuses %s as a usage error", (_label, options) => {
    expect(() => parseAwaitRequest(options)).toThrowError(
      expect.objectContaining({ code: "usage" }),
    );
  });
});

describe("await --trunk-moved", () => {
  it("checks once with --timeout 0: an unchanged trunk is not met (exit 124)", async () => {
    repo = makeRepo();
    const result = await awaitFrom(repo.path, { trunkMoved: true, timeout: "0" });
    expect(result.ok).toBe(true);
    expect(result.exitCode).toBe(EXIT_NOT_MET);
    expect(result.data).toMatchObject({
      met: false,
      condition: "trunk-moved",
      branch: "main",
      tip: tipOf("main"),
      trunk_tip: tipOf("main"),
      trunk_tip_at_start: tipOf("main"),
      interrupted: false,
    });
  });

  it("answers when the trunk moves", async () => {
    repo = makeRepo();
    const before = tipOf("main");
    const result = await waitThen(repo.path, { trunkMoved: true, timeout: "30" }, () => {
      repo.commit("trunk moves");
    });
    expect(result.exitCode).toBeUndefined();
    expect(result.data).toMatchObject({
      met: true,
      met_by: "trunk-moved",
      trunk_tip_at_start: before,
      trunk_tip: tipOf("main"),
    });
    // From the main checkout, where update refuses: no hint to run it (golden: from a berth, one).
    expect(result.hints.join("\n")).not.toContain("berth update");
  });

  it("stops with exit 130 when interrupted", async () => {
    repo = makeRepo();
    const interrupt = new AbortController();
    const result = await waitThen(
      repo.path,
      { trunkMoved: true, timeout: "30" },
      () => interrupt.abort(),
      interrupt.signal,
    );
    expect(result.exitCode).toBe(EXIT_INTERRUPTED);
    expect(result.data).toMatchObject({ met: false, interrupted: true });
    expect(result.data?.waited_ms).toBeLessThan(10_000);
  });

  it("journals the caller's checkout as the subject, so its row shows running: await", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const subjects: JournalSubject[] = [];
    const { ctx } = testContext(b.path, repo.env);
    ctx.journal = { begin: (subject) => subjects.push(subject) };
    await runAwait(ctx, { trunkMoved: true, timeout: "0" });
    expect(subjects).toEqual([{ branch: b.branch, path: b.path }]);
  });
});

describe("await --landed", () => {
  it("is met when the tip is reachable from the trunk", async () => {
    repo = makeRepo();
    const [, , c] = await train();
    const before = await awaitFrom(repo.path, { landed: c.id, timeout: "0" });
    expect(before.exitCode).toBe(EXIT_NOT_MET);

    const result = await waitThen(repo.path, { landed: c.id, timeout: "30" }, () =>
      landOnTrunk(tipOf(c.branch)),
    );
    expect(result.exitCode).toBeUndefined();
    expect(result.data).toMatchObject({
      met: true,
      met_by: "landed",
      branch: c.branch,
      path: c.path,
      tip: tipOf(c.branch),
      trunk_tip: tipOf(c.branch),
    });
  });

  it("counts a branch deleted after landing, by the tip seen at call start", async () => {
    repo = makeRepo();
    const [, , c] = await train();
    const tip = tipOf(c.branch);
    const result = await waitThen(repo.path, { landed: c.branch, timeout: "30" }, () => {
      // The branch goes before the trunk moves: only the remembered tip can answer.
      repo.git(["worktree", "remove", c.path]);
      repo.git(["branch", "-D", c.branch]);
      landOnTrunk(tip);
    });
    expect(result.data).toMatchObject({ met: true, tip, trunk_tip: tip });
  });

  it("does not count a fresh fork whose tip equals the trunk tip until it gains a commit and lands", async () => {
    repo = makeRepo();
    const fresh = await startWithCommit(repo, "fresh", undefined, 0);
    expect(tipOf(fresh.branch)).toBe(tipOf("main"));
    const now = await awaitFrom(repo.path, { landed: fresh.id, timeout: "0" });
    expect(now.exitCode).toBe(EXIT_NOT_MET);

    repo.write("f.txt", "f\n", fresh.path);
    const gained = repo.commit("fresh gains a commit", fresh.path);
    expect((await awaitFrom(repo.path, { landed: fresh.id, timeout: "0" })).data?.met).toBe(false);
    // Pinned while unlanded, then landed (by hand: no landing record) while it waits.
    const landed = await waitThen(repo.path, { landed: fresh.id, timeout: "30" }, () =>
      landOnTrunk(gained),
    );
    expect(landed.data).toMatchObject({ met: true, tip: gained, landed_commit: gained });
  });

  it("does not count a fresh berth fast-forwarded onto a moved trunk while it waits", async () => {
    repo = makeRepo();
    const fresh = await startWithCommit(repo, "fresh", undefined, 0);
    const adminDir = (await readGitFile(fresh.path)) as string;
    const result = await waitThen(repo.path, { landed: fresh.id, timeout: "3" }, async () => {
      repo.commit("the trunk moves on");
      await new Promise((resolve) => setTimeout(resolve, 300));
      // What `berth update` does to a fresh berth: the branch moves first,
      // the marker's fork point a moment later (docs/decisions/0003).
      repo.git(["merge", "-q", "--ff-only", "main"], fresh.path);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const marker = await readReadyMarker(adminDir);
      if (marker === null) throw new Error("no ready marker");
      await writeReadyMarker(adminDir, { ...marker, from_tip: tipOf("main") });
    });
    expect(result.exitCode).toBe(EXIT_NOT_MET);
    expect(result.data).toMatchObject({ met: false, tip: tipOf("main") });
  });

  it("follows a kept ref (no checkout) by its branch name or id", async () => {
    repo = makeRepo();
    const [a] = await train();
    repo.git(["worktree", "remove", a.path]);
    const before = await awaitFrom(repo.path, { landed: a.id, timeout: "0" });
    expect(before.data).toMatchObject({ met: false, branch: a.branch, path: null });
    const after = await waitThen(repo.path, { landed: a.branch, timeout: "30" }, () =>
      landOnTrunk(tipOf(a.branch)),
    );
    expect(after.data).toMatchObject({ met: true, tip: tipOf(a.branch) });
  });
});

describe("await --green", () => {
  it("never reports green for a stale receipt; is met once the gate runs on the tip", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    expect((await gateIn(b.path)).ok).toBe(true);
    repo.write("more.txt", "more\n", b.path);
    repo.commit("a commit after the gate", b.path);
    const stale = await awaitFrom(repo.path, { green: b.id, timeout: "0" });
    expect(stale.exitCode).toBe(EXIT_NOT_MET);
    expect(stale.data).toMatchObject({ met: false, tip: tipOf(b.branch) });

    const result = await waitThen(repo.path, { green: b.id, timeout: "30" }, async () => {
      expect((await gateIn(b.path)).ok).toBe(true);
    });
    expect(result.exitCode).toBeUndefined();
    expect(result.data).toMatchObject({
      met: true,
      met_by: "receipt",
      branch: b.branch,
      tip: tipOf(b.branch),
    });
    const tip = tipOf(b.branch);
    expect(result.hints).toEqual([expect.stringContaining(`berth start --from ${tip}`)]);
    expect(result.hints[0]).toContain(`berth update --from ${tip}`);
  });

  it("is not green while the checkout is dirty, and is again once it is clean", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    expect((await gateIn(b.path)).ok).toBe(true);
    writeFileSync(join(b.path, "scratch.txt"), "untracked\n");
    const dirty = await awaitFrom(repo.path, { green: b.id, timeout: "0" });
    expect(dirty.data?.met).toBe(false);

    // No ref or receipt changes: only the working tree, which the poll re-reads.
    const clean = await waitThen(repo.path, { green: b.id, timeout: "30" }, () =>
      rmSync(join(b.path, "scratch.txt")),
    );
    expect(clean.data).toMatchObject({ met: true, met_by: "receipt" });
  });

  it("is met by a landing, receipt or not", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const result = await waitThen(repo.path, { green: b.branch, timeout: "30" }, () =>
      landOnTrunk(tipOf(b.branch)),
    );
    expect(result.data).toMatchObject({ met: true, met_by: "landed", tip: tipOf(b.branch) });
  });

  it("refuses a reclaimed stage at once, naming the nearest container with a checkout and --landed", async () => {
    repo = makeRepo();
    const [a, b, c] = await train();
    // What `prune --contained` leaves of A and B: their branch refs, no checkouts.
    repo.git(["worktree", "remove", a.path]);
    repo.git(["worktree", "remove", b.path]);
    const before = fleetSnapshot(repo);
    const error = await refusal(awaitFrom(repo.path, { green: a.id, timeout: "30" }));
    expect(error.code).toBe("unknown_target");
    expect(error.message).toContain(c.branch);
    expect(error.message).toContain(`--landed ${a.branch}`);
    expect(error.next).toBe(`berth await --green ${c.branch}`);
    expect(error.data).toMatchObject({
      branch: a.branch,
      tip: tipOf(a.branch),
      contained_by: c.branch,
      container_tip: tipOf(c.branch),
      container_ahead: 2,
    });
    expect(fleetSnapshot(repo)).toBe(before);

    const viaB = await refusal(awaitFrom(repo.path, { green: b.branch, timeout: "30" }));
    expect(viaB.message).toContain(c.branch);
  });

  it("refuses an abandoned branch, pointing at --landed only", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    repo.git(["worktree", "remove", a.path]);
    const error = await refusal(awaitFrom(repo.path, { green: a.id, timeout: "30" }));
    expect(error.code).toBe("unknown_target");
    expect(error.message).toContain("No branch with a checkout contains its commits");
    expect(error.next).toBe(`berth await --landed ${a.branch}`);
  });

  it("answers a branch with no checkout that already landed instead of refusing", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b", a);
    repo.git(["worktree", "remove", a.path]);
    const tip = tipOf(a.branch);
    // b's landing brings a along: the landing log names a as one of its stages.
    await acceptIn(b.path);
    const result = await awaitFrom(repo.path, { green: a.id, timeout: "30" });
    expect(result.data).toMatchObject({
      met: true,
      met_by: "landed",
      landed_commit: tip,
      landing: { branch: a.branch, tip, landed_with: b.branch },
    });
  });
});

describe("await targets", () => {
  it.each([["green"], ["landed"]])("--%s refuses an unknown branch", async (condition) => {
    repo = makeRepo();
    const before = fleetSnapshot(repo);
    const error = await refusal(
      awaitFrom(repo.path, { [condition]: "no-such-branch", timeout: "30" }),
    );
    expect(error.code).toBe("unknown_target");
    expect(error.message).toContain('"no-such-branch"');
    expect(fleetSnapshot(repo)).toBe(before);
  });

  it("refuses a name that is both a berth and a branch no checkout holds", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    repo.git(["branch", b.id, "main"]);
    const error = await refusal(awaitFrom(repo.path, { landed: b.id, timeout: "0" }));
    expect(error.code).toBe("ambiguous_target");
    expect(error.data).toEqual({ candidates: [b.branch, b.id] });
  });

  it("refuses the trunk itself, pointing at --trunk-moved", async () => {
    repo = makeRepo();
    const error = await refusal(awaitFrom(repo.path, { landed: "main", timeout: "0" }));
    expect(error.code).toBe("precondition_failed");
    expect(error.next).toBe("berth await --trunk-moved");
  });
});

describe("await human output", () => {
  const plain = colorsFor(false, {});

  it("says what held, or what did not and why", async () => {
    repo = makeRepo();
    const waited = await awaitFrom(repo.path, { trunkMoved: true, timeout: "0" });
    expect(renderAwait(waited, plain).stdout).toBe(
      `not met (checked once): main is still at ${tipOf("main").slice(0, 8)}\n`,
    );
    const b = await startWithCommit(repo, "b");
    await gateIn(b.path);
    const green = await awaitFrom(repo.path, { green: b.id, timeout: "0" });
    expect(renderAwait(green, plain).stdout).toBe(
      `${b.branch} is green at ${tipOf(b.branch).slice(0, 8)} (gate receipt honored)\n`,
    );
  });
});
