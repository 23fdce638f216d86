import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installGitCounter } from "./helpers/git-counter.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("survey cost (spec section 10)", () => {
  it("spends one git status per worktree plus a constant, never per pair", async () => {
    repo = makeRepo();
    const paths: string[] = [];
    for (let i = 0; i < 20; i++) {
      const from = i % 4 === 0 || paths.length === 0 ? [] : ["--from", `berth/${paths.at(-1)}`];
      const run = await runBerth(["start", `w${i}`, ...from, "--json"], {
        cwd: repo.path,
        env: repo.env,
      });
      expect(run.code).toBe(0);
      paths.push(run.json.data.id);
      repo.commit(`work ${i}`, run.json.data.path);
      if (i % 5 === 0) writeFileSync(join(run.json.data.path, "dirty.txt"), "x");
    }
    const counter = installGitCounter(repo.dir.path, repo.env);
    const run = await runBerth(["status", "--json"], { cwd: repo.path, env: counter.env });
    expect(run.code).toBe(0);
    expect(run.json.data.worktrees).toHaveLength(21);
    const calls = counter.calls();
    const statuses = calls.filter((args) => args.includes("status"));
    expect(statuses).toHaveLength(21);
    const fixed = calls.length - statuses.length;
    // rev-parse, worktree list, for-each-ref, merge-base, rev-list, and cat-file for receipts.
    expect(fixed).toBeLessThanOrEqual(6);
    // Containment and landed classification: one ancestry walk for the whole fleet.
    const ancestry = calls.filter((args) => args[0] === "merge-base" || args[0] === "rev-list");
    expect(ancestry).toHaveLength(2);

    // The prune plan classifies the same fleet (trains, containment, landed) at the same cost.
    counter.reset();
    const prune = await runBerth(["worktree", "prune", "--dry-run", "--json"], {
      cwd: repo.path,
      env: counter.env,
    });
    expect(prune.code).toBe(0);
    expect(prune.json.data.sections.contained.length).toBeGreaterThan(5);
    const pruneCalls = counter.calls();
    expect(pruneCalls.filter((args) => args.includes("status"))).toHaveLength(21);
    expect(pruneCalls.length - 21).toBeLessThanOrEqual(6);
    expect(
      pruneCalls.filter((args) => args[0] === "merge-base" || args[0] === "rev-list"),
    ).toHaveLength(2);
  });
});
