import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyPrune } from "../src/core/lifecycle/prune-apply.js";
import { planPrune } from "../src/core/lifecycle/prune-plan.js";
import { appendLogbookEvent, logbookDir } from "../src/io/logbook.js";
import { makeRepo, PROJECT_ROOT, type TestRepo, testContext } from "./helpers/repo.js";
import { stopAnAm } from "./helpers/stopped-am.js";
import { type StartedBerth, startWithCommit } from "./helpers/train.js";

/**
 * The reclaim's re-validation between plan and apply, in process so the test
 * can act in the gap a person's confirmation leaves. The logbook is on (the
 * default), so idle = no verb in flight.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

async function train(r: TestRepo): Promise<[StartedBerth, StartedBerth, StartedBerth]> {
  const a = await startWithCommit(r, "a");
  const b = await startWithCommit(r, "b", a);
  const c = await startWithCommit(r, "c", b);
  return [a, b, c];
}

const worktrees = (r: TestRepo) => r.git(["worktree", "list", "--porcelain"]);
const refs = (r: TestRepo) => r.git(["for-each-ref", "--format=%(refname) %(objectname)"]);

describe("reclaim re-validates each candidate right before acting", () => {
  it.each([
    [
      "gains a commit",
      (r: TestRepo, a: StartedBerth) => {
        r.write("late.txt", "late\n", a.path);
        r.commit("late work", a.path);
      },
    ],
    [
      "gains an untracked file",
      (_r: TestRepo, a: StartedBerth) => {
        writeFileSync(join(a.path, "late.txt"), "late\n");
      },
    ],
    [
      "has a git am stopped in it, its tree clean",
      (r: TestRepo, a: StartedBerth) => stopAnAm(r, a.path),
    ],
    [
      "gains a begin event",
      (r: TestRepo, a: StartedBerth) => {
        appendLogbookEvent(logbookDir(join(r.path, ".git")), {
          schema: 1,
          event: "begin",
          at: new Date("2026-06-01T11:59:00Z").toISOString(),
          invocation: "late-begin",
          verb: "gate",
          branch: a.branch,
          path: a.path,
          target: a.branch,
          pid: process.pid,
          host: hostname(),
        });
      },
    ],
  ])("a stage that %s between plan and apply is skipped, nothing removed", async (_label, act) => {
    repo = makeRepo();
    const [a, b] = await train(repo);
    const { ctx } = testContext(repo.path, repo.env);
    const plan = await planPrune(ctx);
    expect(plan.sections.contained.map((r) => r.id)).toEqual([a.id, b.id]);

    act(repo, a);
    const beforeA = worktrees(repo);
    const result = await applyPrune(ctx, plan, { contained: true });
    expect(result.data?.skipped).toEqual([
      expect.objectContaining({
        section: "contained",
        target: a.path,
        reason: expect.stringContaining("changed since the plan"),
      }),
    ]);
    expect(worktrees(repo)).toContain(a.path);
    expect(beforeA).toContain(b.path);
    expect(worktrees(repo)).not.toContain(b.path);
  });

  it("reclaiming a three-stage train changes no ref at all", async () => {
    repo = makeRepo();
    await train(repo);
    const { ctx } = testContext(repo.path, repo.env);
    const before = refs(repo);
    const plan = await planPrune(ctx);
    const result = await applyPrune(ctx, plan, { contained: true });
    expect(result.data?.applied.filter((r) => r.section === "contained")).toHaveLength(2);
    expect(refs(repo)).toBe(before);
  });
});

describe("the reclaim path cannot delete a ref (ADR 0225: a grep-able guarantee)", () => {
  it("src/core/lifecycle/reclaim.ts imports nothing that moves or deletes refs", () => {
    const source = readFileSync(join(PROJECT_ROOT, "src/core/lifecycle/reclaim.ts"), "utf8");
    const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
    expect(code).not.toMatch(/git\/refs|deleteRef|moveRef|update-ref|branch\s+-[dD]|runGit/);
    const imports = [...code.matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
    expect(imports.sort()).toEqual([
      "../../context.js",
      "../../text.js",
      "../repo/repository.js",
      "./prune-plan.js",
      "./removal-facts.js",
      "./teardown.js",
    ]);
  });

  it("the shared teardown and the removal facts never delete a ref either", () => {
    for (const file of ["teardown.ts", "removal-facts.ts"]) {
      const source = readFileSync(join(PROJECT_ROOT, "src/core/lifecycle", file), "utf8");
      const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      expect(code).not.toMatch(/deleteRef|moveRef|update-ref|git\/refs|branch-deletion/);
    }
  });
});
