import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initConfig } from "../src/core/repo/init-config.js";
import { UNTRACKED_CACHE_MIN_FILES } from "../src/core/repo/untracked-cache.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

function largeRepo(): TestRepo {
  const r = makeRepo();
  for (let d = 0; d < 20; d++) mkdirSync(join(r.path, `dir${d}`));
  for (let i = 0; i < UNTRACKED_CACHE_MIN_FILES + 50; i++) {
    writeFileSync(join(r.path, `dir${i % 20}`, `f${i}.txt`), `${i}\n`);
  }
  r.commit("many files");
  return r;
}

const config = (r: TestRepo) => {
  try {
    return r.git(["config", "--get", "core.untrackedCache"]);
  } catch {
    return null;
  }
};

describe("berth init and git's untracked cache", () => {
  it("offers it in a large checkout and does not set it unasked", async () => {
    repo = largeRepo();
    const { ctx } = testContext(repo.path, repo.env);
    const result = await initConfig(ctx, {});
    expect(result.ok).toBe(true);
    expect(result.hints.some((h) => h.includes("git config core.untrackedCache true"))).toBe(true);
    expect(result.steps?.map((s) => s.step)).toEqual(["write berth.toml"]);
    expect(config(repo)).toBeNull();
  });

  it("says nothing in a small checkout", async () => {
    repo = makeRepo();
    const { ctx } = testContext(repo.path, repo.env);
    const result = await initConfig(ctx, {});
    expect(result.hints.some((h) => h.includes("untracked"))).toBe(false);
  });

  it("says nothing where someone already decided, even against it", async () => {
    repo = largeRepo();
    repo.git(["config", "core.untrackedCache", "false"]);
    const { ctx } = testContext(repo.path, repo.env);
    const result = await initConfig(ctx, {});
    expect(result.hints.some((h) => h.includes("untracked"))).toBe(false);
    expect(config(repo)).toBe("false");
  });

  it("sets it when asked, after git's filesystem test; a dry run only plans it", async () => {
    repo = largeRepo();
    const { ctx } = testContext(repo.path, repo.env);
    const planned = await initConfig(ctx, { untrackedCache: true, dryRun: true });
    expect(planned.plan?.steps.map((s) => s.step)).toEqual([
      "write berth.toml",
      "test the untracked cache",
      "set git config",
    ]);
    expect(config(repo)).toBeNull();
    const result = await initConfig(ctx, { untrackedCache: true });
    expect(result.steps).toEqual([
      expect.objectContaining({ step: "write berth.toml", outcome: "done" }),
      expect.objectContaining({ step: "test the untracked cache", outcome: "done" }),
      expect.objectContaining({
        step: "set git config",
        target: "core.untrackedCache",
        outcome: "done",
      }),
    ]);
    expect(config(repo)).toBe("true");
  }, 60_000);

  it("the offer's own advice works after that init: --untracked-cache keeps berth.toml and sets it", async () => {
    repo = largeRepo();
    const { ctx } = testContext(repo.path, repo.env);
    const first = await initConfig(ctx, {});
    expect(first.hints.some((h) => h.includes("berth init --untracked-cache"))).toBe(true);
    const toml = join(repo.path, "berth.toml");
    const written = readFileSync(toml, "utf8");
    const planned = await initConfig(ctx, { untrackedCache: true, dryRun: true });
    expect(planned.plan?.steps.map((s) => s.step)).toEqual([
      "test the untracked cache",
      "set git config",
    ]);
    const result = await initConfig(ctx, { untrackedCache: true });
    expect(result.ok).toBe(true);
    expect(result.steps?.map((s) => [s.step, s.outcome])).toEqual([
      ["test the untracked cache", "done"],
      ["set git config", "done"],
    ]);
    expect(config(repo)).toBe("true");
    expect(readFileSync(toml, "utf8")).toBe(written);
    // --agents beside it does both, the file still kept.
    repo.git(["config", "--unset", "core.untrackedCache"]);
    const both = await initConfig(ctx, { untrackedCache: true, agents: true });
    expect(both.steps?.map((s) => s.step)).toEqual([
      "test the untracked cache",
      "set git config",
      "write agents section",
    ]);
    expect(config(repo)).toBe("true");
    expect(readFileSync(toml, "utf8")).toBe(written);
    // Without it, an existing berth.toml is still refused, never overwritten.
    await expect(initConfig(ctx, {})).rejects.toMatchObject({ code: "precondition_failed" });
  }, 60_000);
});
