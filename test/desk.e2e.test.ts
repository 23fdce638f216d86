import { afterEach, describe, expect, it } from "vitest";
import { fleetSnapshot, startBerth } from "./helpers/fleet.js";
import { loadedModules } from "./helpers/imports.js";
import { logbookLines } from "./helpers/logbook.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * `berth desk` without a terminal (spec section 5): it refuses with
 * precondition_failed, points at `berth status --json`, writes nothing, and
 * never loads ink or react to say so.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("berth desk without a terminal", () => {
  it("refuses (exit 1), names berth status --json, and changes nothing", async () => {
    repo = makeRepo();
    await startBerth(repo, "one");
    const before = fleetSnapshot(repo);
    const logbookBefore = logbookLines(repo.path);

    const human = await runBerth(["desk"], { cwd: repo.path, env: repo.env });
    expect(human.code).toBe(1);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain("berth desk: berth desk is an interactive view");
    expect(human.stderr).toContain("needs a terminal on stdin and stdout");
    expect(human.stderr).toContain("next: berth status --json");

    const json = await runBerth(["desk", "--json"], { cwd: repo.path, env: repo.env });
    expect(json.code).toBe(1);
    expect(json.stderr).toBe("");
    expect(json.json).toMatchObject({
      ok: false,
      verb: "desk",
      error: { code: "precondition_failed", next: "berth status --json" },
    });

    expect(fleetSnapshot(repo)).toBe(before);
    expect(logbookLines(repo.path)).toEqual(logbookBefore);
  });

  it("loads no ink or react module to refuse", () => {
    repo = makeRepo();
    const modules = loadedModules(["desk"], repo.path, repo.env, 1);
    expect(modules.some((m) => m.endsWith("/dist/commands/desk.js"))).toBe(true);
    expect(modules.filter((m) => /node_modules\/(ink|react)\//.test(m))).toEqual([]);
    expect(modules.filter((m) => m.includes("/dist/ui/desk/"))).toEqual([]);
  });
});
