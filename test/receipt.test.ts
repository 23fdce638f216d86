import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inspectReceipt } from "../src/core/fleet/receipt-state.js";
import { gateDefinitionOf } from "../src/core/landing/gate-definition.js";
import { notesHonor, type ReceiptNote } from "../src/core/landing/receipt-notes.js";
import { parseBatchCheck } from "../src/git/parse.js";
import { readTreesOf } from "../src/git/tree.js";
import type { GateCheckConfig } from "../src/io/config-types.js";
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

/** The gate as declared: two checks, lint after nothing and test after lint. */
const GATE = gateDefinitionOf({
  fail_fast: false,
  timeout_s: 600,
  checks: [
    { name: "lint", run: "npm run lint", after: [], timeout_s: null },
    { name: "test", run: "npm test", after: ["lint"], timeout_s: 60 },
  ],
});
const NO_CHECKS = gateDefinitionOf({ fail_fast: false, timeout_s: 600, checks: [] });

const passed = (gate = GATE): Receipt["checks"] =>
  gate.checks.map((c) => ({ name: c.name, command: c.command, ok: true, duration_ms: 5 }));

function receipt(tree: string, checks = passed(), gate = GATE): Receipt {
  return {
    version: 2,
    commit: "c".repeat(40),
    tree,
    branch: "berth/x",
    trunk: "main",
    trunk_tip: "d".repeat(40),
    gate_digest: gate.digest,
    checks,
    created_at: "2026-06-01T12:00:00.000Z",
  };
}

const facts = (tipTree: string | null, clean: boolean | null, gate = GATE) => ({
  tipTree,
  clean,
  gate,
});

describe("inspectReceipt", () => {
  it("is missing without a receipt", () => {
    expect(inspectReceipt(null, facts(T1, true))).toBe("missing");
  });
  it("is honored when the gate, the tip's tree match and the tree is clean", () => {
    expect(inspectReceipt(receipt(T1), facts(T1, true))).toBe("honored");
    const empty = receipt(T1, [], NO_CHECKS);
    expect(inspectReceipt(empty, facts(T1, true, NO_CHECKS))).toBe("honored");
  });
  it("is dirty when the tree matches but the working tree has changes", () => {
    expect(inspectReceipt(receipt(T1), facts(T1, false))).toBe("dirty");
  });
  it("is never honored when cleanliness is unknown", () => {
    expect(inspectReceipt(receipt(T1), facts(T1, null))).toBe("dirty");
  });
  it("is stale when the tip's tree differs or is unknown, clean or not", () => {
    expect(inspectReceipt(receipt(T1), facts(T2, true))).toBe("stale");
    expect(inspectReceipt(receipt(T1), facts(T2, false))).toBe("stale");
    expect(inspectReceipt(receipt(T1), facts(null, true))).toBe("stale");
  });
  it("is stale for any other gate definition: a check added, renamed, reordered, re-timed or with another command (invariant 8)", () => {
    const changed = (edit: (c: GateCheckConfig[]) => GateCheckConfig[], timeout_s = 600) =>
      gateDefinitionOf({
        fail_fast: false,
        timeout_s,
        checks: edit([
          { name: "lint", run: "npm run lint", after: [], timeout_s: null },
          { name: "test", run: "npm test", after: ["lint"], timeout_s: 60 },
        ]),
      });
    const variants = [
      changed((c) => [...c, { name: "e2e", run: "false", after: [], timeout_s: null }]),
      changed((c) => c.slice(1).map((x) => ({ ...x, after: [] }))),
      changed((c) => c.map((x) => (x.name === "lint" ? { ...x, name: "style" } : x))),
      changed((c) => c.map((x) => (x.name === "test" ? { ...x, run: "npm test -- -x" } : x))),
      changed((c) => c.map((x) => (x.name === "test" ? { ...x, timeout_s: 61 } : x))),
      // The default timeout is lint's effective timeout.
      changed((c) => c, 601),
    ];
    expect(new Set([GATE.digest, ...variants.map((g) => g.digest)]).size).toBe(variants.length + 1);
    for (const gate of variants) {
      expect(inspectReceipt(receipt(T1), facts(T1, true, gate))).toBe("stale");
    }
    // Order alone: the same independent checks declared the other way round.
    const independent = changed((c) => c.map((x) => ({ ...x, after: [] })));
    const reversed = changed((c) => c.map((x) => ({ ...x, after: [] })).reverse());
    expect(reversed.digest).not.toBe(independent.digest);
    // fail_fast only decides what follows a failure; a receipt is written only when all passed.
    const failFast = gateDefinitionOf({ fail_fast: true, timeout_s: 600, checks: [] });
    expect(failFast.digest).toBe(NO_CHECKS.digest);
  });
  it("a receipt with checks: [] is never honored while checks are declared, whatever digest it claims", () => {
    expect(inspectReceipt(receipt(T1, [], NO_CHECKS), facts(T1, true))).toBe("stale");
    expect(inspectReceipt(receipt(T1, [], GATE), facts(T1, true))).toBe("stale");
    const failed = passed().map((c, i) => (i === 1 ? { ...c, ok: false } : c));
    expect(inspectReceipt(receipt(T1, failed), facts(T1, true))).toBe("stale");
  });
  it("a version-1 receipt (no digest) reads, and is stale: fail closed", async () => {
    const dir = makeTempDir();
    try {
      mkdirSync(join(dir.path, "berth"));
      const { gate_digest: _, ...old } = receipt(T1);
      writeFileSync(receiptPath(dir.path), JSON.stringify({ ...old, version: 1 }));
      const read = await readReceipt(dir.path);
      expect(read).toMatchObject({ version: 1, gate_digest: null, tree: T1 });
      expect(inspectReceipt(read, facts(T1, true))).toBe("stale");
      expect(inspectReceipt(read, facts(T1, true, NO_CHECKS))).toBe("stale");
    } finally {
      dir.cleanup();
    }
  });
});

