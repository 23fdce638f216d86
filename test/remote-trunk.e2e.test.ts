import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installGitCounter } from "./helpers/git-counter.js";
import {
  declinePushesTo,
  makeTwoMachines,
  startWithCommit,
  type TwoMachines,
} from "./helpers/remote.js";
import {
  makeRepo,
  makeSubmoduleOrigin,
  runBerth,
  submodule,
  type TestRepo,
} from "./helpers/repo.js";

/**
 * The remote trunk (spec section 13, docs/decisions/0051): a bare repository
 * on disk is the remote, two clones are two machines. accept lands by a push
 * with lease of exactly the proved commit; the local trunk follows only after
 * the remote took it.
 */

let machines: TwoMachines | undefined;
let local: TestRepo | undefined;
afterEach(() => {
  machines?.cleanup();
  local?.cleanup();
  machines = undefined;
  local = undefined;
});

const tipOf = (repo: TestRepo, ref: string, cwd?: string) => repo.git(["rev-parse", ref], cwd);
const remoteTip = (m: TwoMachines) => m.one.git(["--git-dir", m.bare, "rev-parse", "main"]);

describe("accept with [remote].name", () => {
  it("pushes exactly the proved commit, then moves the local trunk", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    const run = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(remoteTip(m)).toBe(x.tip);
    expect(tipOf(m.one, "main")).toBe(x.tip);
    expect(tipOf(m.one, "refs/remotes/origin/main")).toBe(x.tip);
  });

  it("await --landed judges by the remote's trunk as last fetched, as status does, before the local trunk follows", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    const before = tipOf(m.one, "main");
    // Landed on the remote (as a forge's merge button would), then fetched here.
    m.one.git(["push", "-q", "origin", `${x.tip}:refs/heads/main`]);
    m.one.git(["fetch", "-q", "origin"]);
    expect(tipOf(m.one, "main")).toBe(before);

    const status = await m.berth(["status", "--json"]);
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === x.path);
    expect(row).toMatchObject({ state: "landed" });
    const run = await m.berth(["await", "--landed", x.id, "--timeout", "0", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.json.data).toMatchObject({ met: true, met_by: "landed", landed_commit: x.tip });
  });

  it("status says when the remote's trunk is ahead of the local one, or diverged from it, and how to bring them together", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.two, "x");
    const landed = await m.berth(["accept", x.id, "--yes", "--json"], m.two.path);
    expect(landed.code, landed.stdout + landed.stderr).toBe(0);
    const hintsOf = async (args: string[]) => (await m.berth([...args, "--json"])).json.hints;
    const ahead = (hint: string) => hint.startsWith("origin's main, as last fetched, is");
    // Not fetched yet: this clone knows nothing of it.
    expect((await hintsOf(["status"])).some(ahead)).toBe(false);
    const bringUp = `git -C ${m.one.path} merge --ff-only origin/main`;
    // --remote fetches after the survey read its refs: the hint is from that fetch.
    expect(await hintsOf(["status", "--remote"])).toContain(
      "origin's main, as last fetched, is 1 commit(s) ahead of main here: berth start and gate " +
        `build on it, but ahead/behind count against main; bring main up to date: ${bringUp}`,
    );
    m.one.write("local.txt", "only here\n");
    m.one.commit("a commit on this clone's main");
    expect(await hintsOf(["status"])).toContain(
      "main here and origin's main, as last fetched, have diverged (1 and 1 commit(s) of their own): " +
        `accept refuses until they are brought together; git -C ${m.one.path} pull origin main`,
    );
    m.one.git(["reset", "-q", "--hard", "HEAD~1"]);
    m.one.git(["merge", "-q", "--ff-only", "origin/main"]);
    const after = await hintsOf(["status"]);
    expect(after.filter((h: string) => h.includes("as last fetched"))).toEqual([]);
  });

  it("status --remote fetches the trunk alone: a submodule whose origin is gone does not fail it", async () => {
    const m = makeTwoMachines();
    machines = m;
    const lib = makeSubmoduleOrigin(m.one, "lib");
    submodule(m.one, ["add", "-q", lib, "lib"]);
    m.one.commit("add lib");
    m.one.git(["push", "-q", "origin", "main"]);
    m.two.git(["pull", "-q", "origin", "main"]);
    submodule(m.two, ["update", "--init", "-q"]);
    // Machine two moves lib's pointer on the trunk: a fetch of it would fetch lib too, on demand.
    m.one.write("f.txt", "two\n", lib);
    const next = m.one.commit("lib moves", lib);
    m.two.git(
      ["-c", "protocol.file.allow=always", "fetch", "-q", "origin"],
      join(m.two.path, "lib"),
    );
    m.two.git(["checkout", "-q", next], join(m.two.path, "lib"));
    m.two.commit("bump lib");
    m.two.git(["push", "-q", "origin", "main"]);
    renameSync(lib, `${lib}-gone`);
    const status = await m.berth(["status", "--remote", "--json"]);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.json.hints).toContainEqual(
      expect.stringMatching(/^origin's main, as last fetched, is 1 commit\(s\) ahead of main here/),
    );
  });

  it("clone two moved the remote trunk: the queue integrates against it; nothing rewinds", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    // Machine two lands something first.
    m.two.write("two.txt", "two\n");
    const theirs = m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);

    // The stack does not contain the remote's trunk: it lands through an integration
    // commit on it (spec section 11), pushed with a lease (test/queue-remote.e2e.test.ts).
    const run = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const landed = remoteTip(m);
    expect(m.one.git(["rev-parse", `${landed}^1`])).toBe(theirs); // never rewound
    expect(m.one.git(["rev-parse", `${landed}^2`])).toBe(x.tip);
    // Its gate says what it proved: the merge, containing the remote's trunk.
    expect(run.json.data.gate).toMatchObject({ commit: landed, trunk_tip: theirs });
    expect(tipOf(m.one, "main")).toBe(landed);
    expect(existsSync(x.path)).toBe(false);
  });

  it("a gate needs the remote trunk as last fetched, start forks from it; update fetches it first and merges it; then the landing is a fast-forward by the receipt", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    m.two.write("two.txt", "two\n");
    const theirs = m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);

    // Once fetched, the remote's trunk is the one a receipt must contain: a gate now
    // would prove a commit that could only land through another gate run.
    m.one.git(["fetch", "-q", "origin"]);
    const stale = await m.berth(["gate", "--json"], x.path);
    expect(stale.code, stale.stdout + stale.stderr).toBe(1);
    expect(stale.json.error.message).toContain(
      `does not contain the tip of origin's main (${theirs.slice(0, 8)})`,
    );
    expect(stale.json.error.next).toBe("berth update");
    // A berth started now forks from that trunk, so its gate needs no update.
    const fresh = await m.berth(["start", "fresh", "--json"]);
    expect(fresh.json.data).toMatchObject({ from: "origin/main", from_tip: theirs });
    const freshGate = await m.berth(["gate", "--json"], fresh.json.data.path);
    expect(freshGate.code, freshGate.stdout + freshGate.stderr).toBe(0);

    const update = await m.berth(["update", "--json"], x.path);
    expect(update.code, update.stdout + update.stderr).toBe(0);
    const merged = tipOf(m.one, "HEAD", x.path);
    expect(m.one.git(["merge-base", "--is-ancestor", theirs, merged], x.path)).toBe("");
    const gate = await m.berth(["gate", "--json"], x.path);
    expect(gate.code, gate.stdout + gate.stderr).toBe(0);
    expect(gate.json.data).toMatchObject({ commit: merged, trunk_tip: theirs });
    const again = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json.data.validated).toMatchObject({ by: "receipt", commit: merged });
    expect(remoteTip(m)).toBe(merged);
    expect(tipOf(m.one, "main")).toBe(merged);
  });

  it("a push the remote declines is remote_failed once, in the remote's words, nothing changed", async () => {
    const m = makeTwoMachines();
    machines = m;
    const hook = declinePushesTo(
      m,
      "refs/heads/main",
      "protected branch: pushes to main need a review",
    );
    hook.on();
    const x = await startWithCommit(m, m.one, "x");
    const before = tipOf(m.one, "main");
    const run = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json.error.code).toBe("remote_failed");
    expect(run.json.error.message).toContain("origin declined the push");
    expect(run.json.error.message).toContain("protected branch: pushes to main need a review");
    expect(hook.declined()).toEqual([x.tip]);
    expect(remoteTip(m)).toBe(before);
    expect(tipOf(m.one, "main")).toBe(before);
    expect(tipOf(m.one, x.branch)).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);
  });

  it("a remote with no trunk yet: refused as what it is, next pushes the trunk there; nothing changed", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    // A fresh remote: reached, but it has no main (and clone one never fetched one).
    m.one.git(["--git-dir", m.bare, "update-ref", "-d", "refs/heads/main"]);
    m.one.git(["update-ref", "-d", "refs/remotes/origin/main"]);
    const before = tipOf(m.one, "main");
    const run = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("origin has no main yet");
    expect(run.json.error.message).not.toContain("could not be reached");
    expect(run.json.error.next).toBe(`git -C ${m.one.path} push origin main`);
    expect(tipOf(m.one, "main")).toBe(before);
    expect(tipOf(m.one, x.branch)).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);
    const update = await m.berth(["update", "--json"], x.path);
    expect(update.code).toBe(1);
    expect(update.json.error.message).toContain("origin has no main yet");

    // Its next step is what makes the landing possible.
    m.one.git(["push", "-q", "origin", "main"]);
    const again = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(remoteTip(m)).toBe(x.tip);
  });

  it("an unreachable remote is remote_failed, exit 1, nothing changed", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["remote", "set-url", "origin", join(m.one.dir.path, "does-not-exist.git")]);
    const before = tipOf(m.one, "main");
    const run = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("remote_failed");
    expect(run.json.error.message).toContain("origin");
    // git's own failure, not the tail of its advice ("... and the repository exists.").
    expect(run.json.error.message).toContain("does not appear to be a git repository");
    expect(run.json.error.message).not.toContain("repository exists");
    expect(tipOf(m.one, "main")).toBe(before);
    expect(tipOf(m.one, x.branch)).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);

    const update = await m.berth(["update", "--json"], x.path);
    expect(update.code).toBe(1);
    expect(update.json.error.code).toBe("remote_failed");
    expect(tipOf(m.one, "HEAD", x.path)).toBe(x.tip);

    for (const args of [
      ["await", "--landed", x.branch, "--remote", "--timeout", "0", "--json"],
      ["status", "--remote", "--json"],
    ]) {
      const run = await m.berth(args);
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.json.error.code).toBe("remote_failed");
      expect(run.json.error.message).toContain("origin");
    }
  });
});

