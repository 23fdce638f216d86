import { execSync } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * A row status cannot show as it should says what is wrong and the command
 * that mends it: a `broken` berth (berth made the checkout, but it is no
 * longer on the branch berth made for it) which of the two it is, and an
 * `unreadable` one git's own reason. Each hint's command, run as printed,
 * makes the row active again.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

interface Row {
  id: string;
  path: string;
  state: string;
}

async function fleet(r: TestRepo): Promise<{ rows: Row[]; hints: string[] }> {
  const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
  expect(status.code).toBe(0);
  return { rows: status.json.data.worktrees, hints: status.json.hints };
}

async function started(r: TestRepo, name: string): Promise<{ id: string; path: string }> {
  const run = await runBerth(["start", name, "--json"], { cwd: r.path, env: r.env });
  return run.json.data;
}

/** The command a hint ends with, run in a shell as a person would paste it. */
function runHintCommand(r: TestRepo, hint: string, marker: string): void {
  const command = hint.slice(hint.indexOf(marker) + marker.length);
  execSync(command, { cwd: r.path, env: r.env, stdio: "ignore" });
}

describe("a broken berth's hint", () => {
  it("names its deleted branch, its other branch, or both, each with the command that mends it", async () => {
    repo = makeRepo();
    const r = repo;
    const deleted = await started(r, "deleted");
    r.write("work.txt", "committed\n", deleted.path);
    const lastCommit = r.commit("work", deleted.path);
    r.git(["update-ref", "-d", `refs/heads/berth/${deleted.id}`]);
    const switched = await started(r, "switched");
    r.git(["switch", "-q", "-c", "elsewhere"], switched.path);
    const orphaned = await started(r, "orphaned");
    r.git(["switch", "-q", "-c", "kept"], orphaned.path);
    r.git(["branch", "-D", "-q", `berth/${orphaned.id}`]);

    const before = await fleet(r);
    const stateOf = (rows: Row[], id: string) => rows.find((w) => w.id === id)?.state;
    for (const b of [deleted, switched, orphaned])
      expect(stateOf(before.rows, b.id)).toBe("broken");
    const hintFor = (id: string) => before.hints.find((h) => h.startsWith(`${id}: `)) ?? "";
    expect(hintFor(deleted.id)).toBe(
      `${deleted.id}: berth/${deleted.id} was deleted under it; its last commit, ${lastCommit.slice(0, 8)}, ` +
        `is in the checkout's HEAD log: the command makes berth/${deleted.id} there again: ` +
        `git -C ${deleted.path} branch berth/${deleted.id} ${lastCommit}`,
    );
    expect(hintFor(switched.id)).toBe(
      `${switched.id}: has elsewhere checked out, not its berth branch berth/${switched.id}; ` +
        `go back with git -C ${switched.path} switch berth/${switched.id}`,
    );
    expect(hintFor(orphaned.id)).toBe(
      `${orphaned.id}: has kept checked out, and its berth branch berth/${orphaned.id} no longer exists; ` +
        `make it at HEAD with git -C ${orphaned.path} switch -c berth/${orphaned.id}`,
    );

    runHintCommand(r, hintFor(deleted.id), "there again: ");
    runHintCommand(r, hintFor(switched.id), "go back with ");
    runHintCommand(r, hintFor(orphaned.id), "make it at HEAD with ");
    const after = await fleet(r);
    for (const b of [deleted, switched, orphaned]) expect(stateOf(after.rows, b.id)).toBe("active");
    expect(after.hints.filter((h) => /^(deleted|switched|orphaned)-/.test(h))).toEqual([]);
    expect(r.git(["rev-parse", `berth/${deleted.id}`])).toBe(lastCommit);
  });
});