describe("notesHonor", () => {
  const line = (ok: boolean, at: string, over: Partial<ReceiptNote> = {}): ReceiptNote => ({
    commit: "c".repeat(40),
    tree: T1,
    branch: "berth/x",
    gate_digest: "d1",
    checks: [{ ok }],
    created_at: at,
    ...over,
  });
  const honors = (notes: ReceiptNote[]) => notesHonor(notes, "c".repeat(40), T1, "d1", 1);

  it("the newest line for the commit, its tree and this gate decides, in any order", () => {
    const green = line(true, "2026-01-01T00:00:01.000Z");
    const red = line(false, "2026-01-01T00:00:02.000Z");
    const again = line(true, "2026-01-01T00:00:03.000Z");
    expect(honors([green])).toBe(true);
    expect(honors([red, green])).toBe(false);
    expect(honors([again, green, red])).toBe(true);
    // A tie is red: fail closed.
    expect(honors([green, line(false, green.created_at as string)])).toBe(false);
  });

  it("a newer red line for another tree or gate does not withdraw this one", () => {
    const green = line(true, "2026-01-01T00:00:01.000Z");
    const later = "2026-01-01T00:00:09.000Z";
    expect(honors([green, line(false, later, { tree: T2 })])).toBe(true);
    expect(honors([green, line(false, later, { gate_digest: "d2" })])).toBe(true);
    expect(honors([line(true, later, { gate_digest: "d2" })])).toBe(false);
    expect(honors([line(true, later, { checks: [] })])).toBe(false);
  });
});

describe("parseBatchCheck", () => {
  it("maps found objects to their names and missing inputs to null", () => {
    const out = `${T1} tree\nabc^{tree} missing\n${"f".repeat(64)} blob\nx ambiguous\n`;
    expect(parseBatchCheck(out).map((o) => o?.oid ?? null)).toEqual([
      T1,
      null,
      "f".repeat(64),
      null,
    ]);
  });
});

describe("receipt files", () => {
  let dir: TempDir;
  afterEach(() => dir?.cleanup());

  it("round-trips, leaves no temp file, and deletes", async () => {
    dir = makeTempDir();
    const value = receipt(T1);
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
    const { gate_digest: _, ...noDigest } = receipt(T1);
    const foreign = [
      "{not json",
      "[]",
      JSON.stringify({ ...receipt(T1), version: 3 }),
      // Version 2 without its digest is not a receipt: reading stays strict.
      JSON.stringify(noDigest),
      JSON.stringify({ ...receipt(T1), gate_digest: null }),
      "",
    ];
    for (const text of foreign) {
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
