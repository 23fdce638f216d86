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
    // rev-parse, worktree list, for-each-ref, merge-base, rev-list.
    expect(fixed).toBeLessThanOrEqual(5);
  });
});
