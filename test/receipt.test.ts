import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inspectReceipt } from "../src/core/fleet/receipt-state.js";
import { parseBatchCheckNames } from "../src/git/parse.js";
import { readTreesOf } from "../src/git/tree.js";
import {
  deleteReceipt,
  type Receipt,
  readReceipt,
  receiptPath,
  writeReceipt,
} from "../src/io/receipt-file.js";
import { makeRepo, makeTempDir, type TempDir, type TestRepo } from "./helpers/repo.js";

const T1 = "1".repeat(40);
const T2 = "2".repeat(40);

function receipt(tree: string, checks: Receipt["checks"] = []): Receipt {
  return {
    version: 1,
    commit: "c".repeat(40),
    tree,
    branch: "berth/x",
    trunk: "main",
    trunk_tip: "d".repeat(40),
    checks,
    created_at: "2026-06-01T12:00:00.000Z",
  };
}

describe("inspectReceipt", () => {
  it("is missing without a receipt", () => {
    expect(inspectReceipt(null, { tipTree: T1, clean: true })).toBe("missing");
  });
  it("is honored when the tip's tree matches and the tree is clean", () => {
    expect(inspectReceipt(receipt(T1), { tipTree: T1, clean: true })).toBe("honored");
  });
  it("is dirty when the tree matches but the working tree has changes", () => {
    expect(inspectReceipt(receipt(T1), { tipTree: T1, clean: false })).toBe("dirty");
  });
  it("is never honored when cleanliness is unknown", () => {
    expect(inspectReceipt(receipt(T1), { tipTree: T1, clean: null })).toBe("dirty");
  });
  it("is stale when the tip's tree differs or is unknown, clean or not", () => {
    expect(inspectReceipt(receipt(T1), { tipTree: T2, clean: true })).toBe("stale");
    expect(inspectReceipt(receipt(T1), { tipTree: T2, clean: false })).toBe("stale");
    expect(inspectReceipt(receipt(T1), { tipTree: null, clean: true })).toBe("stale");
  });
});

describe("parseBatchCheckNames", () => {
  it("maps found objects to their names and missing inputs to null", () => {
    const out = `${T1}\nabc^{tree} missing\n${"f".repeat(64)}\nx ambiguous\n`;
    expect(parseBatchCheckNames(out)).toEqual([T1, null, "f".repeat(64), null]);
  });
});

describe("receipt files", () => {
  let dir: TempDir;
  afterEach(() => dir?.cleanup());

  it("round-trips, leaves no temp file, and deletes", async () => {
    dir = makeTempDir();
    const value = receipt(T1, [{ name: "a", command: "true", ok: true, duration_ms: 5 }]);
    await writeReceipt(dir.path, value);
    expect(await readReceipt(dir.path)).toEqual(value);
    expect(readdirSync(join(dir.path, "berth"))).toEqual(["receipt.json"]);
    expect(await deleteReceipt(dir.path)).toBe(true);
    expect(await readReceipt(dir.path)).toBeNull();
    expect(await deleteReceipt(dir.path)).toBe(false);
  });

  it("reads a corrupt or foreign file as missing, never a crash", async () => {
    dir = makeTempDir();
    mkdirSync(join(dir.path, "berth"));
    for (const text of ["{not json", "[]", JSON.stringify({ ...receipt(T1), version: 2 }), ""]) {
      writeFileSync(receiptPath(dir.path), text);
      expect(await readReceipt(dir.path)).toBeNull();
    }
    expect(readFileSync(receiptPath(dir.path), "utf8")).toBe("");
  });
});

describe("readTreesOf", () => {
  let repo: TestRepo;
  afterEach(() => repo?.cleanup());

  it("reads every commit's tree in one call, null for unknown commits", async () => {
    repo = makeRepo();
    const first = repo.git(["rev-parse", "HEAD"]);
    repo.write("a.txt", "a\n");
    const second = repo.commit("second");
    const trees = await readTreesOf(repo.path, [first, second, "0".repeat(40), first]);
    expect(trees.get(first)).toBe(repo.git(["rev-parse", `${first}^{tree}`]));
    expect(trees.get(second)).toBe(repo.git(["rev-parse", `${second}^{tree}`]));
    expect(trees.get("0".repeat(40))).toBeNull();
    expect(trees.size).toBe(3);
  });
});