describe("a fleet with no [remote]", () => {
  it("never runs a git network command, even with an origin that would fail loudly", async () => {
    local = makeRepo({ config: "[logbook]\nenabled = false\n" });
    const r = local;
    r.git(["remote", "add", "origin", join(r.dir.path, "does-not-exist.git")]);
    const counter = installGitCounter(r.dir.path, r.env);
    const env = counter.env;
    const start = await runBerth(["start", "n", "--json"], { cwd: r.path, env });
    const n = start.json.data as { id: string; path: string };
    r.write("n.txt", "n\n", n.path);
    r.commit("n", n.path);
    for (const args of [
      ["status", "--json"],
      ["update", "--json"],
      ["gate", "--json"],
      ["await", "--green", n.id, "--timeout", "0", "--json"],
      ["accept", n.id, "--yes", "--json"],
      ["worktree", "prune", "--yes", "--json"],
    ]) {
      const run = await runBerth(args, {
        cwd: args[0] === "accept" || args[0] === "worktree" ? r.path : n.path,
        env,
      });
      expect(run.code, `${args.join(" ")}: ${run.stdout}${run.stderr}`).toBe(0);
    }
    const network = counter
      .calls()
      .filter((args) =>
        args.some((a) => ["fetch", "push", "pull", "ls-remote", "clone"].includes(a)),
      );
    expect(network).toEqual([]);
    expect(counter.calls().length).toBeGreaterThan(10);
  });
});
