import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runShell } from "../src/core/berth/project-command.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

let dir: TempDir;
afterEach(() => dir?.cleanup());

describe("runShell", () => {
  it("passes values only through the environment", async () => {
    dir = makeTempDir();
    const evil = "$(touch pwned)";
    const result = await runShell('printf "%s" "$BERTH_PATH"', {
      cwd: dir.path,
      env: { ...process.env, BERTH_PATH: evil },
    });
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(evil);
    expect(existsSync(join(dir.path, "pwned"))).toBe(false);
  });

  it("kills the whole process group on timeout", async () => {
    dir = makeTempDir();
    const marker = join(dir.path, "survivor");
    const result = await runShell(`(sleep 2; touch "${marker}") & sleep 30`, {
      cwd: dir.path,
      env: process.env,
      timeoutMs: 200,
    });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(marker)).toBe(false);
  });

  it("reports a failing command's exit code and output", async () => {
    dir = makeTempDir();
    const result = await runShell("echo boom >&2; exit 3", { cwd: dir.path, env: process.env });
    expect(result.exitCode).toBe(3);
    expect(result.output.trim()).toBe("boom");
  });
});
