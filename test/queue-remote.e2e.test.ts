import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readLandingEntries } from "../src/io/landing-log.js";
import { installGitCounter } from "./helpers/git-counter.js";
import { waitFor } from "./helpers/processes.js";
import { checkedCommits, recordingGate } from "./helpers/queue.js";
import {
  declinePushesTo,
  makeTwoMachines,
  REMOTE_CONFIG,
  startWithCommit,
  type TwoMachines,
} from "./helpers/remote.js";
import { BERTH_BIN, collectRun, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * The landing queue with `[remote].name` (spec sections 11 and 13): every
 * queued landing goes through THE trunk move (core/landing/trunk-move.ts), a
 * push with lease of exactly the gated commit; a remote that moved sends the
 * entry round again, integrated against the remote's new trunk; the local
 * trunk moves only after the remote took the commit.
 */

let machines: TwoMachines | undefined;
afterEach(() => {
  machines?.cleanup();
  machines = undefined;
});

const remoteTip = (m: TwoMachines) => m.one.git(["--git-dir", m.bare, "rev-parse", "main"]);
const isAncestorIn = (repo: TestRepo, a: string, b: string) => {
  try {
    repo.git(["merge-base", "--is-ancestor", a, b]);
    return true;
  } catch {
    return false;
  }
};
/** Every value clone one's local trunk held, oldest first. */
const localTrunkHistory = (m: TwoMachines) =>
  m.one.git(["reflog", "show", "--format=%H", "refs/heads/main"]).split("\n").reverse();

function fixture(extra = "true", more = "") {
  const m = makeTwoMachines(`${REMOTE_CONFIG}${recordingGate(extra)}${more}`);
  machines = m;
  const marker = join(m.one.dir.path, "marker");
  const env = { ...m.one.env, MARKER: marker, TWO: m.two.path };
  const berth = (args: string[], cwd = m.one.path, e: NodeJS.ProcessEnv = env) =>
    runBerth(args, { cwd, env: e });
  return { m, marker, env, berth };
}

describe("the landing queue with [remote].name", () => {
  it("a queued landing is a push with lease of exactly the gated commit, then the local trunk", async () => {
    const { m, env, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    const old = m.one.git(["rev-parse", "main"]);
    const counter = installGitCounter(m.one.dir.path, env);
    const run = await berth(["accept", x.id, "--yes", "--json"], m.one.path, counter.env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.json.data.queue).toMatchObject({ state: "landed" });
    const pushes = counter.calls().filter((args) => args.includes("push"));
    expect(pushes).toHaveLength(1);
    expect(pushes[0]).toContain(`--force-with-lease=refs/heads/main:${old}`);
    expect(pushes[0]).toContain(`${x.tip}:refs/heads/main`);
    expect(remoteTip(m)).toBe(x.tip);
    expect(m.one.git(["rev-parse", "main"])).toBe(x.tip);
    expect(existsSync(x.path)).toBe(false);
  });

  it("a remote trunk that moved before the landing: integrated against it, gated, pushed", async () => {
    const { m, marker, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    m.two.write("two.txt", "two\n");
    const theirs = m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.json.data.queue).toMatchObject({ state: "landed" });
    const landed = remoteTip(m);
    // An integration commit: the remote's trunk first, the stack second; the gate ran on it.
    expect(m.one.git(["rev-parse", `${landed}^1`])).toBe(theirs);
    expect(m.one.git(["rev-parse", `${landed}^2`])).toBe(x.tip);
    expect(checkedCommits(marker)).toEqual([landed]);
    expect(m.one.git(["rev-parse", "main"])).toBe(landed);
    // Every value the local trunk held is on the remote's trunk: it never ran ahead of it.
    for (const oid of localTrunkHistory(m)) expect(isAncestorIn(m.one, oid, landed)).toBe(true);
  });

  it("an integration landing logs the branch's own tip, and one old trunk tip for the one move", async () => {
    const { m, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    const before = m.one.git(["rev-parse", "main"]);
    m.two.write("two.txt", "two\n");
    m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const landed = remoteTip(m);
    const log = await readLandingEntries(join(m.one.path, ".git"));
    // One line, x's own: the throwaway integration berth is not a landing of its own.
    expect(log.map((e) => e.branch)).toEqual([x.branch]);
    // x's line names x's commit, not the merge commit that holds it, and the one move of the local trunk.
    expect(log[0]).toMatchObject({ tip: x.tip, new_trunk: landed, old_trunk: before });

    const status = await berth(["status", "--json"]);
    const row = status.json.data.landings.find((l: { branch: string }) => l.branch === x.branch);
    expect(row).toMatchObject({ tip: x.tip, new_trunk: landed });
    const wait = await berth(["await", "--landed", x.branch, "--timeout", "0", "--json"]);
    expect(wait.code, wait.stdout + wait.stderr).toBe(0);
    expect(wait.json.data).toMatchObject({ met: true, landed_commit: x.tip });
  });

  it("a stack another machine already landed, with more on top: landed contained, the local trunk follows", async () => {
    const { m, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["push", "-q", "origin", `${x.tip}:refs/heads/main`]);
    m.two.git(["pull", "-q", "--ff-only", "origin", "main"]);
    m.two.write("two.txt", "two\n");
    m.two.commit("after x, from machine two");
    m.two.git(["push", "-q", "origin", "main"]);
    const theirs = remoteTip(m);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // Nothing of x moved the remote's trunk: the range it records is empty, and says why.
    expect(run.json.data.queue).toMatchObject({
      state: "landed",
      landed: { old_trunk: theirs, new_trunk: theirs, via: "contained" },
    });
    expect(remoteTip(m)).toBe(theirs);
    expect(m.one.git(["rev-parse", "main"])).toBe(theirs);
    expect(existsSync(x.path)).toBe(false);
  });

  it("a local trunk that diverged from the remote's is refused at once, naming the divergence", async () => {
    const { m, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    m.two.write("two.txt", "two\n");
    m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);
    m.one.write("local.txt", "committed on main, never pushed\n");
    m.one.commit("local only");
    const before = remoteTip(m);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("have diverged");
    expect(run.json.error.message).not.toContain("kept moving");
    expect(run.json.error.next).toBe(`git -C ${m.one.path} pull origin main`);
    expect(remoteTip(m)).toBe(before);
    expect(m.one.git(["rev-parse", x.branch])).toBe(x.tip);
  });

  it("an integration refused for the main checkout's sake names the submitter's berth, not the integration berth", async () => {
    const { m, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    // Machine two lands a file that clone one's main checkout holds untracked.
    m.two.write("clash.txt", "from machine two\n");
    m.two.commit("two adds clash.txt");
    m.two.git(["push", "-q", "origin", "main"]);
    m.one.write("clash.txt", "precious, untracked\n");
    const before = remoteTip(m);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("clash.txt");
    expect(run.json.error.message).toContain(`berth accept ${x.id}`);
    expect(run.json.error.message).not.toMatch(/berth accept integrate-/);
    expect(remoteTip(m)).toBe(before);
    expect(readFileSync(join(m.one.path, "clash.txt"), "utf8")).toBe("precious, untracked\n");
  });

  it("a remote that moved while gating: the lease loses, the entry is re-integrated against the new remote trunk", async () => {
    // The first gate run (in the berth, for a fast-forward) lands a commit from machine two.
    const { m, marker, berth } = fixture(
      `{ [ -e "$MARKER.moved" ] || { touch "$MARKER.moved" && git -C "$TWO" commit -q --allow-empty -m theirs && git -C "$TWO" push -q origin main; }; }`,
    );
    const x = await startWithCommit(m, m.one, "x");
    const before = m.one.git(["rev-parse", "main"]);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const theirs = m.two.git(["rev-parse", "main"]);
    expect(theirs).not.toBe(before);
    const landed = remoteTip(m);
    const checked = checkedCommits(marker);
    // The fast-forward was gated on the berth's tip, then its push lost the lease; the
    // second round integrated against the remote's new trunk and gated exactly that commit.
    expect(checked).toEqual([x.tip, landed]);
    expect(m.one.git(["rev-parse", `${landed}^1`])).toBe(theirs);
    expect(m.one.git(["rev-parse", `${landed}^2`])).toBe(x.tip);
    expect(isAncestorIn(m.one, theirs, landed)).toBe(true); // the remote was never rewound
    expect(m.one.git(["rev-parse", "main"])).toBe(landed);
    // The local trunk moved once, from where it was to what the remote took.
    expect(localTrunkHistory(m).slice(-2)).toEqual([before, landed]);
    // Both gates count, the one whose landing lost the lease too.
    expect(run.json.data.queue).toMatchObject({ state: "landed", gate_runs: 2 });
  });

  it("an integration whose push lost the lease counts its gate, then the one that landed", async () => {
    const { m, marker, berth } = fixture(
      `{ [ -e "$MARKER.moved" ] || { touch "$MARKER.moved" && git -C "$TWO" commit -q --allow-empty -m again && git -C "$TWO" push -q origin main; }; }`,
    );
    const x = await startWithCommit(m, m.one, "x");
    m.two.write("two.txt", "two\n");
    m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(checkedCommits(marker)).toHaveLength(2);
    expect(run.json.data.queue).toMatchObject({ state: "landed", gate_runs: 2 });
  });

  it("a lander killed after the remote took the push, before the local trunk followed: queue run completes it", async () => {
    const { m, marker, env, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    m.two.write("two.txt", "two\n");
    const theirs = m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);
    const before = m.one.git(["rev-parse", "main"]);
    // Once the remote updated its trunk, the hook kills the nearest node ancestor: the lander.
    const hook = join(m.bare, "hooks", "post-receive");
    writeFileSync(
      hook,
      `#!/bin/sh
[ -e "$MARKER.killed" ] && exit 0
touch "$MARKER.killed"
p=$PPID
while [ "$p" -gt 1 ]; do
  case "$(ps -o comm= -p "$p")" in node*) kill -9 "$p"; exit 0 ;; esac
  p=$(ps -o ppid= -p "$p" | tr -d ' ')
done
`,
    );
    chmodSync(hook, 0o755);
    const killed = await berth(["accept", x.id, "--yes", "--json"]);
    expect(killed.code).not.toBe(0);
    expect(existsSync(`${marker}.killed`)).toBe(true);
    const pushed = remoteTip(m);
    expect(m.one.git(["rev-parse", `${pushed}^1`])).toBe(theirs);
    expect(m.one.git(["rev-parse", "main"])).toBe(before); // the local trunk had not followed yet

    const resumed = await berth(["queue", "run", "--json"], m.one.path, env);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.json.data.decided.map((e: { state: string }) => e.state)).toEqual(["landed"]);
    // The remote was not rewound or moved again; the local trunk followed it to the gated commit.
    expect(remoteTip(m)).toBe(pushed);
    expect(m.one.git(["rev-parse", "main"])).toBe(pushed);
    expect(checkedCommits(marker)).toContain(pushed);
    expect(localTrunkHistory(m).slice(-2)).toEqual([before, pushed]);
    expect(existsSync(x.path)).toBe(false);
    const left = m.one.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm);
    expect(left).toHaveLength(1);
  });

  it("a remote that declines the push (a protected trunk): remote_failed once, in the remote's words; one gate, one push", async () => {
    const { m, marker, berth } = fixture();
    const hook = declinePushesTo(
      m,
      "refs/heads/main",
      "protected branch: pushes to main need a review",
    );
    const x = await startWithCommit(m, m.one, "x");
    // Machine two moved the remote trunk first, so the landing is an integration (and gated there).
    m.two.write("two.txt", "two\n");
    m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);
    hook.on();
    const remoteBefore = remoteTip(m);
    const before = m.one.git(["rev-parse", "main"]);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json.error.code).toBe("remote_failed");
    expect(run.json.error.message).toContain("declined");
    expect(run.json.error.message).toContain("protected branch: pushes to main need a review");
    expect(run.json.error.message).not.toContain("kept moving");
    expect(run.json.error.message).not.toContain("could not be reached");
    expect(run.json.error.next).toBe(`berth queue withdraw ${x.id}`);
    expect(checkedCommits(marker)).toHaveLength(1);
    expect(hook.declined()).toHaveLength(1);
    expect(remoteTip(m)).toBe(remoteBefore);
    expect(m.one.git(["rev-parse", "main"])).toBe(before);
    expect(m.one.git(["rev-parse", x.branch])).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);
    const queue = await berth(["queue", "--json"]);
    expect(queue.json.data.entries).toMatchObject([{ id: x.id, state: "queued" }]);
    expect(m.one.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(2);

    // Once the remote lets it in, the same entry lands.
    hook.off();
    const again = await berth(["queue", "run", "--json"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(m.one.git(["rev-parse", `${remoteTip(m)}^2`])).toBe(x.tip);
  });

  it("[acceptance].queue = false and the remote's trunk moved: refused with next berth update, no gate, nothing pushed", async () => {
    const { m, marker, berth } = fixture("true", "\n[acceptance]\nqueue = false\n");
    const x = await startWithCommit(m, m.one, "x");
    m.two.write("two.txt", "two\n");
    m.two.commit("landed from machine two");
    m.two.git(["push", "-q", "origin", "main"]);
    const remoteBefore = remoteTip(m);
    const before = m.one.git(["rev-parse", "main"]);

    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain("does not contain the tip of main");
    expect(run.json.error.message).toContain("[acceptance].queue = false");
    expect(run.json.error.next).toContain("berth update");
    expect(checkedCommits(marker)).toEqual([]);
    expect(remoteTip(m)).toBe(remoteBefore);
    expect(m.one.git(["rev-parse", "main"])).toBe(before);
    expect(m.one.git(["rev-parse", x.branch])).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);
    expect(m.one.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(2);
  });

  it("a remote that cannot write its trunk (a stale lock there): remote_failed once, the entry stays queued, not retried as a race", async () => {
    const { m, marker, env, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    const lock = join(m.bare, "refs", "heads", "main.lock");
    writeFileSync(lock, "");
    const remoteBefore = remoteTip(m);
    const counter = installGitCounter(m.one.dir.path, env);
    const run = await berth(["accept", x.id, "--yes", "--json"], m.one.path, counter.env);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json.error.code).toBe("remote_failed");
    expect(run.json.error.message).toContain(`its main is still at ${remoteBefore.slice(0, 7)}`);
    expect(run.json.error.message).toContain("cannot lock ref");
    expect(run.json.error.message).toContain(`${x.id} stays queued as entry 1`);
    expect(counter.calls().filter((args) => args.includes("push"))).toHaveLength(1);
    expect(checkedCommits(marker)).toHaveLength(1);
    expect(remoteTip(m)).toBe(remoteBefore);
    expect(m.one.git(["rev-parse", x.branch])).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);

    // Once the remote can write again, the same entry lands.
    rmSync(lock);
    const again = await berth(["queue", "run", "--json"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(remoteTip(m)).toBe(x.tip);
  });

  it("an unreachable remote: accept is remote_failed, nothing landed, the entry stays queued", async () => {
    const { m, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["remote", "set-url", "origin", join(m.one.dir.path, "does-not-exist.git")]);
    const before = m.one.git(["rev-parse", "main"]);
    const run = await berth(["accept", x.id, "--yes", "--json"]);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("remote_failed");
    expect(m.one.git(["rev-parse", "main"])).toBe(before);
    expect(m.one.git(["rev-parse", x.branch])).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);
    expect(run.json.error.message).toContain(`${x.id} stays queued as entry 1`);
    const queue = await berth(["queue", "--json"]);
    expect(queue.json.data.entries).toMatchObject([{ id: x.id, state: "queued" }]);
    // A person reading it is told the entry waits, not that nothing changed.
    const told = await berth(["accept", x.id, "--yes"]);
    expect(told.code).toBe(1);
    expect(told.stderr + told.stdout).toContain("stays queued as entry 1");
    expect(told.stderr + told.stdout).not.toMatch(/nothing changed/i);
    // No integration checkout is left behind.
    expect(m.one.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(2);
  });

  it("a withdrawal while the lander fetches the remote's trunk: it never lands, and the queue says withdrawn", async () => {
    const { m, env, berth } = fixture();
    const x = await startWithCommit(m, m.one, "x");
    const before = m.one.git(["rev-parse", "main"]);
    const submitted = await berth(["accept", x.id, "--yes", "--no-wait", "--json"]);
    expect(submitted.json.data.queue).toMatchObject({ state: "queued", authority: "confirmed" });
    // The lander's fetch (the landing's base) waits while $dir/block exists: the window every
    // remote landing has between taking its entries from the queue and landing them.
    const dir = m.one.dir.path;
    const uploadPack = join(dir, "slow-upload-pack");
    writeFileSync(
      uploadPack,
      `#!/bin/sh\ntouch "${dir}/fetching"\nwhile [ -e "${dir}/block" ]; do sleep 0.05; done\nexec git-upload-pack "$@"\n`,
    );
    chmodSync(uploadPack, 0o755);
    m.one.git(["config", "remote.origin.uploadpack", uploadPack]);
    writeFileSync(join(dir, "block"), "");
    const lander = spawn(process.execPath, [BERTH_BIN, "queue", "run", "--json"], {
      cwd: m.one.path,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const drained = collectRun(lander);
    await waitFor("the lander's fetch", () => existsSync(join(dir, "fetching")), 20_000);

    const withdrawn = await berth(["queue", "withdraw", x.id, "--json"]);
    expect(withdrawn.code, withdrawn.stdout + withdrawn.stderr).toBe(0);
    expect(withdrawn.json.data.entry.state).toBe("withdrawn");
    rmSync(join(dir, "block"));
    const run = await drained;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const queue = await berth(["queue", "--json"]);
    expect(queue.json.data.entries).toMatchObject([{ id: x.id, state: "withdrawn" }]);
    expect(remoteTip(m)).toBe(before);
    expect(m.one.git(["rev-parse", "main"])).toBe(before);
    expect(m.one.git(["rev-parse", x.branch])).toBe(x.tip);
    expect(existsSync(x.path)).toBe(true);
  });
});
