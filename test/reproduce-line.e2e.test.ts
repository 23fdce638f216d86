import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { makeRepo, makeTempDir, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Spec invariant 10 for the gate's reproduce line: pasted into the user's
 * shell (bash here, not the `sh -c` the check ran under), the printed `next`
 * fails the way the check did. Each test runs the real gate on a real
 * repository, then executes `error.next` with `bash -c` in the user's own
 * environment, from a folder outside the berth.
 */

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** A repository declaring `checks`, a berth started on it, and its red gate's --json answer. */
async function redGate(checks: string, env: NodeJS.ProcessEnv = {}) {
  repo = makeRepo({ config: `[gate]\nchecks = [\n${checks}\n]\n` });
  const userEnv = { ...repo.env, ...env };
  const started = await runBerth(["start", "work", "--json"], { cwd: repo.path, env: userEnv });
  expect(started.code, started.stderr).toBe(0);
  const berth = started.json.data.path as string;
  const gate = await runBerth(["gate", "--json"], { cwd: berth, env: userEnv });
  expect(gate.code, gate.stdout + gate.stderr).toBe(1);
  expect(gate.json.error.code).toBe("gate_failed");
  const failure = gate.json.data.failures[0];
  const check = gate.json.data.checks.find((c: { name: string }) => c.name === failure.name);
  expect(gate.json.error.next).toBe(failure.reproduce);
  return {
    berth,
    next: gate.json.error.next as string,
    exitCode: check.exit_code as number,
    userEnv,
  };
}

/** Pastes `command` into bash, as the user would, from a folder outside the berth. */
function pasteIntoBash(command: string, env: NodeJS.ProcessEnv) {
  const elsewhere = join(repo.dir.path, "elsewhere");
  mkdirSync(elsewhere, { recursive: true });
  return spawnSync("bash", ["-c", command], { cwd: elsewhere, env, encoding: "utf8" });
}

describe("the gate's reproduce line, pasted into bash (invariant 10)", () => {
  // Red only where sh is dash (Debian, which CI runs): a bash sh expands the braces too.
  it("fails like the check did when the command uses brace expansion", async () => {
    const { next, exitCode, userEnv } = await redGate(
      `{ name = "brace", run = "test {1..1} = 1" },`,
    );
    expect(exitCode).toBe(1);
    const pasted = pasteIntoBash(next, userEnv);
    expect(pasted.status, `${next}\n${pasted.stderr}`).toBe(exitCode);
  });

  it("fails like the check did when the command reads what only the shell running it knows", async () => {
    // $0 is "sh" under the gate's `sh -c` whatever sh is; pasted bare into bash it is "bash".
    const { next, exitCode, userEnv } = await redGate(
      `{ name = "shell", run = '[ "$0" != sh ]' },`,
    );
    expect(exitCode).toBe(1);
    const pasted = pasteIntoBash(next, userEnv);
    expect(pasted.status, `${next}\n${pasted.stderr}`).toBe(exitCode);
  });

  it("prints a plain command as written, readable inside the line", async () => {
    const { berth, next, exitCode, userEnv } = await redGate(
      `{ name = "plain", run = "test -e missing-file.txt" },`,
    );
    expect(next.startsWith(`cd ${berth} && `)).toBe(true);
    expect(next).toContain("test -e missing-file.txt");
    expect(next).not.toContain("'\\''");
    const pasted = pasteIntoBash(next, userEnv);
    expect(pasted.status, `${next}\n${pasted.stderr}`).toBe(exitCode);
  });

  it("runs the check with the BERTH_* variables it had in the gate", async () => {
    const { next, exitCode, userEnv } = await redGate(
      `{ name = "port", run = "test -z \\"$BERTH_PORT\\"" },`,
    );
    expect(exitCode).toBe(1);
    expect(userEnv.BERTH_PORT).toBeUndefined();
    const pasted = pasteIntoBash(next, userEnv);
    expect(pasted.status, `${next}\n${pasted.stderr}`).toBe(exitCode);
  });

  it("sees exactly the BERTH_* environment the check saw, stale values in the user's shell removed", async () => {
    const outDir = makeTempDir();
    onTestFinished(outDir.cleanup);
    const out = join(outDir.path, "berth-env.txt");
    const { next, exitCode, userEnv } = await redGate(
      `{ name = "env", run = "env | grep '^BERTH_' | sort > \\"$OUT\\"; exit 3" },`,
      // The user's shell holds values of its own: berth replaces or drops them for the check.
      { OUT: out, BERTH_PORT: "1", BERTH_RESOURCE: "stale" },
    );
    expect(exitCode).toBe(3);
    const seen = readFileSync(out, "utf8");
    expect(seen).toContain("BERTH_ID=work-");
    expect(seen).not.toContain("BERTH_PORT=1\n");
    expect(seen).not.toContain("BERTH_RESOURCE");
    rmSync(out);
    const pasted = pasteIntoBash(next, userEnv);
    expect(pasted.status, `${next}\n${pasted.stderr}`).toBe(exitCode);
    expect(readFileSync(out, "utf8")).toBe(seen);
  });
});
