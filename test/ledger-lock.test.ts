import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../src/errors.js";
import {
  forgetLedgerEntry,
  LedgerConflictError,
  type LedgerEntry,
  ledgerEntryPath,
  readLedger,
  readWholeLedger,
  recordLedgerEntry,
} from "../src/io/ledger.js";
import { acquireFleetLock, fleetLockPath, withFleetLock } from "../src/io/lock.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

let dir: TempDir | undefined;
afterEach(() => dir?.cleanup());

function entry(adminKey: string, resource: string, order: number, id = adminKey): LedgerEntry {
  return {
    version: 1,
    admin_key: adminKey,
    id,
    path: `/somewhere/${id}`,
    branch: `berth/${id}`,
    resource,
    env: { BERTH_ID: id, BERTH_RESOURCE: resource },
    destroy: `echo destroy ${resource}`,
    gc: true,
    created_at: "2026-06-01T12:00:00.000Z",
    order,
  };
}

describe("the ledger", () => {
  it("records one file per resource and lists them in creation order", async () => {
    dir = makeTempDir();
    const common = dir.path;
    await recordLedgerEntry(common, entry("a-1", "zeta", 0));
    await recordLedgerEntry(common, entry("a-1", "alpha", 1));
    await recordLedgerEntry(common, entry("b-2", "db", 0));
    expect(existsSync(join(common, "berth", "ledger", "a-1", "zeta.json"))).toBe(true);
    const listing = await readLedger(common, "a-1");
    expect(listing.entries.map((e) => e.resource)).toEqual(["zeta", "alpha"]);
    expect(listing.problems).toEqual([]);
    const whole = await readWholeLedger(common);
    expect([...whole.keys()]).toEqual(["a-1", "b-2"]);
    // No temporary files are left behind.
    expect(readdirSync(join(common, "berth", "ledger", "a-1")).sort()).toEqual([
      "alpha.json",
      "zeta.json",
    ]);
  });

  it("never replaces an entry that is already recorded", async () => {
    dir = makeTempDir();
    await recordLedgerEntry(dir.path, entry("a-1", "db", 0, "first"));
    await expect(
      recordLedgerEntry(dir.path, entry("a-1", "db", 0, "second")),
    ).rejects.toBeInstanceOf(LedgerConflictError);
    const raw = JSON.parse(readFileSync(ledgerEntryPath(dir.path, "a-1", "db"), "utf8"));
    expect(raw.id).toBe("first");
  });

  it("forgets an entry and its empty folder; reports unreadable files instead of dropping them", async () => {
    dir = makeTempDir();
    await recordLedgerEntry(dir.path, entry("a-1", "db", 0));
    await forgetLedgerEntry(dir.path, "a-1", "db");
    expect(existsSync(join(dir.path, "berth", "ledger", "a-1"))).toBe(false);
    expect(await readWholeLedger(dir.path)).toEqual(new Map());

    await recordLedgerEntry(dir.path, entry("c-3", "db", 0));
    writeFileSync(ledgerEntryPath(dir.path, "c-3", "torn"), '{"version": 1, "admin');
    const listing = await readLedger(dir.path, "c-3");
    expect(listing.entries.map((e) => e.resource)).toEqual(["db"]);
    expect(listing.problems).toEqual([
      {
        admin_key: "c-3",
        file: ledgerEntryPath(dir.path, "c-3", "torn"),
        reason: "not valid JSON",
      },
    ]);
  });
});

describe("the fleet lock", () => {
  it("is held while the function runs and released afterwards, even when it throws", async () => {
    dir = makeTempDir();
    const path = fleetLockPath(dir.path);
    await withFleetLock(dir.path, "drop", async () => {
      const owner = JSON.parse(readFileSync(path, "utf8"));
      expect(owner).toMatchObject({ pid: process.pid, hostname: hostname(), verb: "drop" });
    });
    expect(existsSync(path)).toBe(false);
    await expect(
      withFleetLock(dir.path, "drop", async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(existsSync(path)).toBe(false);
  });

  it("serialises holders: a waiter gets the lock once the holder releases it", async () => {
    dir = makeTempDir();
    const order: string[] = [];
    const held = await acquireFleetLock(dir.path, "first");
    const waiting = withFleetLock(
      dir.path,
      "second",
      async () => {
        order.push("second runs");
      },
      { waitMs: 30_000 },
    );
    await new Promise((r) => setTimeout(r, 200));
    order.push("first releases");
    await held.release();
    await waiting;
    expect(order).toEqual(["first releases", "second runs"]);
  });

  it("refuses with locked after waiting for a live holder", async () => {
    dir = makeTempDir();
    const held = await acquireFleetLock(dir.path, "start");
    const error = await withFleetLock(dir.path, "drop", async () => "ran", { waitMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe("locked");
    expect((error as UserError).message).toContain("berth start");
    await held.release();
  });

  it("takes over a lock whose holder died, and one whose pid was recycled", async () => {
    dir = makeTempDir();
    const path = fleetLockPath(dir.path);
    const dead = await deadPid();
    const stale = {
      pid: dead,
      hostname: hostname(),
      verb: "start",
      acquired_at: "x",
      pid_start: null,
    };
    await withFleetLock(dir.path, "init", async () => undefined); // creates the folder
    writeFileSync(path, JSON.stringify(stale));
    expect(await withFleetLock(dir.path, "drop", async () => "ran", { waitMs: 0 })).toBe("ran");

    // Our own pid, but a different start time: the holder was another process.
    writeFileSync(path, JSON.stringify({ ...stale, pid: process.pid, pid_start: "1" }));
    expect(await withFleetLock(dir.path, "drop", async () => "ran", { waitMs: 0 })).toBe("ran");
  });

  it("never guesses about a holder on another host", async () => {
    dir = makeTempDir();
    const path = fleetLockPath(dir.path);
    await withFleetLock(dir.path, "init", async () => undefined);
    const other = {
      pid: 1,
      hostname: `not-${hostname()}`,
      verb: "start",
      acquired_at: "x",
      pid_start: null,
    };
    writeFileSync(path, JSON.stringify(other));
    await expect(
      withFleetLock(dir.path, "drop", async () => "ran", { waitMs: 100 }),
    ).rejects.toMatchObject({
      code: "locked",
    });
  });
});

function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(child.pid as number));
    child.kill("SIGKILL");
  });
}
