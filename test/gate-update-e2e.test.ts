import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/** End-to-end: the built binary, as a person or an agent runs it. */

let repo: TestRepo;
afterEach(() => repo?.cleanup());

async function startBerthBinary(): Promise<string> {
  const started = await runBerth(["start", "work", "--json"], { cwd: repo.path, env: repo.env });
  expect(started.code).toBe(0);
  return started.json.data.path as string;
}

function trunkCommit(file: string, content: string): void {
  repo.write(file, content);
  repo.git(["add", file]);
  repo.git(["commit", "-q", "-m", `trunk: ${file}`]);
}

describe("berth gate (binary)", () => {
  it("green writes a receipt that status reports as honored; red exits 1 with gate_failed", async () => {
    repo = makeRepo();
    repo.write("berth.toml", '[gate]\nchecks = [{ name = "a", run = "echo fine" }]\n');
    const path = await startBerthBinary();
    repo.write("feature.txt", "x\n", path);
    repo.commit("feature", path);

    const green = await runBerth(["gate", "--json"], { cwd: path, env: repo.env });
    expect(green.code).toBe(0);
    expect(green.json.data.receipt.decision).toBe("written");
    expect(green.stderr).toBe("");

    const status = await runBerth(["status", "--json"], { cwd: repo.path, env: repo.env });
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === path);
    expect(row).toMatchObject({ receipt: "honored", receipt_checks: 1 });

    repo.write(
      "berth.toml",
      '[gate]\nchecks = [{ name = "unit", run = "echo setting up; echo assertion failed: 2 != 3; exit 2" }]\n',
    );
    const red = await runBerth(["gate", "--json"], { cwd: path, env: repo.env });
    expect(red.code).toBe(1);
    expect(red.json.ok).toBe(false);
    expect(red.json.error.code).toBe("gate_failed");
    expect(red.json.error.message).toContain('"unit"');
    expect(red.json.data.failures[0]).toMatchObject({
      name: "unit",
      tail: "setting up\nassertion failed: 2 != 3",
    });
    expect(red.json.data.receipt.decision).toBe("deleted");

    const human = await runBerth(["gate"], { cwd: path, env: repo.env });
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/failed\s+unit/);
    expect(human.stderr).toContain("assertion failed: 2 != 3");
    expect(human.stderr).toContain(`reproduce: cd ${path} && env BERTH_ID=`);
    expect(human.stderr).toContain(
      " sh -c 'echo setting up; echo assertion failed: 2 != 3; exit 2'",
    );

    const after = await runBerth(["status", "--json"], { cwd: path, env: repo.env });
    expect(after.json.data.worktrees[0].receipt).toBe("missing");
  });

  it("refuses a berth behind the trunk with next: berth update, then update merges it", async () => {
    repo = makeRepo();
    repo.write("berth.toml", '[gate]\nchecks = [{ name = "a", run = "true" }]\n');
    const path = await startBerthBinary();
    trunkCommit("trunk.txt", "moved on\n");

    const refused = await runBerth(["gate", "--json"], { cwd: path, env: repo.env });
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: "precondition_failed", next: "berth update" });

    const updated = await runBerth(["update", "--json"], { cwd: path, env: repo.env });
    expect(updated.code).toBe(0);
    expect(updated.json.data).toMatchObject({ commits: 1, files: ["trunk.txt"] });

    const gated = await runBerth(["gate"], { cwd: path, env: repo.env });
    expect(gated.code).toBe(0);
    expect(gated.stdout).toContain("receipt: written");
  });

  it("update with a conflict: merge aborted, tree clean, conflicted paths listed, exit 1", async () => {
    repo = makeRepo();
    const path = await startBerthBinary();
    repo.write("README.md", "berth side\n", path);
    repo.commit("berth side", path);
    const head = repo.git(["rev-parse", "HEAD"], path);
    trunkCommit("README.md", "trunk side\n");

    const result = await runBerth(["update"], { cwd: path, env: repo.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("README.md");
    expect(result.stderr).toContain("merge was aborted");
    expect(repo.git(["status", "--porcelain"], path)).toBe("");
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(head);

    const json = await runBerth(["update", "--json"], { cwd: path, env: repo.env });
    expect(json.code).toBe(1);
    expect(json.json.data.conflicts).toEqual(["README.md"]);
  });
});
