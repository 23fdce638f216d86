import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { receiptPath } from "../src/io/receipt-file.js";
import { isGone, leftovers, recordedPid, waitFor } from "./helpers/processes.js";
import { BERTH_BIN, collectRun, makeRepo, type TestRepo } from "./helpers/repo.js";

/**
 * A gate's checks run in their own process groups, so a signal that ends
 * berth never reaches them by itself: berth must stop them. Closing the
 * terminal sends SIGHUP (issue 15: the checks were left running as orphans).
 */

let repo: TestRepo | undefined;
const spawned = leftovers();
afterEach(() => {
  spawned.killAll();
  repo?.cleanup();
});

describe("a signal to berth gate stops the checks' processes", () => {
  for (const signal of ["SIGHUP", "SIGINT", "SIGTERM"] as const) {
    it(`${signal}: the running check's processes are gone within seconds, no receipt`, async () => {
      repo = makeRepo();
      const pidFile = join(repo.dir.path, "check.pid");
      // The check starts a long-running child of its own and records that child's pid.
      const check = `sleep 300 & echo $! > ${pidFile}; wait`;
      repo.write("berth.toml", `[gate]\nchecks = [{ name = "long", run = "${check}" }]\n`);
      repo.commit("gate with one long check");

      const child = spawn(process.execPath, [BERTH_BIN, "gate", "--json"], {
        cwd: repo.path,
        env: repo.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const done = collectRun(child);
      // The shell creates the file before it writes the pid: wait for the pid itself.
      await waitFor("the check to start", () => recordedPid(pidFile) !== null, 20_000);
      const sleeper = recordedPid(pidFile) as number;
      spawned.add(sleeper);
      expect(isGone(sleeper)).toBe(false);

      child.kill(signal);
      await waitFor(`the check's process ${sleeper} to end`, () => isGone(sleeper), 5_000);
      const run = await done;
      expect(run.code).toBe(1);
      expect(run.json?.data?.checks?.[0]).toMatchObject({ name: "long", outcome: "stopped" });
      expect(existsSync(receiptPath(join(repo.path, ".git")))).toBe(false);
    });
  }
});
