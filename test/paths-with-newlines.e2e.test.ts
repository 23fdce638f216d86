import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { berthBranches } from "./helpers/fleet.js";
import {
  makeRepo,
  makeTempDir,
  repoAt,
  runBerth,
  type TempDir,
  type TestRepo,
} from "./helpers/repo.js";

/**
 * Paths with a newline are refused up front (docs/decisions/0018). Issue 15:
 * `start` succeeded in such a repository, then `status` said "No worktrees"
 * and `gate` failed with `spawn git ENOENT`.
 */

let dir: TempDir | undefined;
let repo: TestRepo | undefined;
afterEach(() => {
  dir?.cleanup();
  repo?.cleanup();
});

function repoUnderNewline(): { repo: TestRepo; folder: string } {
  dir = makeTempDir();
  const folder = join(dir.path, "new\nline");
  mkdirSync(folder);
  const path = join(folder, "repo");
  execFileSync("git", ["init", "-q", "-b", "main", path], { env: dir.env });
  const r = repoAt(path, dir);
  r.write("berth.toml", '[gate]\nchecks = [{ name = "ok", run = "true" }]\n');
  r.commit("initial commit");
  return { repo: r, folder };
}

describe("a repository whose path contains a newline", () => {
  it("start, status and gate refuse, naming the folder to rename; nothing is created", async () => {
    const { repo: r, folder } = repoUnderNewline();
    const expected = {
      code: "precondition_failed",
      next: `mv '${folder}' ${join(dir?.path ?? "", "new-line")}`,
    };
    for (const args of [["start", "x"], ["status"], ["gate"]]) {
      const run = await runBerth([...args, "--json"], { cwd: r.path, env: r.env });
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.json.error, args.join(" ")).toMatchObject(expected);
      expect(run.json.error.message).toContain("contains a newline");
    }
    expect(berthBranches(r)).toEqual([]);
    expect(readdirSync(folder)).toEqual(["repo"]);

    // The printed next is a command a shell runs as it stands; after it, berth works.
    const start = await runBerth(["start", "x", "--json"], { cwd: r.path, env: r.env });
    execFileSync("sh", ["-c", start.json.error.next], { env: r.env });
    const moved = join(dir?.path ?? "", "new-line", "repo");
    const again = await runBerth(["start", "x", "--json"], { cwd: moved, env: r.env });
    expect(again.code, again.stdout).toBe(0);
    const status = await runBerth(["status", "--json"], { cwd: moved, env: r.env });
    expect(status.json.data.worktrees).toHaveLength(2);
  });

  it("a worktree elsewhere of such a repository refuses too (the git dir holds the newline)", async () => {
    const { repo: r } = repoUnderNewline();
    const elsewhere = join(dir?.path ?? "", "plain-worktree");
    r.git(["worktree", "add", "-q", "-b", "hand", elsewhere]);
    for (const args of [["status"], ["gate"], ["start", "y"]]) {
      const run = await runBerth([...args, "--json"], { cwd: elsewhere, env: r.env });
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.json.error.code).toBe("precondition_failed");
      expect(run.json.error.message).toContain("contains a newline");
    }
    expect(berthBranches(r)).toEqual([]);
  });

  it("a [worktree].root with a newline is refused as invalid configuration before anything is made", async () => {
    repo = makeRepo({ config: '[worktree]\nroot = "berths\\nhere"\n' });
    const run = await runBerth(["start", "x", "--json"], { cwd: repo.path, env: repo.env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("config_invalid");
    expect(run.json.error.message).toContain("worktree.root");
    expect(run.json.error.message).toContain("it contains a newline");
    expect(berthBranches(repo)).toEqual([]);
    expect(existsSync(join(repo.path, "berths\nhere"))).toBe(false);
  });
});
