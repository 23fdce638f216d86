import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acceptCommand } from "../src/commands/accept.js";
import { proposeDeskAction } from "../src/commands/desk-actions.js";
import { actionUnavailable, buildDeskModel, type DeskBerthItem } from "../src/core/desk/model.js";
import { readStatus } from "../src/core/fleet/status.js";
import type { ActionProposal, ConfirmableAction } from "../src/ui/desk/types.js";
import { ledgerFiles } from "./helpers/fleet.js";
import { logbookLines } from "./helpers/logbook.js";
import { isGone, leftovers, recordedPid, waitFor } from "./helpers/processes.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";
import { type StartedBerth, startWithCommit } from "./helpers/train.js";

/**
 * The desk's actions, in process on real repositories: each shows the CLI
 * verb's exact command and plan, changes nothing until confirmed, runs the
 * verb's own core code, and is logged as that verb's invocation.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const refs = (r: TestRepo) => r.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
const worktrees = (r: TestRepo) => r.git(["worktree", "list", "--porcelain"]);

async function itemFor(r: TestRepo, berth: StartedBerth): Promise<DeskBerthItem> {
  const { ctx } = testContext(r.path, r.env);
  const status = await readStatus(ctx, { all: true });
  const model = buildDeskModel(status.data as NonNullable<typeof status.data>, ctx.now());
  const item = model.items.find((i) => i.kind === "berth" && i.row.path === berth.path);
  if (item === undefined || item.kind !== "berth") throw new Error(`${berth.id} is not a row`);
  return item;
}

async function propose(
  r: TestRepo,
  action: "gate" | "update" | "accept" | "approve" | "withdraw" | "reclaim" | "park" | "drop",
  berth: StartedBerth,
): Promise<ActionProposal> {
  const { ctx } = testContext(r.path, r.env);
  return proposeDeskAction({ base: ctx, cwd: () => r.path }, action, await itemFor(r, berth));
}

function confirmable(proposal: ActionProposal): ConfirmableAction {
  if (proposal.kind !== "confirm") throw new Error(`refused: ${proposal.text}`);
  return proposal;
}

const finishes = (r: TestRepo) =>
  logbookLines(r.path)
    .map((line) => JSON.parse(line))
    .filter((e) => e.event === "finish");

const noSignal = new AbortController().signal;

describe("desk and the landing queue", () => {
  it("an entry awaiting approval shows in its row; approve (the y key) queues it, withdraw (w) takes another out", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b");
    expect(actionUnavailable(await itemFor(repo, a), "withdraw")).toContain(
      "has no entry waiting in the landing queue and no standing grant",
    );
    for (const berth of [a, b]) {
      const { ctx } = testContext(repo.path, repo.env);
      const submitted = await acceptCommand(ctx, berth.id, { wait: false });
      expect(submitted.result.ok).toBe(true);
    }
    const item = await itemFor(repo, a);
    expect(item.row.queue).toMatchObject({ state: "awaiting_approval", position: 1 });

    const approve = confirmable(await propose(repo, "approve", a));
    expect(approve.command).toBe(`berth queue approve ${a.id}`);
    const approved = await approve.apply(noSignal, () => undefined);
    expect(approved.ok).toBe(true);
    expect((await itemFor(repo, a)).row.queue).toMatchObject({ state: "queued" });
    expect(finishes(repo).at(-1)).toMatchObject({ verb: "queue approve", outcome: "ok" });

    const withdraw = confirmable(await propose(repo, "withdraw", b));
    expect(withdraw.command).toBe(`berth queue withdraw ${b.id}`);
    await withdraw.apply(noSignal, () => undefined);
    expect((await itemFor(repo, b)).row.queue).toMatchObject({ state: "withdrawn" });
    expect(existsSync(b.path)).toBe(true);
  });

  it("approve on a berth not yet submitted gives a standing grant the row shows; withdraw takes it back (decision 0078)", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const grant = confirmable(await propose(repo, "approve", a));
    expect(grant.command).toBe(`berth queue approve ${a.id}`);
    expect(grant.question).toBe(
      `Let ${a.id} land once it is submitted and green (a standing grant)?`,
    );
    expect((await itemFor(repo, a)).row.granted).toBe(false);
    const granted = await grant.apply(noSignal, () => undefined);
    expect(granted.ok, granted.text).toBe(true);
    expect(granted.text).toContain(`${a.id} may land once it is submitted and green`);
    const item = await itemFor(repo, a);
    expect(item.row).toMatchObject({ granted: true, queue: null });
    expect(actionUnavailable(item, "approve")).toContain("w takes that grant back");

    const revoke = confirmable(await propose(repo, "withdraw", a));
    expect(revoke.command).toBe(`berth queue withdraw ${a.id}`);
    expect(revoke.question).toContain("standing grant");
    const revoked = await revoke.apply(noSignal, () => undefined);
    expect(revoked.ok, revoked.text).toBe(true);
    expect((await itemFor(repo, a)).row.granted).toBe(false);
    expect(finishes(repo).map((f) => f.verb)).toEqual(["queue approve", "queue withdraw"]);

    // A grant is for work still to land: a landed berth is refused, and nothing is written.
    repo.git(["merge", "-q", "--ff-only", a.branch]);
    const before = refs(repo);
    expect(actionUnavailable(await itemFor(repo, a), "approve")).toBe(
      `${a.id}'s work is already on the trunk; a standing grant is for work still to land`,
    );
    expect(refs(repo)).toBe(before);
  });

  it("approve grants a contained stage as berth queue approve does: one rule for both (decision 0081)", async () => {
    repo = makeRepo();
    const one = await startWithCommit(repo, "one");
    await startWithCommit(repo, "two", one);
    const item = await itemFor(repo, one);
    expect(item.row.state).toBe("contained");
    expect(actionUnavailable(item, "approve")).toBeNull();
    const granted = await confirmable(await propose(repo, "approve", one)).apply(
      noSignal,
      () => undefined,
    );
    expect(granted.ok, granted.text).toBe(true);
    expect((await itemFor(repo, one)).row.granted).toBe(true);
  });

  it("accept from the desk lands a berth behind the trunk through an integration commit", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const aTip = repo.git(["rev-parse", a.branch]);
    repo.write("trunk.txt", "moved\n");
    const moved = repo.commit("trunk moves on");
    const accept = confirmable(await propose(repo, "accept", a));
    const result = await accept.apply(noSignal, () => undefined);
    expect(result.ok, result.text).toBe(true);
    expect(result.text).toContain("(1 commit(s) and an integration commit, validated by the gate)");
    expect(repo.git(["rev-parse", "main^1"])).toBe(moved);
    expect(repo.git(["rev-parse", "main^2"])).toBe(aTip);
    expect(existsSync(a.path)).toBe(false);
  });
});

describe("desk reclaim (ADR 0225)", () => {
  it("names the command, what is kept and destroyed; No changes nothing; y reclaims that berth alone and keeps its ref", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b", a);
    await startWithCommit(repo, "c", b);
    const refsBefore = refs(repo);
    expect((await itemFor(repo, a)).group).toBe("contained");
    expect((await itemFor(repo, b)).group).toBe("contained");

    const declined = confirmable(await propose(repo, "reclaim", a));
    expect(declined.command).toBe(`berth worktree reclaim ${a.id} --yes`);
    expect(declined.note).toBeNull();
    expect(declined.planText).toContain(`keeps:     the branch refs ${a.branch}`);
    expect(declined.planText).toContain(
      "destroys:  their checkouts and per-berth state, the gate receipt included",
    );
    expect(declined.planText).toContain("contained (reclaim: --contained) (1)"); // a alone, not b
    expect(declined.question).toBe(`Reclaim ${a.id} (branch ${a.branch} is kept)?`);
    const worktreesBefore = worktrees(repo);
    await declined.decline();
    expect(worktrees(repo)).toBe(worktreesBefore);
    expect(refs(repo)).toBe(refsBefore);
    expect(finishes(repo).at(-1)).toMatchObject({
      verb: "worktree reclaim",
      outcome: "refused",
      error_code: "confirmation_required",
    });

    const confirmed = confirmable(await propose(repo, "reclaim", a));
    const result = await confirmed.apply(noSignal, () => undefined);
    expect(result.ok).toBe(true);
    expect(result.text).toContain(`reclaimed (branch ${a.branch} kept)`);
    expect(existsSync(a.path)).toBe(false);
    expect(existsSync(b.path)).toBe(true); // also contained, but not what the desk asked for
    expect(refs(repo)).toBe(refsBefore); // every ref, a's included, byte-identical
    expect(finishes(repo).at(-1)).toMatchObject({ verb: "worktree reclaim", outcome: "ok" });
  });

  it("refuses, changing nothing, when the berth stopped being contained after the desk read it", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    await startWithCommit(repo, "b", a);
    const item = await itemFor(repo, a);
    writeFileSync(join(a.path, "late.txt"), "late\n");
    const before = worktrees(repo);
    const { ctx } = testContext(repo.path, repo.env);
    const proposal = await proposeDeskAction({ base: ctx, cwd: () => ctx.cwd }, "reclaim", item);
    expect(proposal.kind).toBe("refused");
    // The clause that stopped it: the file written after the desk read it.
    expect(proposal.kind === "refused" && proposal.text).toContain(
      `${a.id} is not contained: uncommitted or untracked files`,
    );
    expect(worktrees(repo)).toBe(before);
  });
});

describe("desk drop", () => {
  it("shows --force only when the plan says work would be lost, and says so", async () => {
    repo = makeRepo();
    const worked = await startWithCommit(repo, "worked");
    const fresh = await startWithCommit(repo, "fresh", undefined, 0);

    const forced = confirmable(await propose(repo, "drop", worked));
    expect(forced.command).toBe(`berth worktree drop ${worked.id} --force --yes`);
    expect(forced.note).toContain("discards work");
    expect(forced.planText).toContain("discards");
    expect(forced.planText).toContain("1 commit(s) not on the trunk");

    const plain = confirmable(await propose(repo, "drop", fresh));
    expect(plain.command).toBe(`berth worktree drop ${fresh.id} --yes`);
    expect(plain.note).toBeNull();
    expect(plain.planText).not.toContain("discards");
    const result = await plain.apply(noSignal, () => undefined);
    expect(result.ok).toBe(true);
    expect(result.text).toContain(`dropped ${fresh.id}`);
    expect(existsSync(fresh.path)).toBe(false);
    expect(existsSync(worked.path)).toBe(true);
    expect(finishes(repo).at(-1)).toMatchObject({ verb: "worktree drop", outcome: "ok" });
  });
});

describe("desk park", () => {
  it("shows `berth worktree park <id> --yes` and what is kept; No changes nothing; y parks it", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "shelf");
    const refsBefore = refs(repo);
    const declined = confirmable(await propose(repo, "park", berth));
    expect(declined.command).toBe(`berth worktree park ${berth.id} --yes`);
    expect(declined.planText).toContain(`keeps     branch ${berth.branch}`);
    expect(declined.planText).toContain("destroys  the checkout");
    expect(declined.question).toBe(`Park ${berth.id} (branch ${berth.branch} is kept)?`);
    await declined.decline();
    expect(existsSync(berth.path)).toBe(true);
    expect(finishes(repo).at(-1)).toMatchObject({ verb: "worktree park", outcome: "refused" });

    const confirmed = confirmable(await propose(repo, "park", berth));
    const result = await confirmed.apply(noSignal, () => undefined);
    expect(result.ok).toBe(true);
    expect(result.text).toContain(`parked ${berth.id}`);
    expect(existsSync(berth.path)).toBe(false);
    expect(refs(repo)).toBe(refsBefore);
    const { ctx } = testContext(repo.path, repo.env);
    const status = await readStatus(ctx, { all: true });
    expect(status.data?.refs).toEqual([
      expect.objectContaining({ branch: berth.branch, state: "parked", abandoned: false }),
    ]);
  });
});

describe("desk gate, update, accept", () => {
  it("gates in the berth's folder and records a receipt, as `berth gate` there would", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "g");
    const proposal = confirmable(await propose(repo, "gate", berth));
    expect(proposal.command).toBe(`cd ${berth.path} && berth gate`);
    expect(proposal.planText).toContain(`would gate ${berth.branch}`);
    expect((await itemFor(repo, berth)).row.receipt).toBe("missing");
    const result = await proposal.apply(noSignal, () => undefined);
    expect(result.ok).toBe(true);
    expect((await itemFor(repo, berth)).row.receipt).toBe("honored");
    expect((await itemFor(repo, berth)).group).toBe("ready");
    expect(finishes(repo).at(-1)).toMatchObject({
      verb: "gate",
      outcome: "ok",
      path: berth.path,
    });
  });

  it("shows the gate's own refusal on a dirty tree, and nothing runs", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "g");
    writeFileSync(join(berth.path, "wip.txt"), "wip\n");
    const proposal = await propose(repo, "gate", berth);
    expect(proposal.kind).toBe("refused");
    expect(proposal.kind === "refused" && proposal.text).toMatch(/^berth gate: /);
    expect(proposal.kind === "refused" && proposal.text).toContain("next:");
    expect(finishes(repo).at(-1)).toMatchObject({ verb: "gate", outcome: "refused" });
  });

  it("updates in the berth's folder", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "u");
    repo.write("trunk.txt", "moved\n");
    repo.commit("trunk moves");
    const proposal = confirmable(await propose(repo, "update", berth));
    expect(proposal.command).toBe(`cd ${berth.path} && berth update`);
    expect(proposal.planText).toContain("would bring in 1 commit(s) from main");
    const result = await proposal.apply(noSignal, () => undefined);
    expect(result.ok).toBe(true);
    expect((await itemFor(repo, berth)).row.behind).toBe(0);
  });

  it("a gate refused for a berth behind the trunk: its next step runs in the berth's folder", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "behind");
    repo.write("trunk.txt", "moved\n");
    repo.commit("trunk moves");
    const proposal = await propose(repo, "gate", berth);
    expect(proposal.kind).toBe("refused");
    expect(proposal.kind === "refused" && proposal.text).toContain(
      `next: cd ${berth.path} && berth update`,
    );
  });

  it("a refused drop shows the command with its berth, never a bare verb", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "held");
    repo.git(["worktree", "lock", berth.path]);
    const proposal = await propose(repo, "drop", berth);
    expect(proposal.kind).toBe("refused");
    expect(proposal.command).toBe(`berth worktree drop ${berth.id}`);
  });

  it("update: the trunk moved while the confirmation waited; nothing is merged, and it says so", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "u");
    repo.write("trunk.txt", "moved\n");
    repo.commit("trunk moves");
    const proposal = confirmable(await propose(repo, "update", berth));
    expect(proposal.planText).toContain("would bring in 1 commit(s) from main");
    const head = repo.git(["rev-parse", "HEAD"], berth.path);
    repo.write("surprise.txt", "not in the plan\n");
    repo.commit("trunk moves again");
    const result = await proposal.apply(noSignal, () => undefined);
    expect(result.ok).toBe(false);
    expect(result.text).toContain("changed since the plan");
    expect(repo.git(["rev-parse", "HEAD"], berth.path)).toBe(head);
  });

  it("accepts with the command `berth accept <id> --yes` and lands the tip", async () => {
    repo = makeRepo();
    const berth = await startWithCommit(repo, "land");
    const tip = repo.git(["rev-parse", berth.branch]);
    const proposal = confirmable(await propose(repo, "accept", berth));
    expect(proposal.command).toBe(`berth accept ${berth.id} --yes`);
    expect(proposal.planText).toContain("by running the gate now");
    expect(repo.git(["rev-parse", "main"])).not.toBe(tip);
    const result = await proposal.apply(noSignal, () => undefined);
    expect(result.ok).toBe(true);
    expect(repo.git(["rev-parse", "main"])).toBe(tip);
    expect(finishes(repo).at(-1)).toMatchObject({ verb: "accept", outcome: "ok" });
  });
});

describe("the desk's Ctrl-C on a running action", () => {
  const spawned = leftovers();
  afterEach(() => spawned.killAll());

  /** A project command that runs until stopped once `slow` exists, its child's pid recorded. */
  function slowRepo(config: (slowCommand: string) => string): { pidFile: string; slow: string } {
    const r = makeRepo();
    repo = r;
    const pidFile = join(r.dir.path, "command.pid");
    const slow = join(r.dir.path, "slow");
    Object.assign(r.env, { PIDFILE: pidFile, SLOW: slow });
    r.write(
      "berth.toml",
      config(`if [ -e "$SLOW" ]; then sleep 300 & echo $! > "$PIDFILE"; wait; fi`),
    );
    r.commit("berth.toml");
    return { pidFile, slow };
  }

  async function interruptOnceRunning(
    proposal: ConfirmableAction,
    pidFile: string,
  ): Promise<{ ok: boolean; text: string }> {
    const stop = new AbortController();
    const result = proposal.apply(stop.signal, () => undefined);
    await waitFor("the project command to start", () => recordedPid(pidFile) !== null, 30_000);
    const sleeper = recordedPid(pidFile) as number;
    spawned.add(sleeper);
    stop.abort();
    const done = await result;
    await waitFor("the project command's child to end", () => isGone(sleeper), 5_000);
    return done;
  }

  it("drop: the destroy is stopped and stays recorded, and the logbook says interrupted", async () => {
    const { pidFile, slow } = slowRepo(
      (slowCommand) => `[worktree.resources.db]\ncreate = 'true'\ndestroy = '${slowCommand}'\n`,
    );
    const r = repo as TestRepo;
    const berth = await startWithCommit(r, "d");
    writeFileSync(slow, "");
    const result = await interruptOnceRunning(
      confirmable(await propose(r, "drop", berth)),
      pidFile,
    );
    expect(result.ok).toBe(false);
    expect(result.text).toMatch(/interrupted/);
    expect(ledgerFiles(r)).toHaveLength(1);
    expect(existsSync(berth.path)).toBe(true);
    expect(finishes(r).at(-1)).toMatchObject({ verb: "worktree drop", outcome: "interrupted" });
  }, 60_000);

  it("update: the ensure is stopped, and the answer names the setup that finishes it", async () => {
    const { pidFile, slow } = slowRepo(
      (slowCommand) => `[worktree.setup]\nensure = ['${slowCommand}']\n`,
    );
    const r = repo as TestRepo;
    const berth = await startWithCommit(r, "u");
    r.write("trunk.txt", "moved\n");
    r.commit("trunk moves");
    writeFileSync(slow, "");
    const result = await interruptOnceRunning(
      confirmable(await propose(r, "update", berth)),
      pidFile,
    );
    expect(result.ok).toBe(false);
    expect(result.text).toContain("berth worktree setup");
    expect(finishes(r).at(-1)).toMatchObject({ verb: "update", outcome: "interrupted" });
  }, 60_000);
});
