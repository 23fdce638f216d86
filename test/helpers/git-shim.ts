import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The real git, found once: a shim hands each call over to it. */
export const REAL_GIT = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();

/**
 * Puts a `git` in front of the real one, in `<dir>/<name>-bin`: the sh lines
 * `before` run first, with the call's arguments as "$@" (they may exit to
 * stand in for git), then the real git runs in their place. Tests use it to
 * act at an exact moment of a verb, or to make git fail there. Returns the
 * PATH that finds it first.
 */
export function gitShim(
  dir: string,
  name: string,
  before: readonly string[],
  path = process.env.PATH ?? "",
): string {
  const bin = join(dir, `${name}-bin`);
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, "git"),
    ["#!/bin/sh", ...before, `exec '${REAL_GIT}' "$@"`, ""].join("\n"),
  );
  chmodSync(join(bin, "git"), 0o755);
  return `${bin}:${path}`;
}
