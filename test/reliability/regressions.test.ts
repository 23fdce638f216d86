import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readStatus } from "../../src/core/fleet/status.js";
import { readLedger } from "../../src/io/ledger.js";
import { deleteReceipt, receiptPath, writeReceipt } from "../../src/io/receipt-file.js";
import { refusal } from "../helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "../helpers/repo.js";

/**
 * Focused regression tests for bugs the reliability suite found
 * (docs/reliability.md, "What the suite found"); the others are in
 * test/safety-regressions.test.ts. Each failed before its fix.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

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
      version: 2 as const,
      gate_digest: "sha256:0",
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
