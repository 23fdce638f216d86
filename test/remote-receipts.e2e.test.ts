import { afterEach, describe, expect, it } from "vitest";
import { naturalCompare } from "../src/text.js";
import {
  declinePushesTo,
  makeTwoMachines,
  PUBLISHING_CONFIG,
  startWithCommit,
  type TwoMachines,
} from "./helpers/remote.js";
import { runBerth } from "./helpers/repo.js";

/**
 * Receipts across machines (spec section 13, docs/decisions/0053, 0054): a
 * bare repository on disk is the remote, two clones are two machines, each
 * publishing its green receipts as notes under refs/notes/berth.
 */

let machines: TwoMachines | undefined;
afterEach(() => {
  machines?.cleanup();
  machines = undefined;
});

const notesOnRemote = (m: TwoMachines, commit: string) =>
  m.one.git(["--git-dir", m.bare, "notes", "--ref=berth", "show", commit]);

/** Clone two's `await --landed <branch> --remote` answers from the landing note: x landed at its tip. */
async function expectLandedFromTwo(m: TwoMachines, x: { branch: string; tip: string }) {
  const landed = await m.berth(
    ["await", "--landed", x.branch, "--remote", "--timeout", "0", "--json"],
    m.two.path,
  );
  expect(landed.code, landed.stdout + landed.stderr).toBe(0);
  expect(landed.json.data).toMatchObject({ met: true, met_by: "landed", landed_commit: x.tip });
  expect(landed.json.data.landing).toMatchObject({ branch: x.branch, tip: x.tip });
}

