import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitShim } from "./git-shim.js";

/**
 * A `git` on PATH that logs each invocation's arguments, then runs the real
 * git: the honest way to count the processes a verb spawns.
 */
export interface GitCounter {
  env: NodeJS.ProcessEnv;
  /** Arguments of every git process since the last reset. */
  calls(): string[][];
  /**
   * Each of those calls with the process that started it: its pid and name,
   * and the pid and name of its own parent (Linux: from /proc), in the
   * shim's order.
   */
  parents(): {
    parent: string;
    command: string;
    grandparent: string;
    grandparentCommand: string;
    args: string[];
  }[];
  reset(): void;
}

/** The subcommand of a logged git call: `-C <path>` and `-c <key=value>` before it are skipped. */
export function gitSubcommand(args: readonly string[]): string | undefined {
  let i = 0;
  while (args[i] === "-C" || args[i] === "-c") i += 2;
  return args[i];
}

export function installGitCounter(dir: string, env: NodeJS.ProcessEnv): GitCounter {
  const log = join(dir, "git-calls.log");
  const parentLog = join(dir, "git-parents.log");
  const reset = () => {
    writeFileSync(log, "");
    writeFileSync(parentLog, "");
  };
  reset();
  // Builtins only (`read`, a function): the shim spawns no process of its own.
  const path = gitShim(
    dir,
    "counting",
    [
      `printf '%s\\n' "$*" >> '${log}'`,
      "parent=?; read -r parent 2>/dev/null < /proc/$PPID/comm",
      // Field 4 of stat is the parent's own parent (a name in parentheses has no space here).
      "stat=; read -r stat 2>/dev/null < /proc/$PPID/stat",
      "fourth() { grandparent=$4; }; fourth $stat",
      "elder=?; read -r elder 2>/dev/null < /proc/$grandparent/comm",
      `printf '%s %s %s %s %s\\n' "$PPID" "$parent" "$grandparent" "$elder" "$*" >> '${parentLog}'`,
    ],
    env.PATH ?? "",
  );
  return {
    env: { ...env, PATH: path },
    calls: () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => line.split(" ")),
    parents: () =>
      readFileSync(parentLog, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => {
          const [parent = "", command = "", grandparent = "", grandparentCommand = "", ...args] =
            line.split(" ");
          return { parent, command, grandparent, grandparentCommand, args };
        }),
    reset,
  };
}
