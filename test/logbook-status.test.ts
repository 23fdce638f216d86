import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { readStatus } from "../src/core/fleet/status.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { appendEvents, beginEvent, deadPid, finishEvent } from "./helpers/logbook.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

/** status's `running`, `last_action` and `last_activity`, in-process with a fixed clock. */

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const NOW = "2026-06-01T12:00:00Z";
const ago = (minutes: number) => new Date(Date.parse(NOW) - minutes * 60_000).toISOString();

async function repoWithBerth(config?: string) {
  repo = makeRepo(config === undefined ? {} : { config });
  const { ctx } = testContext(repo.path, repo.env, NOW);
  const started = await startBerth(ctx, { name: "x" });
  const path = started.data?.path as string;
  const branch = started.data?.branch as string;
  return { repo, ctx, path, branch };
}

async function rowFor(ctx: ReturnType<typeof testContext>["ctx"], path: string) {
  const status = await readStatus(ctx, {});
  const row = status.data?.worktrees.find((w) => w.path === path);
  if (!row) throw new Error(`no status row for ${path}`);
  return row;
}

describe("status: running", () => {
  it("a begin with no finish 30 minutes ago by a dead pid on this host: interrupted", async () => {
    const { repo, ctx, path, branch } = await repoWithBerth();
    appendEvents(repo.path, [
      beginEvent({ at: ago(30), verb: "gate", path, branch, pid: deadPid() }),
    ]);
    expect((await rowFor(ctx, path)).running).toBe("interrupted gate");
  });

  it("a begin with no finish 2 hours ago by a dead pid: not running", async () => {
    const { repo, ctx, path, branch } = await repoWithBerth();
    appendEvents(repo.path, [
      beginEvent({ at: ago(120), verb: "gate", path, branch, pid: deadPid() }),
    ]);
    const row = await rowFor(ctx, path);
    expect(row.running).toBeNull();
    expect(row.last_activity).not.toBeNull();
  });

  it("a begin with no finish 2 hours ago by a live pid on this host: running", async () => {
    const { repo, ctx, path, branch } = await repoWithBerth();
    appendEvents(repo.path, [
      beginEvent({ at: ago(120), verb: "gate", path, branch, pid: process.pid, host: hostname() }),
    ]);
    expect((await rowFor(ctx, path)).running).toBe("gate");
  });

  it("shows the last finished action and its time in last_activity", async () => {
    const { repo, ctx, path, branch } = await repoWithBerth();
    const b = beginEvent({ at: ago(3), verb: "update", path, branch, pid: deadPid() });
    appendEvents(repo.path, [
      b,
      finishEvent({ at: ago(2), invocation: b.invocation, verb: "update", path, branch }),
    ]);
    const row = await rowFor(ctx, path);
    expect(row.running).toBeNull();
    expect(row.last_action).toEqual({ verb: "update", outcome: "ok", at: ago(2) });
    // The berth was made with the real clock, so git's trace may be later still.
    expect(Date.parse(row.last_activity ?? "")).toBeGreaterThanOrEqual(Date.parse(ago(2)));
  });
});

describe("status with [logbook] enabled = false", () => {
  it("ignores logbook files and reports last_activity from git", async () => {
    const { repo, ctx, path, branch } = await repoWithBerth("[logbook]\nenabled = false\n");
    appendEvents(repo.path, [beginEvent({ at: ago(1), verb: "gate", path, branch })]);
    const status = await readStatus(ctx, {});
    for (const row of status.data?.worktrees ?? []) {
      expect(row.running).toBeNull();
      expect(row.last_action).toBeNull();
      expect(Number.isNaN(Date.parse(row.last_activity ?? ""))).toBe(false);
    }
  });
});
