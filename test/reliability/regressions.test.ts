import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyDrop, planDrop } from "../../src/core/drop.js";
import { startBerth } from "../../src/core/start.js";
import { readStatus } from "../../src/core/status.js";
import { runUpdate } from "../../src/core/update.js";
import { UserError } from "../../src/errors.js";
import { readLedger } from "../../src/io/ledger.js";
import { deleteReceipt, receiptPath, writeReceipt } from "../../src/io/receipt.js";
import { makeRepo, type TestRepo, testContext } from "../helpers/repo.js";

/**
 * Focused regression tests for the bugs the reliability suite found
 * (docs/reliability.md, "What the suite found"). Each failed before its fix.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

async function refusal(promise: Promise<unknown>): Promise<UserError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UserError);
  return error as UserError;
}

describe("update never moves the trunk", () => {
  it("refuses in the main checkout on the trunk, with --from a berth's branch, and changes nothing", async () => {
    repo = makeRepo();
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const started = (await startBerth(ctx, { name: "work" })).data;
    if (!started) throw new Error("start failed");
    r.write("work.txt", "work\n", started.path);
    r.commit("work", started.path);
    const trunk = r.git(["rev-parse", "main"]);
    const error = await refusal(runUpdate(ctx, { from: started.branch }));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("only berth accept moves the trunk");
    expect(r.git(["rev-parse", "main"])).toBe(trunk);
    expect((await refusal(runUpdate(ctx))).code).toBe("precondition_failed");
  });
});

describe("a forced drop stopped after writing its recovery ref", () => {
  it("does not claim that nothing changed, and names the ref that stays", async () => {
    repo = makeRepo({
      config: "[worktree.resources.db]\ncreate = 'true'\ndestroy = 'exit 1'\n",
    });
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const started = (await startBerth(ctx, { name: "doomed" })).data;
    if (!started) throw new Error("start failed");
    r.write("doomed.txt", "doomed\n", started.path);
    r.commit("doomed", started.path);
    const plan = await planDrop(ctx, { target: started.id, force: true });
    const error = await refusal(applyDrop(ctx, plan));
    expect(error.code).toBe("teardown_failed");
    expect(error.nothingChanged).toBe(false);
    const ref = r.git(["for-each-ref", "--format=%(refname)", "refs/berth/recovery"]);
    expect(ref).not.toBe("");
    expect(error.message).toContain(ref);
  });
});

describe("two starts at once", () => {
  it("choose their ids under the fleet lock: the same first draw becomes two berths", async () => {
    repo = makeRepo();
    const r = repo;
    const draws = (...hex: string[]) => {
      let i = 0;
      return () => hex[Math.min(i++, hex.length - 1)] as string;
    };
    const { ctx } = testContext(r.path, r.env);
    const [one, two] = await Promise.all([
      startBerth(ctx, { name: "same", random: draws("aaaaaa") }),
      startBerth(ctx, { name: "same", random: draws("aaaaaa", "bbbbbb") }),
    ]);
    expect([one.data?.id, two.data?.id].sort()).toEqual(["same-aaaaaa", "same-bbbbbb"]);
  });
});

describe("state files that are folders", () => {
  it("a ledger entry that is a folder is reported as a problem, not thrown", async () => {
    repo = makeRepo();
    const common = join(repo.path, ".git");
    mkdirSync(join(common, "berth", "ledger", "key", "db.json"), { recursive: true });
    const listing = await readLedger(common, "key");
    expect(listing.entries).toEqual([]);
    expect(listing.problems).toEqual([
      expect.objectContaining({ reason: "cannot be read (EISDIR)" }),
    ]);
  });

  it("a receipt path that is a folder: writing refuses clearly, deleting finds no receipt", async () => {
    repo = makeRepo();
    const adminDir = join(repo.path, ".git");
    mkdirSync(receiptPath(adminDir), { recursive: true });
    writeFileSync(join(receiptPath(adminDir), "inside"), "x");
    expect(await deleteReceipt(adminDir)).toBe(false);
    const receipt = {
      version: 1 as const,
      commit: "c",
      tree: "t",
      branch: "b",
      trunk: "main",
      trunk_tip: "c",
      checks: [],
      created_at: "2026-01-01T00:00:00Z",
    };
    const error = await refusal(writeReceipt(adminDir, receipt));
    expect(error.code).toBe("precondition_failed");
    expect(error.next).toContain("rm -r");
  });
});

describe("a branch that names a blob", () => {
  it("makes the survey refuse clearly instead of crashing the process", async () => {
    repo = makeRepo();
    const r = repo;
    const blob = r.git(["rev-parse", "HEAD:README.md"]);
    mkdirSync(join(r.path, ".git", "refs", "heads"), { recursive: true });
    writeFileSync(join(r.path, ".git", "refs", "heads", "blob-ref"), `${blob}\n`);
    const { ctx } = testContext(r.path, r.env);
    const error = await refusal(readStatus(ctx, {}));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("not a commit");
  });
});
