import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gateCommand } from "../src/commands/gate.js";
import { readStatus } from "../src/core/fleet/status.js";
import { runGate } from "../src/core/landing/gate.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import type { UserError } from "../src/errors.js";
import { readGitFile } from "../src/io/admin-dirs.js";
import { receiptPath } from "../src/io/receipt-file.js";
import { renderGate } from "../src/ui/gate-view.js";
import { renderStatus } from "../src/ui/status-view.js";
import { colorsFor } from "../src/ui/style.js";
import { refusal } from "./helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plain = colorsFor(false, {});

/** A repository whose (uncommitted) berth.toml declares `checks`, and one berth on it. */
async function setup(checks: string, extra = "") {
  repo = makeRepo();
  const marks = join(repo.dir.path, "marks");
  mkdirSync(marks);
  configure(checks, extra);
  const { ctx } = testContext(repo.path, repo.env);
  const started = await startBerth(ctx, { name: "work" });
  const path = started.data?.path as string;
  repo.write("feature.txt", "feature\n", path);
  repo.commit("feature", path);
  const adminDir = (await readGitFile(path)) as string;
  return { path, marks, receiptFile: receiptPath(adminDir), adminDir };
}

function configure(checks: string, extra = "") {
  repo.write("berth.toml", `[gate]\n${extra}\nchecks = [\n${checks}\n]\n`);
}

function gateIn(path: string, env: NodeJS.ProcessEnv = repo.env) {
  const { ctx } = testContext(path, { ...env, MARKS: join(repo.dir.path, "marks") });
  return runGate(ctx, { parallelism: 2 });
}

async function receiptRow(path: string) {
  const { ctx } = testContext(path, repo.env);
  const status = await readStatus(ctx, {});
  return status.data?.worktrees[0];
}

