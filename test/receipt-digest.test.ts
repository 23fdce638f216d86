import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runGate } from "../src/core/landing/gate.js";
import { gateDefinitionOf } from "../src/core/landing/gate-definition.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { readGitFile } from "../src/io/admin-dirs.js";
import { receiptPath } from "../src/io/receipt-file.js";
import { makeRepo, runBerth, type TestRepo, testContext } from "./helpers/repo.js";

/**
 * A receipt is honored only for the gate definition it ran (spec invariant 8,
 * decision 0017; issue 15 item 5), through the built binary: status, and the
 * accept that must not land on a receipt for another gate.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const TWO_CHECKS = `[gate]
checks = [
  { name = "one", run = 'echo "one $(git rev-parse HEAD)" >> "$MARKER"' },
  { name = "two", run = 'echo "two $(git rev-parse HEAD)" >> "$MARKER"', after = ["one"] },
]
`;

const THREE_CHECKS = `[gate]
checks = [
  { name = "one", run = 'echo "one $(git rev-parse HEAD)" >> "$MARKER"' },
  { name = "two", run = 'echo "two $(git rev-parse HEAD)" >> "$MARKER"', after = ["one"] },
  { name = "three", run = 'echo "three ran" >> "$MARKER"; exit 3' },
]
`;

/** A repository whose berth.toml lives (excluded) in the main checkout, and one gated berth. */
async function gatedBerth() {
  const r = makeRepo();
  repo = r;
  const marker = join(r.dir.path, "marker");
  const env = { ...r.env, MARKER: marker };
  // berth reads berth.toml from the main checkout; excluded, it leaves that checkout clean.
  appendFileSync(join(r.path, ".git/info/exclude"), "berth.toml\n");
  r.write("berth.toml", TWO_CHECKS);
  const started = await startBerth(testContext(r.path, env).ctx, { name: "work" });
  const path = started.data?.path as string;
  const id = started.data?.id as string;
  r.write("work.txt", "work\n", path);
  const commit = r.commit("work", path);
  const gated = await runGate(testContext(path, env).ctx, { parallelism: 1 });
  expect(gated.ok).toBe(true);
  const adminDir = (await readGitFile(path)) as string;
  return { r, env, path, id, commit, marker, adminDir };
}

async function statusRow(r: TestRepo, env: NodeJS.ProcessEnv, id: string) {
  const run = await runBerth(["status", "--json"], { cwd: r.path, env });
  expect(run.code).toBe(0);
  return (
    run.json.data.worktrees as { id: string; receipt: string; receipt_checks: number }[]
  ).find((w) => w.id === id);
}

describe("a receipt is bound to the gate definition it ran (invariant 8)", () => {
  it("gated green with two checks, then a third failing check is declared: the receipt is stale and accept runs the gate and refuses red", async () => {
    const { r, env, path, id, commit, marker, adminDir } = await gatedBerth();
    expect(await statusRow(r, env, id)).toMatchObject({ receipt: "honored", receipt_checks: 2 });

    r.write("berth.toml", THREE_CHECKS);
    expect(await statusRow(r, env, id)).toMatchObject({ receipt: "stale" });
    const trunkBefore = r.git(["rev-parse", "main"]);
    const plan = await runBerth(["accept", id, "--dry-run", "--json"], { cwd: r.path, env });
    expect(plan.json.data.validated).toMatchObject({ commit, by: "gate", checks: 3 });

    const run = await runBerth(["accept", id, "--yes", "--json"], { cwd: r.path, env });
    expect(run.code).not.toBe(0);
    expect(run.json.ok).toBe(false);
    expect(run.json.error.code).toBe("gate_failed");
    expect(run.json.error.message).toContain("three");
    // The gate really ran now, on this commit, and the trunk never moved.
    expect(readFileSync(marker, "utf8")).toContain("three ran");
    expect(r.git(["rev-parse", "main"])).toBe(trunkBefore);
    expect(existsSync(path)).toBe(true);
    // Red: the old receipt is gone (fail closed).
    expect(existsSync(receiptPath(adminDir))).toBe(false);
  });

  it("a hand-written receipt with checks: [] while checks are declared is never honored, and never labelled as if no checks were declared", async () => {
    const { r, env, path, id, commit, adminDir } = await gatedBerth();
    const honest = JSON.parse(readFileSync(receiptPath(adminDir), "utf8"));
    const tree = r.git(["rev-parse", "HEAD^{tree}"], path);
    const { gate_digest: _, ...withoutDigest } = honest;
    const forged = [
      // Version 1, as written before receipts recorded their gate.
      { ...withoutDigest, version: 1, checks: [] },
      // The digest of no checks at all.
      {
        ...honest,
        gate_digest: gateDefinitionOf({ fail_fast: false, timeout_s: 600, checks: [] }).digest,
        checks: [],
      },
      // The right digest, copied, with the checks left out.
      { ...honest, checks: [] },
    ];
    for (const receipt of forged) {
      expect(receipt).toMatchObject({ commit, tree });
      writeFileSync(receiptPath(adminDir), JSON.stringify(receipt));
      expect(await statusRow(r, env, id)).toMatchObject({ receipt: "stale", receipt_checks: 0 });
      const human = await runBerth(["status"], { cwd: r.path, env });
      expect(human.stdout).not.toContain("no checks declared");
      expect(human.stdout).toContain("stale");
      const plan = await runBerth(["accept", id, "--dry-run", "--json"], { cwd: r.path, env });
      expect(plan.json.data.validated).toMatchObject({ by: "gate", checks: 2 });
    }
    // The honest receipt is honored again.
    writeFileSync(receiptPath(adminDir), JSON.stringify(honest));
    expect(await statusRow(r, env, id)).toMatchObject({ receipt: "honored", receipt_checks: 2 });
  });

  it("the gate writes a version-2 receipt recording the digest of the gate it ran", async () => {
    const { commit, adminDir } = await gatedBerth();
    const receipt = JSON.parse(readFileSync(receiptPath(adminDir), "utf8"));
    expect(receipt).toMatchObject({
      version: 2,
      commit,
      gate_digest: gateDefinitionOf({
        fail_fast: false,
        timeout_s: 600,
        checks: [
          {
            name: "one",
            run: 'echo "one $(git rev-parse HEAD)" >> "$MARKER"',
            after: [],
            timeout_s: null,
          },
          {
            name: "two",
            run: 'echo "two $(git rev-parse HEAD)" >> "$MARKER"',
            after: ["one"],
            timeout_s: null,
          },
        ],
      }).digest,
    });
  });

  it("a version-1 receipt of a full green gate is stale after the upgrade (fail closed); the next gate writes one that is honored", async () => {
    const { r, env, path, id, adminDir } = await gatedBerth();
    const { gate_digest: _, ...old } = JSON.parse(readFileSync(receiptPath(adminDir), "utf8"));
    writeFileSync(receiptPath(adminDir), JSON.stringify({ ...old, version: 1 }));
    expect(await statusRow(r, env, id)).toMatchObject({ receipt: "stale", receipt_checks: 2 });
    const gated = await runBerth(["gate", "--json"], { cwd: path, env });
    expect(gated.code).toBe(0);
    expect(await statusRow(r, env, id)).toMatchObject({ receipt: "honored" });
  });
});
