import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fleetSnapshot } from "./helpers/fleet.js";
import { makeRepo, repoAt, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Trunk detection names origin/HEAD's branch even when the clone has no local
 * branch of that name (deleted or renamed). Issue 15: `init` wrote it without
 * a word and `start` failed with advice that did not help. Every verb that
 * needs the trunk now says how to create it: `git branch <trunk> origin/<trunk>`.
 */

let upstream: TestRepo | undefined;
afterEach(() => upstream?.cleanup());

/** A clone of a one-commit repository whose local main was deleted (`how = "delete"`) or renamed. */
function cloneWithoutLocalTrunk(how: "delete" | "rename"): TestRepo {
  upstream = makeRepo({ name: "upstream" });
  const path = join(upstream.dir.path, "clone");
  execFileSync("git", ["clone", "-q", upstream.path, path], { env: upstream.env });
  const clone = repoAt(path, upstream.dir);
  if (how === "delete") {
    clone.git(["switch", "-q", "-c", "work"]);
    clone.git(["branch", "-q", "-D", "main"]);
  } else {
    clone.git(["branch", "-m", "main", "mine"]);
  }
  expect(clone.git(["symbolic-ref", "refs/remotes/origin/HEAD"])).toBe("refs/remotes/origin/main");
  return clone;
}

describe("a trunk that exists only on origin", () => {
  for (const how of ["delete", "rename"] as const) {
    it(`local main ${how}d: start refuses with next "git branch main origin/main", which works`, async () => {
      const clone = cloneWithoutLocalTrunk(how);
      const opts = { cwd: clone.path, env: clone.env };
      const before = fleetSnapshot(clone);

      const start = await runBerth(["start", "x", "--json"], opts);
      expect(start.code).toBe(1);
      expect(start.json.error).toMatchObject({
        code: "precondition_failed",
        next: "git branch main origin/main",
      });
      expect(start.json.error.message).toContain("only origin/main");
      expect(fleetSnapshot(clone)).toBe(before);

      // The advice is a command that fixes it: run it as printed, then start works.
      execFileSync("sh", ["-c", start.json.error.next], { cwd: clone.path, env: clone.env });
      const again = await runBerth(["start", "x", "--json"], opts);
      expect(again.code, again.stdout).toBe(0);
      expect(again.json.data.from).toBe("main");
    });
  }

  it("status and init hint at the same command; init still writes the trunk's name", async () => {
    const clone = cloneWithoutLocalTrunk("delete");
    const opts = { cwd: clone.path, env: clone.env };
    const hint = expect.stringContaining("git branch main origin/main");

    const status = await runBerth(["status", "--json"], opts);
    expect(status.code).toBe(0);
    expect(status.json.data.trunk).toEqual({ name: "main", tip: null });
    expect(status.json.hints).toContainEqual(hint);

    const dry = await runBerth(["init", "--dry-run", "--json"], opts);
    expect(dry.json.hints).toContainEqual(hint);
    const init = await runBerth(["init", "--json"], opts);
    expect(init.code).toBe(0);
    expect(init.json.data.trunk).toBe("main");
    expect(init.json.hints).toContainEqual(hint);
    expect(existsSync(join(clone.path, "berth.toml"))).toBe(true);

    // The gate names the same way out.
    clone.commit("berth.toml");
    const gate = await runBerth(["gate", "--json"], opts);
    expect(gate.json.error.next).toBe("git branch main origin/main");
  });

  it('trunk = "origin/main" is named as origin\'s copy, with the settings that mean it', async () => {
    const clone = cloneWithoutLocalTrunk("rename");
    writeFileSync(join(clone.path, "berth.toml"), '[repository]\ntrunk = "origin/main"\n');
    const opts = { cwd: clone.path, env: clone.env };
    const fix =
      'berth\'s trunk is a local branch, and origin/main is origin\'s copy of one: set trunk = "main" in berth.toml, and [remote] name = "origin" to follow and land on origin\'s';
    const start = await runBerth(["start", "x", "--json"], opts);
    expect(start.code).toBe(1);
    expect(start.json.error.message).toContain(
      `The trunk branch "origin/main" does not exist (${fix});`,
    );
    const status = await runBerth(["status", "--json"], opts);
    expect(status.json.hints).toContain(`trunk origin/main does not exist: ${fix}`);
  });

  it("a trunk missing here and on origin keeps the old advice", async () => {
    upstream = makeRepo({ config: '[repository]\ntrunk = "release"\n' });
    const start = await runBerth(["start", "x", "--json"], {
      cwd: upstream.path,
      env: upstream.env,
    });
    expect(start.json.error.message).toBe(
      'The trunk branch "release" does not exist; nothing changed. Name a base (berth start <name> --from <ref>), or set [repository].trunk in berth.toml.',
    );
    expect(start.json.error.next).toBe(`git -C ${upstream.path} branch --list`);

    const status = await runBerth(["status", "--json"], { cwd: upstream.path, env: upstream.env });
    expect(status.json.hints).toContain(
      "trunk release does not exist yet; ahead/behind are unknown",
    );
  });
});
