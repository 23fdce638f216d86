import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerFiles, startBerth } from "./helpers/fleet.js";
import { makeRepo, PROJECT_ROOT, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * examples/postgres against a real PostgreSQL server: one database per berth,
 * created by `start`, dropped by teardown. CI starts the server with
 * .ci/setup-postgres.sh; without one this test fails rather than skips.
 */

const EXAMPLE = readFileSync(join(PROJECT_ROOT, "examples", "postgres", "berth.toml"), "utf8");

let repo: TestRepo;
const created: string[] = [];

function psql(sql: string): string {
  return execFileSync("psql", ["-qAtX", "-d", "postgres", "-c", sql], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

function databaseExists(name: string): boolean {
  return psql(`select count(*) from pg_database where datname = '${name}'`) === "1";
}

/** Fails the test (never skips it) when there is no server to talk to. */
function requireServer(): void {
  try {
    psql("select 1");
  } catch (error) {
    throw new Error(
      "PostgreSQL is not reachable for the examples/postgres test. " +
        "Run `bash .ci/setup-postgres.sh` as root to install and start it.\n" +
        String((error as { stderr?: string }).stderr ?? error),
    );
  }
}

beforeAll(() => {
  repo = makeRepo({ config: EXAMPLE });
});

afterAll(() => {
  for (const name of created) {
    try {
      psql(`drop database if exists "${name}"`);
    } catch {
      // No server: nothing was created.
    }
  }
  repo?.cleanup();
});

describe("examples/postgres", () => {
  it("gives each berth its own database and drops it on teardown", async () => {
    requireServer();
    const a = await startBerth(repo, "pg one");
    const b = await startBerth(repo, "pg two");
    const dbA = a.id.replace(/[^a-z0-9_]/g, "_");
    const dbB = b.id.replace(/[^a-z0-9_]/g, "_");
    created.push(dbA, dbB);
    expect(databaseExists(dbA)).toBe(true);
    expect(databaseExists(dbB)).toBe(true);
    expect(ledgerFiles(repo)).toHaveLength(2);

    // The ensure command reaches the berth's own database.
    const setup = await runBerth(["worktree", "setup", "--json"], { cwd: a.path, env: repo.env });
    expect(setup.code).toBe(0);
    expect(setup.json.data.ensured).toEqual(["db"]);

    const dropA = await runBerth(["worktree", "drop", a.id, "--yes"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(dropA.code).toBe(0);
    expect(databaseExists(dbA)).toBe(false);
    expect(databaseExists(dbB)).toBe(true);

    const teardownB = await runBerth(["worktree", "teardown", "--yes"], {
      cwd: b.path,
      env: repo.env,
    });
    expect(teardownB.code).toBe(0);
    expect(databaseExists(dbB)).toBe(false);
    expect(existsSync(b.path)).toBe(true);
    expect(ledgerFiles(repo)).toEqual([]);

    const dropB = await runBerth(["worktree", "drop", b.id, "--yes"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(dropB.code).toBe(0);
    expect(existsSync(b.path)).toBe(false);
  });
});