describe("gate, update and await in a berth whose branch was deleted", () => {
  it("refuse with the command that makes the branch again, not 'no commits yet', and its next gates", async () => {
    repo = makeRepo();
    const r = repo;
    const b = await started(r, "gone");
    r.write("work.txt", "committed\n", b.path);
    const lastCommit = r.commit("work", b.path);
    r.git(["update-ref", "-d", `refs/heads/berth/${b.id}`]);
    const mend = `git -C ${b.path} branch berth/${b.id} ${lastCommit}`;
    const told =
      `${b.id}: berth/${b.id} was deleted under it; its last commit, ${lastCommit.slice(0, 8)}, ` +
      `is in the checkout's HEAD log: the command makes berth/${b.id} there again`;
    for (const verb of ["gate", "update"]) {
      const run = await runBerth([verb, "--json"], { cwd: b.path, env: r.env });
      expect(run.code).toBe(1);
      expect(run.json.error.message).toBe(`${told}, then run berth ${verb}.`);
      expect(run.json.error.next).toBe(`${mend} && berth ${verb}`);
    }
    const waited = await runBerth(["await", "--green", b.id, "--timeout", "1", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(waited.json.error.message).toBe(`${told}.`);
    expect(waited.json.error.next).toBe(`${mend} && berth await --green ${b.id}`);
    execSync(`${mend} && node ${join(process.cwd(), "dist", "cli.cjs")} gate`, {
      cwd: b.path,
      env: r.env,
      stdio: "ignore",
    });
    const row = (await fleet(r)).rows.find((w) => w.id === b.id) as Row & { receipt: string };
    expect(row.state).toBe("active");
    expect(row.receipt).toBe("honored");
  });

  it("still says 'no commits yet' on an unborn branch that was never the berth's", async () => {
    repo = makeRepo();
    const r = repo;
    const b = await started(r, "orphan");
    r.git(["switch", "-q", "--orphan", "fresh"], b.path);
    const run = await runBerth(["gate", "--json"], { cwd: b.path, env: r.env });
    expect(run.json.error.message).toBe(
      "fresh has no commits yet; commit something, then run berth gate.",
    );
  });
});

describe("an unreadable checkout's hint", () => {
  it("names git worktree repair where its .git file leads astray, else the git status that says why", async () => {
    repo = makeRepo();
    const r = repo;
    const lost = await started(r, "lost");
    writeFileSync(join(lost.path, ".git"), "gitdir: /nowhere/at/all\n");
    const garbled = await started(r, "garbled");
    writeFileSync(join(r.path, ".git", "worktrees", garbled.id, "index"), "not an index");

    const before = await fleet(r);
    expect(before.rows.find((w) => w.id === lost.id)?.state).toBe("unreadable");
    const hint = before.hints.find((h) => h.startsWith(`${lost.id}: `)) ?? "";
    expect(hint).toBe(
      `${lost.id}: git cannot read its checkout: its .git file leads to /nowhere/at/all, not to its ` +
        `admin folder ${join(r.path, ".git", "worktrees", lost.id)}; git -C ${r.path} worktree repair points it back`,
    );

    expect(before.rows.find((w) => w.id === garbled.id)?.state).toBe("unreadable");
    expect(before.hints).toContain(
      `${garbled.id}: git cannot read its checkout; git -C ${garbled.path} status says why`,
    );

    execSync(hint.slice(hint.lastIndexOf("; ") + 2, hint.lastIndexOf(" points")), {
      cwd: lost.path,
      env: r.env,
      stdio: "ignore",
    });
    const after = await fleet(r);
    expect(after.rows.find((w) => w.id === lost.id)?.state).toBe("active");
    expect(after.hints.filter((h) => h.startsWith(`${lost.id}: `))).toEqual([]);
  });
});

describe("a prunable row's hint", () => {
  it("names the repair a moved folder needs before the prune that would forget it; the repair makes it active", async () => {
    repo = makeRepo();
    const r = repo;
    const b = await started(r, "moved");
    r.write("work.txt", "not committed\n", b.path);
    const movedTo = join(r.dir.path, "elsewhere");
    renameSync(b.path, movedTo);

    const before = await fleet(r);
    expect(before.rows.find((w) => w.id === b.id)?.state).toBe("prunable");
    expect(before.hints).toContain(
      `${b.id}: its folder ${b.path} is gone; if it was moved, git worktree repair run in its new folder ` +
        "records where it is; if it was removed, berth worktree prune forgets it, its resources with it",
    );

    execSync("git worktree repair", { cwd: movedTo, env: r.env, stdio: "ignore" });
    const after = await fleet(r);
    expect(after.rows.find((w) => w.id === b.id)).toMatchObject({ state: "active", path: movedTo });
    expect(after.hints.filter((h) => h.startsWith(`${b.id}: `))).toEqual([]);
  });
});
