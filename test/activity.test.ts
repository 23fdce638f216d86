import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  isIdle,
  readFleetActivity,
  readGitActivity,
  type WorktreeActivity,
} from "../src/core/fleet/activity.js";
import type { Config } from "../src/io/config-types.js";
import { parseReflogLineTime } from "../src/io/reflog.js";
import { appendEvents, beginEvent, logbookDirOf } from "./helpers/logbook.js";
import { makeRepo, makeTempDir, type TempDir, type TestRepo } from "./helpers/repo.js";

let dir: TempDir | undefined;
let repo: TestRepo | undefined;
afterEach(() => {
  dir?.cleanup();
  repo?.cleanup();
  dir = repo = undefined;
});

const OID = "a".repeat(40);
const NOW = new Date("2026-06-01T12:00:00Z");

describe("parseReflogLineTime", () => {
  it("reads the committer time of a reflog entry", () => {
    const line = `${"0".repeat(40)} ${OID} Test Author <a@example.com> 1780315200 +0200\tcommit (initial): x`;
    expect(parseReflogLineTime(line)?.toISOString()).toBe("2026-06-01T12:00:00.000Z");
  });

  it("refuses what is not a reflog entry", () => {
    expect(parseReflogLineTime("garbage")).toBeNull();
    expect(parseReflogLineTime("")).toBeNull();
  });
});

describe("readGitActivity", () => {
  it("is the later of the newest reflog entry and the admin dir's last change", async () => {
    dir = makeTempDir();
    const admin = join(dir.path, "admin");
    mkdirSync(join(admin, "logs"), { recursive: true });
    const entry = (epoch: number) => `${OID} ${OID} A <a@b> ${epoch} +0000\tcommit: x\n`;
    writeFileSync(
      join(admin, "logs", "HEAD"),
      `${entry(1000)}${"x".repeat(9000)}\n${entry(1780315200)}`,
    );
    const old = new Date("2026-01-01T00:00:00Z");
    utimesSync(admin, old, old);
    expect((await readGitActivity(admin))?.toISOString()).toBe("2026-06-01T12:00:00.000Z");
    const later = new Date("2026-07-01T00:00:00Z");
    utimesSync(admin, later, later);
    expect((await readGitActivity(admin))?.toISOString()).toBe(later.toISOString());
  });

  it("is unknown when the admin dir is gone", async () => {
    dir = makeTempDir();
    expect(await readGitActivity(join(dir.path, "gone"))).toBeNull();
  });
});

function place(r: TestRepo, enabled: boolean) {
  return {
    location: {
      cwd: r.path,
      commonDir: join(r.path, ".git"),
      gitDir: join(r.path, ".git"),
      toplevel: r.path,
      mainPath: r.path,
    },
    config: { logbook: { enabled } } as Config,
  };
}

describe("readFleetActivity", () => {
  it("uses the logbook when it is on", async () => {
    repo = makeRepo();
    const target = {
      entry: { path: repo.path, branch: "main" },
      adminDir: join(repo.path, ".git"),
    };
    appendEvents(repo.path, [
      beginEvent({ at: "2026-06-01T11:50:00.000Z", path: repo.path, verb: "update" }),
    ]);
    const fleet = await readFleetActivity(place(repo, true), [target], NOW);
    const row = fleet.worktrees.get(repo.path);
    expect(fleet.logbook).toBe("on");
    expect(row?.running).toBe("update");
    expect(row?.signal).toBe("logbook");
    expect(row?.gitActivity).not.toBeNull();
  });

  it("falls back to git when the logbook is off or unreadable: nothing in flight", async () => {
    repo = makeRepo();
    const target = {
      entry: { path: repo.path, branch: "main" },
      adminDir: join(repo.path, ".git"),
    };
    appendEvents(repo.path, [beginEvent({ at: "2026-06-01T11:50:00.000Z", path: repo.path })]);
    const off = await readFleetActivity(place(repo, false), [target], NOW);
    expect(off.logbook).toBe("off");
    expect(off.worktrees.get(repo.path)).toMatchObject({
      running: null,
      lastAction: null,
      signal: "git",
    });
    expect(off.worktrees.get(repo.path)?.lastActivity).toEqual(
      off.worktrees.get(repo.path)?.gitActivity,
    );

    const logbook = logbookDirOf(repo.path);
    rmSync(logbook, { recursive: true });
    writeFileSync(logbook, "not a folder");
    const unreadable = await readFleetActivity(place(repo, true), [target], NOW);
    expect(unreadable.logbook).toBe("unreadable");
    expect(unreadable.worktrees.get(repo.path)).toMatchObject({ running: null, signal: "git" });
  });
});

describe("isIdle (containment clause 4)", () => {
  const base: WorktreeActivity = {
    running: null,
    lastAction: null,
    gitActivity: null,
    lastActivity: null,
    signal: "logbook",
  };
  const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000);

  it("with the logbook on: idle unless a verb is in flight", () => {
    expect(isIdle(base, NOW)).toBe(true);
    expect(isIdle({ ...base, running: "gate" }, NOW)).toBe(false);
  });

  it("with the logbook off: idle after an hour of git quiet; unknown is not idle", () => {
    const git = { ...base, signal: "git" as const };
    expect(isIdle({ ...git, gitActivity: minutesAgo(61) }, NOW)).toBe(true);
    expect(isIdle({ ...git, gitActivity: minutesAgo(59) }, NOW)).toBe(false);
    expect(isIdle(git, NOW)).toBe(false);
  });
});
