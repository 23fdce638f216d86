import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ledgerFiles, markerLines, startBerth } from "./helpers/fleet.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Where and which destroy runs (spec section 7, invariant 9; issue 15 items 1
 * and 2): in the berth's own folder, or an empty private one once it is gone,
 * never the main checkout; and always the command recorded in the ledger.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

function setUp(config: string) {
  repo = makeRepo({ config });
  // var/ is ignored in both checkouts: the main checkout's cache is the user's data.
  writeFileSync(join(repo.path, ".gitignore"), "var/\n");
  execFileSync("git", ["add", ".gitignore"], { cwd: repo.path, env: repo.env });
  execFileSync("git", ["commit", "-qm", "ignore var/"], { cwd: repo.path, env: repo.env });
  const marker = join(repo.dir.path, "marker");
  return { repo, marker, env: { ...repo.env, MARKER: marker } };
}

function mainCache(r: TestRepo): string {
  const dir = join(r.path, "var", "cache");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "precious.bin"), "the main checkout's cache\n");
  return join(dir, "precious.bin");
}

const RELATIVE = `[worktree.resources.cache]
create = 'mkdir -p var/cache && echo made > var/cache/berth.txt'
destroy = 'pwd >> "$MARKER"; rm -rf var/cache'
`;

describe("a destroy command with a relative path", () => {
  it("runs in the berth's folder on drop, and the main checkout's files are untouched", async () => {
    const { repo, marker, env } = setUp(RELATIVE);
    const precious = mainCache(repo);
    const berth = await startBerth(repo, "cache", env);
    expect(readFileSync(join(berth.path, "var/cache/berth.txt"), "utf8")).toBe("made\n");

    const drop = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(drop.code).toBe(0);
    expect(markerLines(marker)).toEqual([berth.path]);
    expect(readFileSync(precious, "utf8")).toBe("the main checkout's cache\n");
  });

  it("runs in an empty private folder when the berth's folder is gone (prune of stale metadata)", async () => {
    const { repo, marker, env } = setUp(RELATIVE);
    const precious = mainCache(repo);
    const berth = await startBerth(repo, "gone", env);
    rmSync(berth.path, { recursive: true, force: true });

    const prune = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(prune.code).toBe(0);
    const [ranIn] = markerLines(marker);
    expect(ranIn).toBeDefined();
    expect(ranIn).not.toBe(repo.path);
    expect(ranIn?.startsWith(`${repo.path}/`)).toBe(false);
    expect(existsSync(ranIn as string)).toBe(false); // removed afterwards
    expect(readFileSync(precious, "utf8")).toBe("the main checkout's cache\n");
    expect(ledgerFiles(repo)).toEqual([]);
  });
});

describe("teardown runs the recorded destroy command", () => {
  it("after berth.toml changed the resource's destroy, the old resource is destroyed by its own command", async () => {
    const { repo, marker, env } = setUp(`[worktree.resources.db]
create = 'echo "create old $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy old $BERTH_ID" >> "$MARKER"'
`);
    const berth = await startBerth(repo, "old db", env);
    writeFileSync(
      join(repo.path, "berth.toml"),
      `[worktree.resources.db]
create = 'echo "create new $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy new $BERTH_ID" >> "$MARKER"'
`,
    );
    const drop = await runBerth(["worktree", "drop", berth.id, "--yes"], { cwd: repo.path, env });
    expect(drop.code).toBe(0);
    expect(markerLines(marker)).toEqual([`create old ${berth.id}`, `destroy old ${berth.id}`]);
    expect(ledgerFiles(repo)).toEqual([]);
  });
});
