import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFileAtomic, writeJsonAtomic } from "../src/io/atomic.js";
import { type LedgerEntry, ledgerEntryPath, recordLedgerEntry } from "../src/io/ledger.js";
import { fleetLockPath, withFleetLock } from "../src/io/lock.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

/**
 * State files survive a power loss whole (issue 15): each is fsynced under its
 * temporary name before it is renamed or linked into place, and its folder is
 * fsynced after, so the new name is durable too. The writes are real; only
 * FileHandle.sync is watched, to see which file or folder was synced when.
 */

let dir: TempDir | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  dir?.cleanup();
});

interface SyncRecord {
  /** What the descriptor named when it was synced (Linux: /proc/self/fd). */
  path: string;
  /** Whether the final file existed (with its new content) at that moment. */
  target: string | null;
}

/** Records every FileHandle.sync from now on, with the state of `target` at that moment. */
async function watchSyncs(target: string): Promise<SyncRecord[]> {
  vi.restoreAllMocks();
  const probe = await open(process.execPath, "r");
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const original = proto.sync;
  const records: SyncRecord[] = [];
  vi.spyOn(proto, "sync").mockImplementation(async function (this: FileHandle) {
    records.push({
      path: readlinkSync(`/proc/self/fd/${this.fd}`),
      target: existsSync(target) ? readFileSync(target, "utf8") : null,
    });
    return original.call(this);
  });
  return records;
}

function isTempOf(path: string, record: SyncRecord): boolean {
  return (
    dirname(record.path) === dirname(path) &&
    record.path.startsWith(`${path}.`) &&
    record.path.endsWith(".tmp")
  );
}

describe.skipIf(process.platform !== "linux")("durable state files", () => {
  it("replacing: the temp file is synced before the rename, the folder after it", async () => {
    dir = makeTempDir();
    const path = join(dir.path, "state", "receipt.json");
    await writeJsonAtomic(path, { version: 1, old: true });
    const records = await watchSyncs(path);
    await writeJsonAtomic(path, { version: 1, old: false });

    const fileSync = records.findIndex((r) => isTempOf(path, r));
    const folderSync = records.findIndex((r) => r.path === dirname(path));
    expect(fileSync, JSON.stringify(records)).toBeGreaterThanOrEqual(0);
    // Synced while it still had its temporary name, and the target still held the old content.
    expect(records[fileSync]?.target).toContain('"old": true');
    expect(folderSync).toBeGreaterThan(fileSync);
    expect(records[folderSync]?.target).toContain('"old": false');
    expect(readdirSync(dirname(path))).toEqual(["receipt.json"]);
  });

  it("creating (ledger entries, the lock): synced before the link, the folder after it", async () => {
    dir = makeTempDir();
    const common = join(dir.path, "common");
    const entry: LedgerEntry = {
      version: 1,
      admin_key: "k",
      id: "x",
      path: "/somewhere/x",
      branch: "berth/x",
      resource: "db",
      env: { BERTH_ID: "x" },
      destroy: "true",
      gc: true,
      created_at: "2026-06-01T12:00:00.000Z",
      order: 0,
    };
    const path = ledgerEntryPath(common, "k", "db");
    const records = await watchSyncs(path);
    await recordLedgerEntry(common, entry);
    const fileSync = records.findIndex((r) => isTempOf(path, r));
    expect(fileSync, JSON.stringify(records)).toBeGreaterThanOrEqual(0);
    expect(records[fileSync]?.target).toBeNull();
    const folderSync = records.findIndex((r) => r.path === dirname(path));
    expect(folderSync).toBeGreaterThan(fileSync);
    expect(JSON.parse(records[folderSync]?.target ?? "null")).toEqual(entry);

    const lock = fleetLockPath(common);
    const lockRecords = await watchSyncs(lock);
    await withFleetLock(common, "test", async () => undefined);
    expect(lockRecords.some((r) => isTempOf(lock, r))).toBe(true);
    expect(lockRecords.some((r) => r.path === dirname(lock) && r.target !== null)).toBe(true);
  });

  it("creating refuses a name that is taken and leaves no temp file behind", async () => {
    dir = makeTempDir();
    const path = join(dir.path, "once.json");
    await createFileAtomic(path, "first\n");
    await expect(createFileAtomic(path, "second\n")).rejects.toMatchObject({ code: "EEXIST" });
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(readdirSync(dir.path).sort()).toEqual(["home", "once.json"]);
  });
});
