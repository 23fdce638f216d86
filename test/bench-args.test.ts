import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./helpers/repo.js";

/**
 * The benchmark scripts read their arguments through bench/args.mjs. A typo
 * used to be ignored: `node bench/run.mjs --help` started a whole 20-minute
 * run that rewrites the committed bench/results.json. Each case here is
 * refused (or answered) before any fleet is built, so it takes milliseconds.
 */
function bench(script: string, args: string[]) {
  const run = spawnSync(process.execPath, [join(PROJECT_ROOT, "bench", script), ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("the benchmarks' arguments", () => {
  const results = join(PROJECT_ROOT, "bench", "results.json");

  it("--help prints the usage and runs nothing", () => {
    const before = statSync(results).mtimeMs;
    const help = bench("run.mjs", ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: node bench\/run\.mjs /);
    expect(help.stderr).toBe("");
    expect(statSync(results).mtimeMs).toBe(before);
  });

  it("refuses an unknown option, a bad number and an unknown section before any work", () => {
    const before = statSync(results).mtimeMs;
    const cases: [string[], string][] = [
      [["--hlep"], "unknown option --hlep"],
      [["--runs", "many"], "--runs must be a whole number from 1, not many"],
      [["--runs"], "--runs needs a value"],
      [["--only", "tiny,nope"], "--only: no section nope (sections: machine, tiny,"],
      [["quick"], "unexpected argument quick"],
    ];
    for (const [args, why] of cases) {
      const run = bench("run.mjs", args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain(`${why}`);
      expect(run.stderr).toContain("nothing was run");
      expect(run.stderr).toContain("Usage: node bench/run.mjs");
      expect(run.stdout).toBe("");
    }
    expect(statSync(results).mtimeMs).toBe(before);
  });

  it("every script refuses what it does not declare", () => {
    for (const script of [
      "classify.mjs",
      "containment.mjs",
      "desk-idle-cpu.mjs",
      "remote.mjs",
      "queue.mjs",
    ]) {
      const run = bench(script, ["--nope", "1"]);
      expect(run.code, script).toBe(2);
      expect(run.stderr, script).toContain(`unknown option --nope; nothing was run.`);
      expect(run.stderr, script).toContain(`Usage: node bench/${script}`);
    }
    const noRepo = bench("classify.mjs", []);
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr).toContain("name the repository whose fleet to classify");
  });
});
