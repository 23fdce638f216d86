import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startBerth } from "../src/core/lifecycle/start.js";
import { makeRepo, PROJECT_ROOT, type TestRepo, testContext } from "./helpers/repo.js";

/**
 * The benchmark's helper scripts call berth's built functions directly
 * (bench/*.mjs, from dist/), so a changed signature breaks them where no
 * other test looks until a whole `npm run bench` fails half-way. Each runs
 * here once on a small fleet and must agree with its own reference answer.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

function runScript(script: string, args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(process.execPath, [join(PROJECT_ROOT, "bench", script), ...args], {
    env,
    encoding: "utf8",
  });
}

/** A train of two stages, a landed berth and a fresh one. */
async function smallFleet(r: TestRepo) {
  const { ctx } = testContext(r.path, r.env);
  const start = async (name: string, from?: string) => {
    const started = await startBerth(ctx, { name, from });
    return started.data as NonNullable<typeof started.data>;
  };
  const lower = await start("lower");
  r.write("lower.txt", "lower\n", lower.path);
  r.commit("lower", lower.path);
  const upper = await start("upper", lower.branch);
  r.write("upper.txt", "upper\n", upper.path);
  r.commit("upper", upper.path);
  const landed = await start("landed");
  r.write("landed.txt", "landed\n", landed.path);
  r.git(["merge", "-q", "--ff-only", r.commit("landed", landed.path)]);
  await start("fresh");
  return [lower, upper, landed];
}

describe("the benchmark's scripts (bench/*.mjs) run against the built berth", () => {
  it("classify.mjs: berth's classification agrees with the per-candidate one", async () => {
    repo = makeRepo();
    await smallFleet(repo);
    const out = JSON.parse(runScript("classify.mjs", [repo.path, "--runs", "1"], repo.env));
    expect(out).toMatchObject({ worktrees: 5, agree: true });
    expect(out.classified).toMatchObject({ landed: 1, contained: 1 });
  });

  it("containment.mjs: the in-memory classification agrees with the pairwise search", () => {
    repo = makeRepo();
    const out = JSON.parse(
      runScript("containment.mjs", ["--worktrees", "40", "--runs", "1"], repo.env),
    );
    expect(out).toMatchObject({ worktrees: 41, agree: true });
  });

  it("lanes-alone.mjs: reads every listed worktree's status", async () => {
    repo = makeRepo();
    const berths = await smallFleet(repo);
    const list = join(repo.path, "..", "worktrees.txt");
    writeFileSync(list, `${[repo.path, ...berths.map((b) => b.path)].join("\n")}\n`);
    expect(() => runScript("lanes-alone.mjs", [list], repo?.env ?? {})).not.toThrow();
    expect(() => runScript("lanes-alone.mjs", [list, "2"], repo?.env ?? {})).not.toThrow();
    // A lane count that is no count is refused, not read as status's own.
    expect(() => runScript("lanes-alone.mjs", [list, "two"], repo?.env ?? {})).toThrow(
      /lane count must be a whole number/,
    );
  });
});