describe("berth gate", () => {
  it("green on a clean berth ahead of trunk writes a receipt for the tip's commit and tree", async () => {
    const { path, receiptFile } = await setup(
      `{ name = "a", run = "true" },\n{ name = "b", run = "echo checked", after = ["a"] },`,
    );
    const result = await gateIn(path);
    expect(result.ok).toBe(true);
    expect(result.data?.receipt.decision).toBe("written");
    const written = JSON.parse(readFileSync(receiptFile, "utf8"));
    expect(written).toMatchObject({
      version: 2,
      commit: repo.git(["rev-parse", "HEAD"], path),
      tree: repo.git(["rev-parse", "HEAD^{tree}"], path),
      branch: repo.git(["symbolic-ref", "--short", "HEAD"], path),
      trunk: "main",
      trunk_tip: repo.git(["rev-parse", "main"]),
      created_at: "2026-06-01T12:00:00.000Z",
    });
    expect(written.checks).toEqual([
      { name: "a", command: "true", ok: true, duration_ms: expect.any(Number) },
      { name: "b", command: "echo checked", ok: true, duration_ms: expect.any(Number) },
    ]);
    expect(Object.keys(written)).toEqual([
      "version",
      "commit",
      "tree",
      "branch",
      "trunk",
      "trunk_tip",
      "gate_digest",
      "checks",
      "created_at",
    ]);
    expect(written.gate_digest).toBe(result.data?.gate_digest);
    expect(written.gate_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const row = await receiptRow(path);
    expect(row?.receipt).toBe("honored");
    expect(row?.receipt_checks).toBe(2);
  });

  it("tracks the receipt: an edit makes it dirty, a commit stale, an amended message keeps it honored", async () => {
    const { path } = await setup(`{ name = "a", run = "true" },`);
    expect((await gateIn(path)).ok).toBe(true);
    expect((await receiptRow(path))?.receipt).toBe("honored");

    repo.git(["commit", "--amend", "-q", "-m", "same tree, new message"], path);
    expect((await receiptRow(path))?.receipt).toBe("honored");

    repo.write("feature.txt", "edited\n", path);
    expect((await receiptRow(path))?.receipt).toBe("dirty");

    repo.commit("edit", path);
    expect((await receiptRow(path))?.receipt).toBe("stale");
  });

  it("a new untracked file makes a receipt dirty", async () => {
    const { path } = await setup(`{ name = "a", run = "true" },`);
    await gateIn(path);
    repo.write("scratch.txt", "notes\n", path);
    expect((await receiptRow(path))?.receipt).toBe("dirty");
  });

  it("a red run deletes the existing receipt and reports the failing check with its last lines", async () => {
    const { path, receiptFile } = await setup(`{ name = "ok", run = "true" },`);
    expect((await gateIn(path)).ok).toBe(true);
    expect(existsSync(receiptFile)).toBe(true);

    configure(
      `{ name = "ok", run = "true" },\n{ name = "unit", run = "echo first; echo 'expected 2, got 3'; exit 1" },`,
    );
    const result = await gateIn(path);
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("gate_failed");
    expect(result.error?.message).toContain('"unit"');
    // In the berth, with the BERTH_* variables the check ran with, through sh -c as it ran.
    const next = result.error?.next as string;
    expect(next.startsWith(`cd ${path} && env BERTH_ID=work-`)).toBe(true);
    expect(next).toContain(` BERTH_PATH=${path} `);
    expect(next.endsWith(` sh -c 'echo first; echo '\\''expected 2, got 3'\\''; exit 1'`)).toBe(
      true,
    );
    expect(result.data?.failures).toEqual([
      expect.objectContaining({ name: "unit", tail: "first\nexpected 2, got 3" }),
    ]);
    expect(result.data?.receipt.decision).toBe("deleted");
    expect(existsSync(receiptFile)).toBe(false);
    expect((await receiptRow(path))?.receipt).toBe("missing");

    const human = renderGate(result, plain);
    expect(human.stdout).toMatch(/failed\s+unit/);
    expect(human.stderr).toContain("expected 2, got 3");
    expect(human.stderr).toContain(`reproduce: ${next}\n`);
  });

  it("kills a check that sleeps past its timeout_s, with its children, and reports it timed out", async () => {
    const { path, marks } = await setup(
      `{ name = "hangs", run = "(sleep 2; touch \\"$MARKS/survivor\\") & sleep 60", timeout_s = 1 },`,
    );
    const result = await gateIn(path);
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("gate_failed");
    expect(result.data?.checks[0]).toMatchObject({ outcome: "timed_out", timeout_s: 1 });
    expect(result.data?.checks[0]?.reason).toContain("timed out after 1 s");
    expect(renderGate(result, plain).stdout).toMatch(/timed out\s+hangs/);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(existsSync(join(marks, "survivor"))).toBe(false);
  });

  it("a timeout_s past setTimeout's 32-bit limit waits the check out: green, not timed out after 1 ms", async () => {
    const { path } = await setup(
      `{ name = "global", run = "sleep 0.2" },\n{ name = "own", run = "sleep 0.2", timeout_s = 9000000 },`,
      "timeout_s = 3000000",
    );
    const result = await gateIn(path);
    expect(result.data?.checks.map((c) => [c.name, c.outcome])).toEqual([
      ["global", "passed"],
      ["own", "passed"],
    ]);
    expect(result.ok).toBe(true);
  });

  it("a check that commits during the run: no receipt is written, the old one is untouched, HEAD moved is said", async () => {
    const { path, receiptFile } = await setup(`{ name = "a", run = "true" },`);
    await gateIn(path);
    const before = readFileSync(receiptFile, "utf8");

    configure(
      `{ name = "sneaky", run = "echo more > more.txt && git add more.txt && git commit -q -m sneaky" },`,
    );
    const result = await gateIn(path);
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("moved");
    expect(result.error?.message).toContain("HEAD moved");
    expect(result.data?.receipt.decision).toBe("kept");
    expect(readFileSync(receiptFile, "utf8")).toBe(before);
    expect(renderGate(result, plain).stdout).toContain("HEAD moved");
  });

  it("a check that dirties the tree: no receipt is written", async () => {
    const { path, receiptFile } = await setup(`{ name = "litter", run = "echo x > litter.txt" },`);
    const result = await gateIn(path);
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("precondition_failed");
    expect(result.error?.message).toContain("dirtied");
    expect(existsSync(receiptFile)).toBe(false);
  });

  it("with no checks declared, records checks: [] and labels it everywhere", async () => {
    const { path, receiptFile } = await setup("");
    const result = await gateIn(path);
    expect(result.ok).toBe(true);
    expect(result.data?.no_checks).toBe(true);
    expect(JSON.parse(readFileSync(receiptFile, "utf8")).checks).toEqual([]);
    expect(result.hints.join("\n")).toContain("no checks declared");
    expect(renderGate(result, plain).stdout).toContain("no checks declared");
    const { ctx } = testContext(path, repo.env);
    const status = await readStatus(ctx, {});
    expect(status.data?.worktrees[0]).toMatchObject({ receipt: "honored", receipt_checks: 0 });
    expect(renderStatus(status.data as NonNullable<typeof status.data>, plain)).toContain(
      "honored (no checks declared)",
    );
  });

  it("passes the BERTH_* variables and runs in the berth", async () => {
    const { path, marks } = await setup(
      `{ name = "env", run = "echo \\"$BERTH_ID $BERTH_BRANCH $BERTH_PATH $PWD\\" > \\"$MARKS/env\\"" },`,
    );
    expect((await gateIn(path)).ok).toBe(true);
    const [id, branch, berthPath, pwd] = readFileSync(join(marks, "env"), "utf8").trim().split(" ");
    expect(branch).toBe(`berth/${id}`);
    expect(berthPath).toBe(path);
    expect(pwd).toBe(path);
  });

  it("dry run lists the checks in order and changes nothing", async () => {
    const { path, receiptFile, marks } = await setup(
      `{ name = "b", run = "touch \\"$MARKS/ran\\"", after = ["a"] },\n{ name = "a", run = "touch \\"$MARKS/ran\\"" },`,
    );
    const { ctx } = testContext(path, { ...repo.env, MARKS: marks });
    const result = await runGate(ctx, { dryRun: true });
    expect(result.ok).toBe(true);
    expect(result.plan?.steps.map((s) => s.target)).toEqual(["a", "b", receiptFile]);
    expect(result.data?.green).toBeNull();
    expect(existsSync(join(marks, "ran"))).toBe(false);
    expect(existsSync(receiptFile)).toBe(false);
  });

  it("an interrupted run leaves the old receipt untouched and is not green", async () => {
    const { path, receiptFile, marks } = await setup(`{ name = "a", run = "true" },`);
    await gateIn(path);
    const before = readFileSync(receiptFile, "utf8");
    configure(`{ name = "long", run = "sleep 30" },`);
    const interrupt = new AbortController();
    const { ctx } = testContext(path, { ...repo.env, MARKS: marks });
    const result = await runGate(ctx, {
      signal: interrupt.signal,
      onEvent: (event) => {
        if (event.kind === "start") interrupt.abort();
      },
    });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("gate_failed");
    expect(result.error?.message).toContain("interrupted");
    expect(result.data?.checks[0]?.outcome).toBe("stopped");
    expect(result.data?.receipt.decision).toBe("kept");
    expect(readFileSync(receiptFile, "utf8")).toBe(before);
  });

  it("shows progress on stderr when it is a terminal, and nothing when it is not", async () => {
    const { path, marks } = await setup(
      `{ name = "a", run = "true" },\n{ name = "b", run = "true" },`,
    );
    const tty = testContext(path, { ...repo.env, MARKS: marks });
    tty.ctx.stderrIsTTY = true;
    await gateCommand(tty.ctx, {});
    expect(tty.stderr()).toMatch(/a started/);
    expect(tty.stderr()).toMatch(/ok b/);
    const pipe = testContext(path, { ...repo.env, MARKS: marks });
    await gateCommand(pipe.ctx, {});
    expect(pipe.stderr()).toBe("");
  });

  it("works in the main checkout on the trunk", async () => {
    repo = makeRepo({ config: '[gate]\nchecks = [{ name = "a", run = "true" }]\n' });
    const { ctx } = testContext(repo.path, repo.env);
    const result = await runGate(ctx);
    expect(result.ok).toBe(true);
    expect(existsSync(join(repo.path, ".git", "berth", "receipt.json"))).toBe(true);
    const status = await readStatus(ctx, {});
    expect(status.data?.worktrees[0]).toMatchObject({ is_main: true, receipt: "honored" });
  });
});

describe("berth gate refusals (nothing runs, nothing changes)", () => {
  async function expectNothingChanged(
    path: string,
    receiptFile: string,
    adminDir: string,
    run: () => Promise<UserError>,
  ) {
    const head = repo.git(["rev-parse", "HEAD"], path);
    const statusBefore = repo.git(["status", "--porcelain"], path);
    const receiptBefore = existsSync(receiptFile) ? readFileSync(receiptFile, "utf8") : null;
    const error = await run();
    expect(repo.git(["rev-parse", "HEAD"], path)).toBe(head);
    expect(repo.git(["status", "--porcelain"], path)).toBe(statusBefore);
    expect(existsSync(receiptFile) ? readFileSync(receiptFile, "utf8") : null).toBe(receiptBefore);
    expect(existsSync(join(repo.dir.path, "marks", "ran"))).toBe(false);
    expect(existsSync(join(adminDir, "berth", "gate"))).toBe(false);
    return error;
  }

  const touching = `{ name = "a", run = "touch \\"$MARKS/ran\\"" },`;

  it("refuses a berth behind the trunk, pointing at berth update", async () => {
    const { path, receiptFile, adminDir } = await setup(touching);
    repo.write("trunk.txt", "moved on\n");
    repo.git(["add", "trunk.txt"]);
    repo.git(["commit", "-q", "-m", "trunk moves"]);
    const error = await expectNothingChanged(path, receiptFile, adminDir, () =>
      refusal(gateIn(path)),
    );
    expect(error.code).toBe("precondition_failed");
    expect(error.next).toBe("berth update");
    expect(error.message).toContain("does not contain the tip of main");
  });

  it("refuses a dirty tree, untracked files included", async () => {
    const { path, receiptFile, adminDir } = await setup(touching);
    repo.write("untracked.txt", "new\n", path);
    const error = await expectNothingChanged(path, receiptFile, adminDir, () =>
      refusal(gateIn(path)),
    );
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("untracked.txt");
    expect(error.message).toContain("1 untracked");
  });

  it("refuses a detached HEAD", async () => {
    const { path, receiptFile, adminDir } = await setup(touching);
    repo.git(["checkout", "-q", "--detach"], path);
    const error = await expectNothingChanged(path, receiptFile, adminDir, () =>
      refusal(gateIn(path)),
    );
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("detached HEAD");
  });
});
