import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { receiptPath } from "../src/io/receipt-file.js";
import { BERTH_BIN, makeRepo, type TestRepo } from "./helpers/repo.js";

/**
 * Output nobody reads: `berth status --json | head -1` closes the pipe before
 * berth has written, and `> /dev/full` fails every write. Either way berth
 * ends without a stack trace; only a write that fails for another reason than
 * a reader gone away fails the run.
 */

let repo: TestRepo;
beforeAll(() => {
  repo = makeRepo();
  repo.write("berth.toml", `[gate]\nchecks = [{ name = "ok", run = "true" }]\n`);
  repo.commit("a gate with one check");
});
afterAll(() => repo.cleanup());

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** How the child ended, and its stderr when that was read. */
function ended(child: ChildProcess): Promise<Ended> {
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** Runs berth with the given stdout, and stderr a pipe. */
function runWith(args: string[], stdout: "pipe" | number): ChildProcess {
  return spawn(process.execPath, [BERTH_BIN, ...args], {
    cwd: repo.path,
    env: repo.env,
    stdio: ["ignore", stdout, "pipe"],
  });
}

/** Runs berth with stdout and stderr pipes whose reading ends are closed before it starts. */
function runUnread(args: string[]): Promise<Ended> {
  const child = runWith(args, "pipe");
  child.stdout?.destroy();
  child.stderr?.destroy();
  return ended(child);
}

/** Runs berth with stdout on /dev/full, stderr read. */
function runIntoFullDisk(args: string[]): Promise<Ended> {
  const full = openSync("/dev/full", "w");
  const child = runWith(args, full);
  closeSync(full);
  return ended(child);
}

describe("a reader that has gone away", () => {
  it.each([
    [["status", "--json"], 0],
    [["status"], 0],
    [["status", "--no-such-flag", "--json"], 2],
  ])("berth %j exits %i, as if read", async (args, code) => {
    const run = await runUnread(args);
    expect(run.code).toBe(code);
    expect(run.signal).toBeNull();
  });

  it("does not stop a gate: the receipt is written and the exit is 0", async () => {
    const run = await runUnread(["gate", "--json"]);
    expect(run.code).toBe(0);
    expect(existsSync(receiptPath(join(repo.path, ".git")))).toBe(true);
    // The gate's events are in the logbook now, for a reader that also goes away.
    expect((await runUnread(["logbook", "--json"])).code).toBe(0);
  });
});

describe("output that cannot be written", () => {
  it.each([[["status", "--json"]], [["status"]]])(
    "berth %j fails with one line naming the error, no stack",
    async (args) => {
      const run = await runIntoFullDisk(args);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        "berth: the output was not written: ENOSPC: no space left on device, write\n",
      );
    },
  );
});
