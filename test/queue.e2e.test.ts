import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { applyDrop, planDrop } from "../src/core/lifecycle/drop.js";
import { applyPark, planPark } from "../src/core/lifecycle/park.js";
import { UserError } from "../src/errors.js";
import { readQueue, writeEntry } from "../src/io/queue-store.js";
import { berthBranches, fleetSnapshot } from "./helpers/fleet.js";
import {
  berthWith,
  checkedCommits,
  gateGreen,
  isAncestor,
  landedBranches,
  onlyFastForwards,
  queueFixture,
  recordingGate,
  tip,
  trunkHistory,
} from "./helpers/queue.js";
import { runBerth, type TestRepo, testContext } from "./helpers/repo.js";

/**
 * The landing queue end to end (spec section 11), through the built binary:
 * berths forked from one trunk tip land one after another through
 * integration commits the trunk's gate ran on; a conflict or a red gate
 * rejects an entry and leaves its berth exactly as it was.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/**
 * A fleet whose gate check, while the file `block` exists, touches `gating`
 * and waits until `block` is removed: a window in which the lander holds an entry.
 */
function blockingGateFixture() {
  const fx = queueFixture(
    recordingGate(
      'if [ -e "$BLOCK" ]; then touch "$GATING"; while [ -e "$BLOCK" ]; do sleep 0.05; done; fi',
    ),
  );
  repo = fx.repo;
  const r = fx.repo;
  const block = join(r.dir.path, "block");
  const gating = join(r.dir.path, "gating");
  return { r, block, gating, env: { ...fx.env, BLOCK: block, GATING: gating } };
}

/** Until the blocking gate's check has started (up to 20 s). */
async function untilGating(gating: string): Promise<void> {
  for (let i = 0; i < 400 && !existsSync(gating); i++) await sleep(50);
  expect(existsSync(gating)).toBe(true);
}

function receiptOf(r: TestRepo, id: string): string | null {
  const file = join(r.path, ".git/worktrees", id, "berth/receipt.json");
  return existsSync(file) ? readFileSync(file, "utf8") : null;
}

