import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EarlyStatuses, startEarlyStatuses } from "../src/core/fleet/early-statuses.js";
import { surveyFleet } from "../src/core/fleet/survey.js";
import { openRepository } from "../src/core/repo/repository.js";
import type { StatusSummary } from "../src/git/parse.js";
import { readAdminKeys } from "../src/io/admin-dirs.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A main checkout and two linked worktrees; the second has a change. */
function fleet(): { repo: TestRepo; linked: string[] } {
  const made = makeRepo();
  const linked = [join(made.dir.path, "one"), join(made.dir.path, "two")];
  for (const [i, path] of linked.entries())
    made.git(["worktree", "add", "-q", "-b", `b${i}`, path]);
  made.write("change.txt", "x", linked[1]);
  return { repo: made, linked };
}

/** Statuses said to be read early, all of them wrong: a survey that takes them shows it. */
function forged(commonDir: string, paths: string[]): EarlyStatuses {
  const wrong: StatusSummary = { changedFiles: 99 } as StatusSummary;
  return {
    commonDir,
    adminKeys: readAdminKeys(commonDir),
    statuses: Promise.resolve(paths.map((path): [string, StatusSummary] => [path, wrong])),
    listen: () => undefined,
  };
}

const changedFiles = (survey: Awaited<ReturnType<typeof surveyFleet>>) =>
  survey.worktrees.map((w) => [w.entry.path, w.status?.changedFiles ?? null]);

describe("the fleet's statuses started before discovery (core/fleet/early-statuses.ts)", () => {
  it("starts every checkout's but the current one's from the main checkout, none from a linked one unless --all", async () => {
    ({ repo } = fleet());
    const linked = [join(repo.dir.path, "one"), join(repo.dir.path, "two")];
    const fromMain = startEarlyStatuses(repo.path, {});
    expect(fromMain?.commonDir).toBe(join(repo.path, ".git"));
    const read = new Map(await fromMain?.statuses);
    expect([...read.keys()].sort()).toEqual([...linked].sort());
    expect(read.get(linked[1] as string)?.changedFiles).toBe(1);
    expect(startEarlyStatuses(repo.path, { local: true })).toBeNull();
    expect(startEarlyStatuses(linked[0] as string, {})).toBeNull();
    const all = startEarlyStatuses(linked[0] as string, { all: true });
    expect(new Map(await all?.statuses).has(repo.path)).toBe(true);
    // Told as they arrive, and those already in when a listener comes: each once.
    const told: string[] = [];
    all?.listen((path) => told.push(path));
    expect(told.sort()).toEqual([repo.path, linked[1]].sort());
  });

  it("the survey takes them only when discovery names the same common dir, and reads what they lack", async () => {
    let linked: string[];
    ({ repo, linked } = fleet());
    const { ctx } = testContext(repo.path, repo.env);
    const opened = await openRepository(ctx);
    const honest = await surveyFleet(opened);
    // Another common dir: a guess that did not hold is dropped whole.
    const elsewhere = await surveyFleet(opened, {
      early: forged(join(repo.dir.path, "elsewhere", ".git"), [repo.path, ...linked]),
    });
    expect(changedFiles(elsewhere)).toEqual(changedFiles(honest));
    // The same common dir: taken, and a checkout they lack is read by the survey itself.
    const taken = await surveyFleet(opened, {
      early: forged(opened.location.commonDir, [linked[0] as string]),
    });
    expect(changedFiles(taken)).toEqual(
      changedFiles(honest).map(([path, n]) => [path, path === linked[0] ? 99 : n]),
    );
  });
});
