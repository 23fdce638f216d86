import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * A project command that leaves a job in the background (`server &`) ends
 * when its shell does: the job holds the output pipes open, and berth must not
 * wait for it. What it left running dies with its process group.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a command that leaves a job in the background", () => {
  it("a resource create: start finishes and the job is killed", async () => {
    repo = makeRepo({
      config: `[worktree.resources.server]
create = 'sleep 120 & echo "$!" > "$MARKER"; echo server started'
destroy = 'true'
`,
    });
    const marker = join(repo.dir.path, "marker");
    const env = { ...repo.env, MARKER: marker };
    // Without the fix the start waits for the sleep: the runner's own limit then kills it (code 128).
    const run = await runBerth(["start", "served", "--json"], {
      cwd: repo.path,
      env,
      timeoutMs: 20_000,
    });
    expect(run.code).toBe(0);
    const pid = Number(readFileSync(marker, "utf8").trim());
    expect(pid).toBeGreaterThan(0);
    for (let i = 0; i < 40 && alive(pid); i++) await sleep(50);
    expect(alive(pid)).toBe(false);
  }, 30_000);
});