describe("landing a fleet through the queue", () => {
  it("three berths from one trunk tip, each green: all land, the second and third through gated integration commits, the trunk only fast-forwards", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env, marker } = fx;
    const berths = [
      await berthWith(repo, env, "one", { "one.txt": "1\n" }),
      await berthWith(repo, env, "two", { "two.txt": "2\n" }),
      await berthWith(repo, env, "three", { "three.txt": "3\n" }),
    ];
    for (const b of berths) await gateGreen(env, b.path);
    const tips = berths.map((b) => tip(repo as TestRepo, b.branch));
    const fork = tip(repo, "main");

    const first = await runBerth(["accept", berths[0]?.id ?? "", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(first.code).toBe(0);
    expect(first.json.data.validated.by).toBe("receipt");
    expect(tip(repo, "main")).toBe(tips[0]);

    for (const [i, b] of berths.entries()) {
      if (i === 0) continue;
      const before = tip(repo, "main");
      const run = await runBerth(["accept", b.id, "--yes", "--json"], { cwd: repo.path, env });
      expect(run.code, run.stderr).toBe(0);
      const landed = tip(repo, "main");
      // An integration commit: the old trunk tip first, the berth's tip second.
      expect(repo.git(["rev-parse", `${landed}^1`])).toBe(before);
      expect(repo.git(["rev-parse", `${landed}^2`])).toBe(tips[i]);
      // The trunk's gate ran on exactly that commit.
      expect(checkedCommits(marker)).toContain(landed);
      expect(run.json.data.queue).toMatchObject({
        state: "landed",
        landed: { via: "integration" },
      });
      expect(run.json.data.validated).toMatchObject({ commit: landed, by: "gate" });
      expect(existsSync(b.path)).toBe(false);
    }
    expect(onlyFastForwards(repo)).toBe(true);
    expect(trunkHistory(repo)[0]).toBe(fork);
    expect(trunkHistory(repo)).toHaveLength(4);
    for (const t of tips) expect(isAncestor(repo, t, "main")).toBe(true);
    // One landing per berth, under its own branch: the integration berths are not landings.
    expect(await landedBranches(repo)).toEqual(berths.map((b) => b.branch));
    // The integration checkouts are gone with their branches.
    expect(berthBranches(repo)).toEqual([]);
    const queue = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    expect(queue.json.data.entries.map((e: { state: string }) => e.state)).toEqual([
      "landed",
      "landed",
      "landed",
    ]);
  });

  it("a berth conflicting with one that landed first is rejected, naming the file; its branch, tip, checkout and receipt are unchanged, and so is the trunk", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const first = await berthWith(repo, env, "first", { "shared.txt": "first\n" });
    const second = await berthWith(repo, env, "second", { "shared.txt": "second\n" });
    await gateGreen(env, first.path);
    await gateGreen(env, second.path);
    const landedFirst = await runBerth(["accept", first.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(landedFirst.code).toBe(0);
    const trunkBefore = tip(repo, "main");
    const tipBefore = tip(repo, second.branch);
    const receiptBefore = receiptOf(repo, second.id);
    expect(receiptBefore).not.toBeNull();

    const run = await runBerth(["accept", second.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.data.queue).toMatchObject({
      state: "rejected",
      rejection: { kind: "conflict", files: ["shared.txt"] },
    });
    expect(run.json.error.code).toBe("rejected");
    expect(run.json.error.message).toContain("shared.txt");
    expect(tip(repo, "main")).toBe(trunkBefore);
    expect(tip(repo, second.branch)).toBe(tipBefore);
    expect(existsSync(second.path)).toBe(true);
    expect(repo.git(["status", "--porcelain"], second.path)).toBe("");
    expect(receiptOf(repo, second.id)).toBe(receiptBefore);
    expect(berthBranches(repo)).toEqual([second.branch]);
    // Discarding the integration checkout wrote no ref at all (no recovery ref for its merge).
    expect(repo.git(["for-each-ref", "--format=%(refname)", "refs/berth/recovery"])).toBe("");

    const queue = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    const entry = queue.json.data.entries.at(-1);
    expect(entry).toMatchObject({ state: "rejected", position: null });
    expect(entry.reason).toContain("shared.txt");

    // await --landed on a rejected entry: not met, reason "rejected", exit 1.
    const awaited = await runBerth(["await", "--landed", second.branch, "--json"], {
      cwd: repo.path,
      env,
    });
    expect(awaited.code).toBe(1);
    expect(awaited.json.data).toMatchObject({ met: false, reason: "rejected" });
    // Exit 1 is a refusal's: the envelope says so, and which.
    expect(awaited.json).toMatchObject({ ok: false, error: { code: "rejected" } });
    expect(awaited.json.error.message).toContain("shared.txt");
    const told = await runBerth(["await", "--landed", second.branch], { cwd: repo.path, env });
    expect(told.code).toBe(1);
    expect(told.stdout).toContain("was rejected by the landing queue");
    expect(told.stderr).toContain("shared.txt");
  });

  it("a berth whose own berth.toml declares no checks, carrying content the trunk's checks reject, is rejected by the trunk's gate", async () => {
    const fx = queueFixture(recordingGate("! test -e forbidden.txt"));
    repo = fx.repo;
    const { env } = fx;
    const other = await berthWith(repo, env, "other", { "other.txt": "fine\n" });
    const sneaky = await berthWith(repo, env, "sneaky", {
      "berth.toml": "[gate]\nchecks = []\n",
      "forbidden.txt": "the trunk's checks reject this\n",
    });
    await gateGreen(env, other.path);
    expect((await runBerth(["accept", other.id, "--yes"], { cwd: repo.path, env })).code).toBe(0);
    const trunkBefore = tip(repo, "main");
    const run = await runBerth(["accept", sneaky.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    // Red on the integration commit: the queue's rejection, not the berth's own gate.
    expect(run.json.error.code).toBe("rejected");
    expect(run.json.data.queue).toMatchObject({
      state: "rejected",
      rejection: { kind: "red", check: "record" },
    });
    // The integration checkout is gone; its failed check's log is kept, and the way to
    // reproduce it names the berth, not the removed checkout.
    const [failure] = run.json.data.gate.failures;
    expect(existsSync(failure.log)).toBe(true);
    expect(failure.log.startsWith(join(repo.path, ".git", "berth", "queue"))).toBe(true);
    expect(failure.reproduce.startsWith(`cd ${sneaky.path} && berth update && `)).toBe(true);
    // ...with that berth's BERTH_* variables, as its own gate would run the check.
    expect(failure.reproduce).toContain(` env BERTH_ID=${sneaky.id} `);
    expect(failure.reproduce).toContain(` BERTH_PATH=${sneaky.path} `);
    expect(failure.reproduce).not.toContain("integrate-");
    expect(existsSync(run.json.data.gate.path)).toBe(false);
    expect(tip(repo, "main")).toBe(trunkBefore);
    expect(existsSync(sneaky.path)).toBe(true);
  });

  it("a gate red only on the combination: the second entry is rejected by the integration gate, the first stays landed", async () => {
    const fx = queueFixture(recordingGate("! { test -e a.txt && test -e b.txt; }"));
    repo = fx.repo;
    const { env, marker } = fx;
    const a = await berthWith(repo, env, "a", { "a.txt": "a\n" });
    const b = await berthWith(repo, env, "b", { "b.txt": "b\n" });
    await gateGreen(env, a.path);
    await gateGreen(env, b.path);
    expect((await runBerth(["accept", a.id, "--yes"], { cwd: repo.path, env })).code).toBe(0);
    const aLanded = tip(repo, "main");
    const run = await runBerth(["accept", b.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.data.queue).toMatchObject({ state: "rejected", rejection: { kind: "red" } });
    // The gate ran on a commit holding both: the integration commit, never the trunk.
    const gated = checkedCommits(marker).at(-1) ?? "";
    expect(repo.git(["rev-parse", `${gated}^1`])).toBe(aLanded);
    expect(tip(repo, "main")).toBe(aLanded);
    expect(existsSync(b.path)).toBe(true);
  });
});

describe("a train whose later stage lands first", () => {
  it("the first stage, queued behind it, is landed as contained: no integration, no second gate, its berth finished", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env, marker } = fx;
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const started = await runBerth(["start", "two", "--from", one.branch, "--json"], {
      cwd: repo.path,
      env,
    });
    const two = started.json.data as { id: string; branch: string; path: string };
    repo.write("two.txt", "2\n", two.path);
    const twoTip = repo.commit("two: work", two.path);
    for (const stage of [two, one]) {
      const run = await runBerth(["accept", stage.id, "--no-wait", "--yes", "--json"], {
        cwd: repo.path,
        env,
      });
      expect(run.code).toBe(0);
    }

    const run = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(0);
    const [second, first] = run.json.data.decided;
    expect(second).toMatchObject({ id: two.id, state: "landed", landed: { via: "fast_forward" } });
    // Before, it went to an integration berth with nothing to merge and was rejected.
    expect(first).toMatchObject({
      id: one.id,
      state: "landed",
      rejection: null,
      landed: { old_trunk: twoTip, new_trunk: twoTip, via: "contained" },
    });
    expect(tip(repo, "main")).toBe(twoTip);
    expect(checkedCommits(marker)).toEqual([twoTip]);
    expect(existsSync(one.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
    expect(repo.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });
  it("a first stage awaiting approval, carried onto the trunk by its second stage: its entry is landed as contained, and its berth is left for prune", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const started = await runBerth(["start", "two", "--from", one.branch, "--json"], {
      cwd: repo.path,
      env,
    });
    const two = started.json.data as { id: string; branch: string; path: string };
    repo.write("two.txt", "2\n", two.path);
    const twoTip = repo.commit("two: work", two.path);
    const waiting = await runBerth(["accept", one.id, "--no-wait", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(waiting.json.data.queue.state).toBe("awaiting_approval");

    const run = await runBerth(["accept", two.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code, run.stderr).toBe(0);
    expect(tip(repo, "main")).toBe(twoTip);
    const queue = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    expect(queue.json.data.entries).toMatchObject([
      {
        id: one.id,
        state: "landed",
        authority: null,
        landed: { old_trunk: twoTip, new_trunk: twoTip, via: "contained" },
      },
      { id: two.id, state: "landed" },
    ]);
    // Recording the landing is not approving a teardown: the landed berth is prune's to clear.
    expect(existsSync(one.path)).toBe(true);
    const pruned = await runBerth(["worktree", "prune", "--yes"], { cwd: repo.path, env });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(existsSync(one.path)).toBe(false);
    const drained = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(drained.json.data.decided).toEqual([]);
    const after = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    expect(after.json.data.entries[0]).toMatchObject({ id: one.id, state: "landed" });
  });
});

describe("a berth being landed", () => {
  it("drop --force and park refuse while the lander gates it, and change nothing; the landing goes on", async () => {
    const { r, env, block, gating } = blockingGateFixture();
    const berth = await berthWith(r, env, "a", { "a.txt": "a\n" });
    const a = { ...berth, tip: tip(r, berth.branch) };
    await gateGreen(env, a.path);
    // The trunk moves on: the lander gates an integration commit, not the berth's receipt.
    r.write("t.txt", "t\n");
    r.commit("trunk work");
    writeFileSync(block, "");
    const accept = runBerth(["accept", a.id, "--yes", "--json"], { cwd: r.path, env });
    await untilGating(gating);

    for (const args of [
      ["worktree", "drop", a.id, "--force", "--yes", "--json"],
      ["worktree", "park", a.id, "--yes", "--json"],
    ]) {
      const run = await runBerth(args, { cwd: r.path, env });
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.json.error.message).toContain(`${a.id} is being landed by the landing queue now`);
      expect(run.json.error.next).toBe(`berth await --landed ${a.id}`);
      expect(existsSync(a.path)).toBe(true);
      expect(tip(r, a.branch)).toBe(a.tip);
    }
    rmSync(block);
    const landed = await accept;
    expect(landed.code).toBe(0);
    expect(isAncestor(r, a.tip, "main")).toBe(true);
  });

  it("a drop or park planned before the lander took the berth up refuses when it applies, and changes nothing", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const r = repo;
    const { env } = fx;
    const a = await berthWith(r, env, "a", { "a.txt": "a\n" });
    const aTip = tip(r, a.branch);
    const submitted = await runBerth(["accept", a.id, "--no-wait", "--json"], { cwd: r.path, env });
    expect(submitted.json.data.queue.state).toBe("awaiting_approval");
    const { ctx } = testContext(r.path, env);
    const commonDir = join(r.path, ".git");
    const plans = [
      () => planDrop(ctx, { target: a.id, force: true }).then((p) => () => applyDrop(ctx, p)),
      () => planPark(ctx, { target: a.id }).then((p) => () => applyPark(ctx, p)),
    ];
    for (const plan of plans) {
      const apply = await plan();
      // Between the plan (a confirmation can take minutes) and its apply, the lander takes it up.
      const [entry] = (await readQueue(commonDir)).filter((e) => e.id === a.id);
      if (entry === undefined) throw new Error("no queue entry");
      await writeEntry(commonDir, { ...entry, state: "gating", step: "fast_forward" });
      const before = fleetSnapshot(r);
      const error = (await apply().catch((e: unknown) => e)) as UserError;
      expect(error).toBeInstanceOf(UserError);
      expect(error.message).toContain(`${a.id} is being landed by the landing queue now`);
      expect(fleetSnapshot(r)).toBe(before);
      expect(existsSync(a.path)).toBe(true);
      expect(tip(r, a.branch)).toBe(aTip);
      expect(r.git(["for-each-ref", "refs/berth/recovery"])).toBe("");
      await writeEntry(commonDir, entry);
    }
  });
});

describe("submitting, approving and withdrawing", () => {
  it("--no-wait without --yes awaits approval; approve then queue run lands it; withdraw leaves the berth alone", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const two = await berthWith(repo, env, "two", { "two.txt": "2\n" });
    const trunkBefore = tip(repo, "main");
    const submitted = await runBerth(["accept", one.id, "--no-wait", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(submitted.code).toBe(0);
    expect(submitted.json.data.queue).toMatchObject({
      state: "awaiting_approval",
      position: 1,
    });
    const second = await runBerth(["accept", two.id, "--no-wait", "--json"], {
      cwd: repo.path,
      env,
    });
    // Its position is counted among the whole queue.
    expect(second.json.data.queue).toMatchObject({ state: "awaiting_approval", position: 2 });
    // Nothing lands without authority.
    const idle = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(idle.json.data.decided).toEqual([]);
    expect(tip(repo, "main")).toBe(trunkBefore);
    const status = await runBerth(["status", "--json"], { cwd: repo.path, env });
    expect(JSON.stringify(status.json.data)).toContain("awaiting_approval");
    const table = await runBerth(["status"], { cwd: repo.path, env });
    expect(table.stdout).toContain("(queue: awaiting_approval #1)");
    expect(table.stdout).toContain("(queue: awaiting_approval #2)");

    const withdrawn = await runBerth(["queue", "withdraw", two.id, "--json"], {
      cwd: repo.path,
      env,
    });
    expect(withdrawn.json.data.entry.state).toBe("withdrawn");
    const approved = await runBerth(["queue", "approve", one.id, "--json"], {
      cwd: repo.path,
      env,
    });
    expect(approved.json.data.entry).toMatchObject({ state: "queued", authority: "approved" });
    const drained = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(drained.code).toBe(0);
    expect(drained.json.data.decided.map((e: { id: string }) => e.id)).toEqual([one.id]);
    expect(drained.json.data.gate_runs).toBe(1);
    expect(existsSync(one.path)).toBe(false);
    expect(existsSync(two.path)).toBe(true);
    expect(berthBranches(repo)).toEqual([two.branch]);
  });

  it("queue approve before submission is a standing grant, listed and withdrawable: the --no-wait submission takes it up", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const main = repo.path;
    const berth = (...args: string[]) => runBerth(args, { cwd: main, env });
    const granted = await berth("queue", "approve", one.id, "--json");
    expect(granted.json.data.grant).toBe(one.id);

    // The grant is in the queue's listing, and a person can take it back.
    const listed = await berth("queue", "--json");
    expect(listed.json.data.grants).toEqual([{ id: one.id, at: expect.any(String) }]);
    expect((await berth("queue")).stdout).toContain(
      `Standing grants, each landing once submitted and green: ${one.id} (since `,
    );
    // status shows it on the berth's row too (decision 0078).
    const status = await berth("status", "--json");
    const row = (id: string) => status.json.data.worktrees.find((w: { id: string }) => w.id === id);
    expect(row(one.id)).toMatchObject({ granted: true, queue: null });
    expect((await berth("status")).stdout).toMatch(
      new RegExp(`${one.id}.*active \\(queue: granted\\)`),
    );
    const revoked = await berth("queue", "withdraw", one.branch);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(
      `${one.id}'s standing grant is withdrawn: its next submission waits for a person's approval.\n`,
    );
    expect((await berth("queue", "--json")).json.data.grants).toEqual([]);
    const again = await berth("queue", "withdraw", one.id, "--json");
    expect(again.json.error.message).toBe(
      `${one.id} has no entry waiting in the landing queue and no standing grant.`,
    );
    const waiting = await berth("accept", one.id, "--no-wait", "--json");
    expect(waiting.json.data.queue).toMatchObject({ state: "awaiting_approval", authority: null });
    expect((await berth("queue", "withdraw", one.id, "--json")).json.data.entry.state).toBe(
      "withdrawn",
    );

    // Granted again: the next submission takes it up, and it is no longer standing.
    expect((await berth("queue", "approve", one.id, "--json")).json.data.grant).toBe(one.id);
    const submitted = await berth("accept", one.id, "--no-wait", "--json");
    expect(submitted.json.data.queue).toMatchObject({
      state: "queued",
      authority: "approved",
    });
    expect((await berth("queue", "--json")).json.data.grants).toEqual([]);
    const after = await berth("status", "--json");
    expect(after.json.data.worktrees.find((w: { id: string }) => w.id === one.id)).toMatchObject({
      granted: false,
      queue: { state: "queued" },
    });

    // Work already on the trunk has nothing still to land: no grant is written (decision 0078).
    const two = await berthWith(repo, env, "two", { "two.txt": "2\n" });
    repo.git(["merge", "-q", "--ff-only", two.branch]);
    const landed = await berth("queue", "approve", two.id, "--json");
    expect(landed.code).toBe(1);
    expect(landed.json.error).toMatchObject({
      code: "precondition_failed",
      message: `${two.id}'s work is already on main; a standing grant is for work still to land.`,
    });
    expect((await berth("queue", "--json")).json.data.grants).toEqual([]);
  });

  it("accept with no terminal and no --yes: handed over for approval, then landed by a grant", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const main = repo.path;
    const berth = (...args: string[]) => runBerth([...args, "--json"], { cwd: main, env });
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const two = await berthWith(repo, env, "two", { "two.txt": "2\n" });
    const trunkBefore = tip(repo, "main");

    // No one to ask: it waits as an agent's accept would, and nothing lands.
    const handed = await berth("accept", one.id);
    expect(handed.code).toBe(1);
    expect(handed.json.error).toMatchObject({
      code: "awaiting_approval",
      next: `berth accept ${one.id}`,
    });
    expect(tip(repo, "main")).toBe(trunkBefore);
    // A person approves the waiting entry; the same accept again now lands it.
    expect((await berth("queue", "approve", one.id)).json.data.entry.authority).toBe("approved");
    const landed = await berth("accept", one.id);
    expect(landed.code, landed.stderr).toBe(0);
    expect(landed.json.data.queue).toMatchObject({ state: "landed", authority: "approved" });

    // A standing grant given before any submission lets it land at once, and is used up.
    expect((await berth("queue", "approve", two.id)).json.data.grant).toBe(two.id);
    const granted = await berth("accept", two.id);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.json.data.queue).toMatchObject({ state: "landed", authority: "approved" });
    expect((await berth("queue")).json.data.grants).toEqual([]);
  });

  it("a person's accept --yes takes up the berth's standing grant: after its rejection, a new tip waits for approval", async () => {
    const fx = queueFixture(recordingGate("! test -e forbidden.txt"));
    repo = fx.repo;
    const { env } = fx;
    const main = repo.path;
    const berth = (...args: string[]) => runBerth([...args, "--json"], { cwd: main, env });
    const bad = await berthWith(repo, env, "bad", { "forbidden.txt": "no\n" });
    // The trunk moves on: the landing is gated on an integration commit, in the queue.
    repo.write("elsewhere.txt", "moved\n");
    repo.commit("trunk moves on");
    expect((await berth("queue", "approve", bad.id)).json.data.grant).toBe(bad.id);
    const rejected = await berth("accept", bad.id, "--yes");
    expect(rejected.json.error?.code).toBe("rejected");
    expect((await berth("queue")).json.data.grants).toEqual([]);
    // Fixed at a new tip; no one confirms it this time, and the used grant does not stand in.
    repo.git(["rm", "-q", "forbidden.txt"], bad.path);
    repo.commit("drop forbidden.txt", bad.path);
    const trunkBefore = tip(repo, "main");
    const handed = await berth("accept", bad.id);
    expect(handed.json.error?.code).toBe("awaiting_approval");
    expect(tip(repo, "main")).toBe(trunkBefore);
  });

  it("a berth dropped or parked takes its standing grant with it: no grant is left for a submission that cannot come", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const main = repo.path;
    const berth = (...args: string[]) => runBerth([...args, "--json"], { cwd: main, env });
    const dropped = await berthWith(repo, env, "dropped", { "d.txt": "d\n" });
    const parked = await berthWith(repo, env, "parked", { "p.txt": "p\n" });
    const kept = await berthWith(repo, env, "kept", { "k.txt": "k\n" });
    for (const b of [dropped, parked, kept]) await berth("queue", "approve", b.id);
    expect((await berth("worktree", "drop", dropped.id, "--force", "--yes")).code).toBe(0);
    expect((await berth("worktree", "park", parked.id, "--yes")).code).toBe(0);
    const grants = (await berth("queue")).json.data.grants.map((g: { id: string }) => g.id);
    expect(grants).toEqual([kept.id]);
  });

  it("a standing grant does not finish a landing with no one to ask: the berth stays until a person confirms", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env } = fx;
    const main = repo.path;
    const berth = (...args: string[]) => runBerth([...args, "--json"], { cwd: main, env });
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    // Granted, then landed by hand: accept would only finish (tear it down, delete its branch).
    expect((await berth("queue", "approve", one.id)).json.data.grant).toBe(one.id);
    repo.git(["merge", "-q", "--ff-only", one.branch]);
    const refused = await berth("accept", one.id);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe("confirmation_required");
    expect(existsSync(one.path)).toBe(true);
    expect(berthBranches(repo)).toEqual([one.branch]);
    const confirmed = await berth("accept", one.id, "--yes");
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(existsSync(one.path)).toBe(false);
  });

  it("[acceptance].pre_authorized: accept without --yes and without a terminal lands", async () => {
    const fx = queueFixture(`${recordingGate()}\n[acceptance]\npre_authorized = true\n`);
    repo = fx.repo;
    const { env } = fx;
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const run = await runBerth(["accept", one.id, "--json"], { cwd: repo.path, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.data.queue).toMatchObject({ state: "landed", authority: "pre_authorized" });
  });

  it("a resubmission at a new tip carries only its own authority: a confirmation stays with the tip it confirmed", async () => {
    const fx = queueFixture(recordingGate());
    repo = fx.repo;
    const { env, marker } = fx;
    const one = await berthWith(repo, env, "one", { "one.txt": "1\n" });
    const trunkBefore = tip(repo, "main");
    const main = repo.path;
    const accept = (...flags: string[]) =>
      runBerth(["accept", one.id, "--no-wait", ...flags, "--json"], { cwd: main, env });
    expect((await accept("--yes")).json.data.queue).toMatchObject({
      state: "queued",
      authority: "confirmed",
    });
    // The same tip again, unconfirmed: it is still the tip the person confirmed.
    expect((await accept()).json.data.queue).toMatchObject({
      state: "queued",
      authority: "confirmed",
    });
    repo.write("unreviewed.txt", "agent\n", one.path);
    const unreviewed = repo.commit("agent: unreviewed", one.path);
    const resubmitted = await accept();
    expect(resubmitted.code).toBe(0);
    expect(resubmitted.json.data.queue).toMatchObject({
      state: "awaiting_approval",
      authority: null,
      tip: unreviewed,
    });
    const idle = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(idle.json.data.decided).toEqual([]);
    expect(tip(repo, "main")).toBe(trunkBefore);
    expect(checkedCommits(marker)).toEqual([]);
    // An approval is for the tip it approved too.
    const approved = await runBerth(["queue", "approve", one.id, "--json"], {
      cwd: repo.path,
      env,
    });
    expect(approved.json.data.entry).toMatchObject({ state: "queued", authority: "approved" });
    repo.write("more.txt", "more\n", one.path);
    repo.commit("agent: more", one.path);
    expect((await accept()).json.data.queue).toMatchObject({
      state: "awaiting_approval",
      authority: null,
    });
    expect(tip(repo, "main")).toBe(trunkBefore);
  });

  it("withdraw refuses once the lander has taken the entry, and changes nothing; the landing goes on", async () => {
    const { r, env, block, gating } = blockingGateFixture();
    const a = await berthWith(r, env, "a", { "a.txt": "a\n" });
    const aTip = tip(r, a.branch);
    writeFileSync(block, "");
    const accept = runBerth(["accept", a.id, "--yes", "--json"], { cwd: r.path, env });
    await untilGating(gating);

    const refused = await runBerth(["queue", "withdraw", a.id, "--json"], { cwd: r.path, env });
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toContain("it can no longer be withdrawn. Nothing changed.");
    const queue = await runBerth(["queue", "--json"], { cwd: r.path, env });
    expect(queue.json.data.entries).toMatchObject([{ id: a.id, state: "gating" }]);
    rmSync(block);
    const landed = await accept;
    expect(landed.code, landed.stderr).toBe(0);
    expect(tip(r, "main")).toBe(aTip);
  });

  it("queue run's decided lists only what it decided: an entry another process withdrew mid-drain is not among them", async () => {
    const { r, env, block, gating } = blockingGateFixture();
    const a = await berthWith(r, env, "a", { "a.txt": "a\n" });
    const b = await berthWith(r, env, "b", { "b.txt": "b\n" });
    for (const berth of [a, b]) {
      const submitted = await runBerth(["accept", berth.id, "--yes", "--no-wait", "--json"], {
        cwd: r.path,
        env,
      });
      expect(submitted.json.data.queue).toMatchObject({ state: "queued" });
    }
    writeFileSync(block, "");
    const run = runBerth(["queue", "run", "--json"], { cwd: r.path, env });
    await untilGating(gating);

    const withdrawn = await runBerth(["queue", "withdraw", b.id, "--json"], { cwd: r.path, env });
    expect(withdrawn.code, withdrawn.stderr).toBe(0);
    rmSync(block);
    const drained = await run;
    expect(drained.code, drained.stderr).toBe(0);
    expect(
      drained.json.data.decided.map((e: { id: string; state: string }) => [e.id, e.state]),
    ).toEqual([[a.id, "landed"]]);
    const queue = await runBerth(["queue", "--json"], { cwd: r.path, env });
    expect(
      queue.json.data.entries.map((e: { id: string; state: string }) => [e.id, e.state]),
    ).toEqual([
      [a.id, "landed"],
      [b.id, "withdrawn"],
    ]);
  });
});
