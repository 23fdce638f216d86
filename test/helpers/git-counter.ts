import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A `git` on PATH that logs each invocation's arguments, then runs the real
 * git: the honest way to count the processes a verb spawns.
 */
export interface GitCounter {
  env: NodeJS.ProcessEnv;
  /** Arguments of every git process since the last reset. */
  calls(): string[][];
  reset(): void;
}

export function installGitCounter(dir: string, env: NodeJS.ProcessEnv): GitCounter {
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const bin = join(dir, "counting-bin");
  const log = join(dir, "git-calls.log");
  mkdirSync(bin, { recursive: true });
  writeFileSync(log, "");
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`,
  );
  chmodSync(join(bin, "git"), 0o755);
  return {
    env: { ...env, PATH: `${bin}:${env.PATH ?? ""}` },
    calls: () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => line.split(" ")),
    reset: () => writeFileSync(log, ""),
  };
}
