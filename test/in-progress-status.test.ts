import { spawnSync } from "node:child_process";
import { renameSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Issue 15 item 14: a rebase stopped half-way in a live berth is reported as
 * what it is, with the git commands that continue or abort it, never as
 * abandoned work to resume with `berth start --from`.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("an operation in progress in a berth", () => {
  it("status names the rebase and its continue/abort commands; its branch is not abandoned", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "rebasing", "--json"], { cwd: r.path, env: r.env });
    const berth = started.json.data as { id: string; branch: string; path: string };
    r.write("shared.txt", "berth side\n", berth.path);
    r.commit("berth edit", berth.path);
    r.write("shared.txt", "trunk side\n");
    r.commit("trunk edit");
    const rebase = spawnSync("git", ["rebase", "main"], { cwd: berth.path, env: r.env });
    expect(rebase.status).not.toBe(0); // stopped on the conflict

    const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(status.code).toBe(0);
    const row = status.json.data.worktrees.find((w: { id: string }) => w.id === berth.id);
    expect(row.in_progress).toBe("rebase");
    expect(status.json.data.refs).toEqual([]);
    const hint = status.json.hints.find((h: string) => h.startsWith(`${berth.id}:`));
    expect(hint).toBe(
      `${berth.id}: a rebase of ${berth.branch} is in progress; continue it with ` +
        `git -C ${berth.path} rebase --continue, or abort it with git -C ${berth.path} rebase --abort`,
    );
    const human = await runBerth(["status"], { cwd: r.path, env: r.env });
    expect(human.stderr + human.stdout).not.toContain("abandoned");
    expect(human.stderr + human.stdout).not.toContain("berth start --from");
  });

  it("gate --json refuses a merge stopped on a conflict with a document the schema describes", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "merging", "--json"], { cwd: r.path, env: r.env });
    const berth = started.json.data as { id: string; branch: string; path: string };
    r.write("shared.txt", "berth side\n", berth.path);
    r.commit("berth edit", berth.path);
    r.write("shared.txt", "trunk side\n");
    r.commit("trunk edit");
    const merge = spawnSync("git", ["merge", "main"], { cwd: berth.path, env: r.env });
    expect(merge.status).not.toBe(0); // stopped on the conflict

    // runBerth checks the document against schemas/envelope.schema.json.
    const gate = await runBerth(["gate", "--json"], { cwd: berth.path, env: r.env });
    expect(gate.code).toBe(1);
    expect(gate.json.error.code).toBe("precondition_failed");
    expect(gate.json.data).toEqual({
      in_progress: "merge",
      continue: "git merge --continue",
      abort: "git merge --abort",
    });
  });

  it("a bisect: status names it and git bisect reset, and gate refuses naming the same", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "bisecting", "--json"], { cwd: r.path, env: r.env });
    const berth = started.json.data as { id: string; branch: string; path: string };
    for (const n of [1, 2, 3]) {
      r.write(`step${n}.txt`, `${n}\n`, berth.path);
      r.commit(`step ${n}`, berth.path);
    }
    r.git(["bisect", "start", "HEAD", "HEAD~3"], berth.path);

    const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(status.code).toBe(0);
    const row = status.json.data.worktrees.find((w: { id: string }) => w.id === berth.id);
    expect(row.in_progress).toBe("bisect");
    expect(status.json.hints).toContain(
      `${berth.id}: a bisect is in progress; end it with git -C ${berth.path} bisect reset`,
    );

    const gate = await runBerth(["gate", "--json"], { cwd: berth.path, env: r.env });
    expect(gate.code).toBe(1);
    expect(gate.json.error.message).toContain("has a bisect in progress (BISECT_START)");
    expect(gate.json.error.message).toContain("End it with git bisect reset.");
    expect(gate.json.data).toEqual({
      in_progress: "bisect",
      continue: null,
      abort: "git bisect reset",
    });
  });

  it("a berth detached on purpose still holds its own branch: not abandoned, no resume advice", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "looking", "--json"], { cwd: r.path, env: r.env });
    const berth = started.json.data as { id: string; branch: string; path: string };
    r.write("work.txt", "work\n", berth.path);
    r.commit("work", berth.path);
    r.git(["checkout", "-q", "--detach"], berth.path);

    const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(status.code).toBe(0);
    expect(status.json.data.refs).toEqual([]);
    const human = await runBerth(["status"], { cwd: r.path, env: r.env });
    expect(human.stderr + human.stdout).not.toContain("abandoned");
    expect(human.stderr + human.stdout).not.toContain("berth start --from");
  });

  it("a berth whose folder was moved by hand: status there says so and names git worktree repair", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "moved", "--json"], { cwd: r.path, env: r.env });
    const berth = started.json.data as { path: string };
    const moved = join(r.dir.path, "moved-by-hand");
    renameSync(berth.path, moved);

    const status = await runBerth(["status", "--json"], { cwd: moved, env: r.env });
    expect(status.code).toBe(0);
    expect(status.json.data.worktrees).toEqual([]);
    const repair = `git -C ${moved} worktree repair`;
    expect(status.json.hints.join("\n")).toContain(repair);
    spawnSync("sh", ["-c", repair], { env: r.env });
    const after = await runBerth(["status", "--json"], { cwd: moved, env: r.env });
    expect(after.json.data.worktrees).toHaveLength(1);
    expect(after.json.hints.join("\n")).not.toContain("worktree repair");
  });
});
