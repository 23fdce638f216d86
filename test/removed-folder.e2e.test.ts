import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BERTH_BIN, collectRun, makeRepo, type RunResult, type TestRepo } from "./helpers/repo.js";

/**
 * A shell can stay in a folder that has since been removed: the berth just
 * dropped from inside it, a checkout deleted by hand. berth then has no
 * current folder at all. Every verb refuses in its own words, with the
 * nearest folder that still exists (or, for a berth removed from its fleet
 * folder, the main checkout beside it) as the `cd` to run next, instead of
 * Node's "ENOENT: uv_cwd" and a stack trace.
 */

let repo: TestRepo;
beforeAll(() => {
  repo = makeRepo();
});
afterAll(() => repo.cleanup());

/** Runs berth from a shell standing in `folder`, after the shell has removed it. */
function runInRemoved(folder: string, args: string[]): Promise<RunResult> {
  mkdirSync(folder, { recursive: true });
  const child = spawn(
    "sh",
    [
      "-c",
      'cd "$1" && rm -rf "$1" && shift && exec "$@"',
      "sh",
      folder,
      process.execPath,
      BERTH_BIN,
      ...args,
    ],
    { cwd: repo.path, env: repo.env, stdio: ["ignore", "pipe", "pipe"] },
  );
  return collectRun(child);
}

function expectRefusal(result: RunResult, gone: string, nearest: string): void {
  expect(result.stderr).not.toMatch(/uv_cwd|\n\s+at /);
  expect(result.code).toBe(1);
  expect(result.json?.ok).toBe(false);
  expect(result.json?.error.code).toBe("not_a_repository");
  expect(result.json?.error.message).toContain(`${gone} no longer exists`);
  expect(result.json?.error.next).toBe(`cd ${nearest}`);
}

describe("a verb run in a folder that was removed", () => {
  const gone = () => join(repo.dir.path, "scratch", "deeper");

  it("status refuses with one envelope, a plain status and the parsed one alike", async () => {
    for (const args of [
      ["status", "--json"],
      ["status", "--all", "--json"],
      ["ls", "--json", "--local"],
    ]) {
      expectRefusal(await runInRemoved(gone(), args), gone(), join(repo.dir.path, "scratch"));
    }
  });

  it("prints the refusal for a person, with the cd to run next", async () => {
    const result = await runInRemoved(gone(), ["status"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`the current folder ${gone()} no longer exists`);
    expect(result.stderr).toContain(`next: cd ${join(repo.dir.path, "scratch")}`);
    expect(result.stderr).not.toMatch(/uv_cwd|\n\s+at /);
  });

  it("an effectful verb refuses and changes nothing", async () => {
    const branchesBefore = repo.git(["branch", "--list"]);
    for (const args of [
      ["start", "x", "--json"],
      ["worktree", "prune", "--yes", "--json"],
      ["gate", "--json"],
    ]) {
      expectRefusal(await runInRemoved(gone(), args), gone(), join(repo.dir.path, "scratch"));
    }
    expect(repo.git(["branch", "--list"])).toBe(branchesBefore);
    expect(repo.git(["worktree", "list", "--porcelain"])).not.toContain("berth/x");
  });

  it("after dropping the berth the shell stood in, the next status names the main checkout", async () => {
    const started = await collectRun(
      spawn(process.execPath, [BERTH_BIN, "start", "inside", "--json"], {
        cwd: repo.path,
        env: repo.env,
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    expect(started.code).toBe(0);
    const berthPath: string = started.json.data.path;
    const id: string = started.json.data.id;
    const child = spawn(
      "sh",
      [
        "-c",
        'cd "$1" && "$2" "$3" worktree drop "$4" --yes >/dev/null 2>&1 && exec "$2" "$3" status --json',
        "sh",
        berthPath,
        process.execPath,
        BERTH_BIN,
        id,
      ],
      { cwd: repo.path, env: repo.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const result = await collectRun(child);
    expect(existsSync(berthPath)).toBe(false);
    // Not the fleet folder (no repository there): the main checkout beside it.
    expect(dirname(berthPath)).toBe(`${repo.path}.worktrees`);
    expectRefusal(result, berthPath, repo.path);
  });
});