describe("receipts published as notes", () => {
  it("a stage gated in clone one is awaited green from clone two", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const x = await startWithCommit(m, m.one, "x");

    // Not pushed yet: the answer says the remote has no such branch, and how to put it there.
    const unpushed = await m.berth(
      ["await", "--green", x.branch, "--remote", "--timeout", "0"],
      m.two.path,
    );
    expect(unpushed.code, unpushed.stdout + unpushed.stderr).toBe(124);
    expect(unpushed.stdout).toContain(`there is no branch ${x.branch} (yet) to judge`);
    expect(unpushed.stderr).toContain(
      `push it from the machine that works on it (git push origin ${x.branch})`,
    );
    m.one.git(["push", "-q", "origin", x.branch], x.path);

    // Not green yet: no note for its tip on the remote.
    const before = await m.berth(
      ["await", "--green", x.branch, "--remote", "--timeout", "0", "--json"],
      m.two.path,
    );
    expect(before.code, before.stdout + before.stderr).toBe(124);
    expect(before.json.data.met).toBe(false);

    const gate = await m.berth(["gate", "--json"], x.path);
    expect(gate.code, gate.stdout + gate.stderr).toBe(0);
    const note = JSON.parse(notesOnRemote(m, x.tip));
    expect(note).toMatchObject({ berth_receipt: 1, commit: x.tip, branch: x.branch });

    const after = await m.berth(
      ["await", "--green", x.branch, "--remote", "--timeout", "0", "--json"],
      m.two.path,
    );
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect(after.json.data).toMatchObject({ met: true, met_by: "receipt", tip: x.tip });
    // By its id, as a local await takes it: clone two, which has no checkout of it, and clone
    // one, which has, both ask the remote about its branch, not a branch named like the id.
    for (const cwd of [m.two.path, m.one.path]) {
      const byId = await m.berth(
        ["await", "--green", x.id, "--remote", "--timeout", "0", "--json"],
        cwd,
      );
      expect(byId.code, byId.stdout + byId.stderr).toBe(0);
      expect(byId.json.data).toMatchObject({ met: true, branch: x.branch, tip: x.tip });
    }
    // refs/heads/<name> is always the branch as given (decision 0079).
    for (const cwd of [m.two.path, m.one.path]) {
      const literal = await m.berth(
        ["await", "--green", `refs/heads/${x.id}`, "--remote", "--timeout", "0", "--json"],
        cwd,
      );
      expect(literal.code).toBe(124);
      expect(literal.json.data).toMatchObject({ met: false, branch: x.id, tip: null });
    }

    // status --remote in clone two: the branch with no checkout there, green by its note;
    // an ungated one pushed from clone one is listed without.
    const y = await startWithCommit(m, m.one, "y");
    m.one.git(["push", "-q", "origin", y.branch], y.path);
    const status = await m.berth(["status", "--remote", "--json"], m.two.path);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.json.data.remote_refs).toEqual(
      [
        { remote: "origin", branch: x.branch, tip: x.tip, landed: false, green: true },
        { remote: "origin", branch: y.branch, tip: y.tip, landed: false, green: false },
      ].sort((p, q) => naturalCompare(p.branch, q.branch)),
    );
    // Clone one holds both checkouts: nothing to add there.
    const own = await m.berth(["status", "--remote", "--json"]);
    expect(own.json.data.remote_refs).toEqual([]);

    // A branch deleted on the remote is no longer listed: the fetch prunes what it maps.
    m.one.git(["push", "-q", "origin", "--delete", y.branch]);
    const pruned = await m.berth(["status", "--remote", "--json"], m.two.path);
    expect(pruned.json.data.remote_refs).toEqual([
      { remote: "origin", branch: x.branch, tip: x.tip, landed: false, green: true },
    ]);

    // A newer tip is not satisfied by the note for the older tree.
    m.one.write("more.txt", "more\n", x.path);
    const newer = m.one.commit("more", x.path);
    m.one.git(["push", "-q", "origin", x.branch], x.path);
    const stale = await m.berth(
      ["await", "--green", x.branch, "--remote", "--timeout", "0", "--json"],
      m.two.path,
    );
    expect(stale.code).toBe(124);
    expect(stale.json.data).toMatchObject({ met: false, tip: newer });
  });

  it("a red gate after a green one supersedes its note; a green one after that is green again", async () => {
    const m = makeTwoMachines(
      PUBLISHING_CONFIG.replace('run = "true"', 'run = "test -z \\"$FAIL\\""'),
    );
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["push", "-q", "origin", x.branch], x.path);
    const gate = (fail: boolean) =>
      runBerth(["gate", "--json"], {
        cwd: x.path,
        env: { ...m.one.env, FAIL: fail ? "1" : "" },
      });
    const fromTwo = async () => {
      const run = await m.berth(
        ["await", "--green", x.branch, "--remote", "--timeout", "0", "--json"],
        m.two.path,
      );
      const status = await m.berth(["status", "--remote", "--json"], m.two.path);
      return { code: run.code, metBy: run.json.data.met_by, listed: status.json.data.remote_refs };
    };

    expect((await gate(false)).code).toBe(0);
    expect(await fromTwo()).toEqual({
      code: 0,
      metBy: "receipt",
      listed: [{ remote: "origin", branch: x.branch, tip: x.tip, landed: false, green: true }],
    });

    const red = await gate(true);
    expect(red.code, red.stdout + red.stderr).toBe(1);
    expect(red.json.data.receipt.reason).toContain("published to origin");
    const lines = notesOnRemote(m, x.tip)
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.checks[0].ok).sort()).toEqual([false, true]);
    expect(await fromTwo()).toEqual({
      code: 124,
      metBy: null,
      listed: [{ remote: "origin", branch: x.branch, tip: x.tip, landed: false, green: false }],
    });

    expect((await gate(false)).code).toBe(0);
    expect(await fromTwo()).toMatchObject({ code: 0, metBy: "receipt" });
  });

  it("concurrent gates in both clones leave both notes on the remote", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const a = await startWithCommit(m, m.one, "a");
    const b = await startWithCommit(m, m.two, "b");
    const [ga, gb] = await Promise.all([
      m.berth(["gate", "--json"], a.path),
      m.berth(["gate", "--json"], b.path),
    ]);
    expect(ga.code, ga.stdout).toBe(0);
    expect(gb.code, gb.stdout).toBe(0);
    expect(JSON.parse(notesOnRemote(m, a.tip)).commit).toBe(a.tip);
    expect(JSON.parse(notesOnRemote(m, b.tip)).commit).toBe(b.tip);

    // And a third gate in clone one, after clone two's push, merges instead of overwriting.
    const c = await startWithCommit(m, m.one, "c");
    const gc = await m.berth(["gate", "--json"], c.path);
    expect(gc.code).toBe(0);
    for (const tip of [a.tip, b.tip, c.tip])
      expect(JSON.parse(notesOnRemote(m, tip)).commit).toBe(tip);
  });

  it("a notes push the remote declines is said once, in the remote's words; the gate stays green", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const hook = declinePushesTo(m, "refs/notes/berth", "notes are read-only here");
    hook.on();
    const x = await startWithCommit(m, m.one, "x");
    const gate = await m.berth(["gate", "--json"], x.path);
    expect(gate.code, gate.stdout + gate.stderr).toBe(0);
    const text = JSON.stringify(gate.json.data);
    expect(text).toContain("not published: origin declined the push");
    expect(text).toContain("notes are read-only here");
    expect(text).not.toContain("kept moving");
    expect(hook.declined()).toHaveLength(1);
  });

  it("a landing note answers await --landed --remote for a branch accept deleted", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["push", "-q", "origin", x.branch], x.path);
    const accept = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(accept.code, accept.stdout + accept.stderr).toBe(0);
    // Still on the remote after it landed, and a second one squashed there by hand (a
    // forge's squash): status --remote from clone two says both have landed.
    const y = await startWithCommit(m, m.one, "y");
    m.one.git(["push", "-q", "origin", y.branch], y.path);
    m.one.git(["merge", "-q", "--squash", y.branch]);
    m.one.git(["commit", "-q", "-m", "squash y"]);
    m.one.git(["push", "-q", "origin", "main"]);
    const listed = await m.berth(["status", "--remote", "--json"], m.two.path);
    expect(listed.json.data.remote_refs).toEqual(
      [
        { remote: "origin", branch: x.branch, tip: x.tip, landed: true, green: true },
        { remote: "origin", branch: y.branch, tip: y.tip, landed: true, green: false },
      ].sort((p, q) => naturalCompare(p.branch, q.branch)),
    );
    const text = await m.berth(["status", "--remote"], m.two.path);
    expect(text.stdout).toContain(
      `remote ${x.branch} at ${x.tip.slice(0, 8)}: landed on origin's main; the branch can go (git push origin --delete ${x.branch})`,
    );
    // Gone everywhere but the landing note: deleted on the remote as a forge would.
    m.one.git(["push", "-q", "origin", "--delete", x.branch]);
    await expectLandedFromTwo(m, x);
  });

  it("a landing through an integration commit publishes the berth's own landing note: await --landed --remote from clone two finds it", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    // Clone two moved the remote trunk first, so x lands through an integration commit.
    m.two.write("two.txt", "two\n");
    m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);
    const accept = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(accept.code, accept.stdout + accept.stderr).toBe(0);
    await expectLandedFromTwo(m, x);
  });

  it("a wait from clone two polls the remote until clone one's gate publishes", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["push", "-q", "origin", x.branch], x.path);
    const waiting = runBerth(
      ["await", "--green", x.branch, "--remote", "--timeout", "40", "--json"],
      { cwd: m.two.path, env: m.two.env },
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const gate = await m.berth(["gate", "--json"], x.path);
    expect(gate.code).toBe(0);
    const answer = await waiting;
    expect(answer.code, answer.stdout + answer.stderr).toBe(0);
    expect(answer.json.data).toMatchObject({ met: true, met_by: "receipt", tip: x.tip });
    // The first look found nothing; the answer came from a later one, at least 5 s on.
    expect(answer.json.data.waited_ms).toBeGreaterThanOrEqual(5000);
  }, 60_000);
});
