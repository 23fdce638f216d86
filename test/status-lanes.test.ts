import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readWorktreeStatuses } from "../src/git/status.js";
import { installGitCounter } from "./helpers/git-counter.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** Runs `fn` with this process's PATH (which the lanes' sh inherits) set to `path`. */
async function withPath<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  process.env.PATH = path;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.PATH;
    else process.env.PATH = saved;
  }
}

describe("readWorktreeStatuses (git/status.ts)", () => {
  it("forks every lane from one sh and feeds each lane as it finishes: a slow checkout holds up only its own lane", async () => {
    repo = makeRepo();
    const slowPath = join(repo.dir.path, "slow");
    repo.git(["worktree", "add", "-q", "--detach", slowPath]);
    repo.write("dirty.txt", "x");
    const counter = installGitCounter(repo.dir.path, repo.env);
    // In front of the counter: a git whose status of the slow checkout takes a second.
    const bin = join(repo.dir.path, "slow-bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "git"),
      [
        "#!/bin/sh",
        `case "$1 $2 $3" in '-C ${slowPath} status') sleep 1;; esac`,
        `exec '${join(repo.dir.path, "counting-bin", "git")}' "$@"`,
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "git"), 0o755);
    const paths = [slowPath, ...Array.from({ length: 39 }, () => repo?.path as string)];
    const statuses = await withPath(`${bin}:${process.env.PATH ?? ""}`, () =>
      readWorktreeStatuses(paths, 3),
    );
    // Every result is in its own place: the slow checkout is clean, the main one has a change.
    expect(statuses[0]?.changedFiles).toBe(0);
    expect(statuses.slice(1).map((s) => s?.changedFiles)).toEqual(paths.slice(1).map(() => 1));
    const gits = counter.parents().filter(({ args }) => args[2] === "status");
    expect(gits).toHaveLength(40);
    // Each git's parent is a lane (a subshell), and the three lanes belong to one sh.
    expect(new Set(gits.map(({ parent }) => parent)).size).toBe(3);
    expect(new Set(gits.map(({ grandparent }) => grandparent)).size).toBe(1);
    expect(gits[0]?.grandparentCommand).toBe("sh");
    // Shares fixed in advance would give the slow lane 14 of the 40; fed as they finish,
    // the other two lanes read the rest while it waits.
    const slowLane = gits.find(({ args }) => args[1] === slowPath)?.parent;
    const readBySlowLane = gits.filter(({ parent }) => parent === slowLane).length;
    expect(readBySlowLane).toBeLessThan(10);
  });

  it("yields null for a checkout git cannot read, and the others' statuses in their places", async () => {
    repo = makeRepo();
    repo.write("dirty.txt", "x");
    const missing = join(repo.dir.path, "no-such-checkout");
    const paths = Array.from({ length: 12 }, (_, i) =>
      i % 5 === 2 ? missing : (repo?.path as string),
    );
    const statuses = await readWorktreeStatuses(paths, 3);
    expect(statuses.map((s) => (s === null ? null : s.changedFiles))).toEqual(
      paths.map((path) => (path === missing ? null : 1)),
    );
  });

  it("runs more lanes than one sh can hold under as many sh as they need", async () => {
    repo = makeRepo();
    repo.write("dirty.txt", "x");
    const counter = installGitCounter(repo.dir.path, repo.env);
    const paths = Array.from({ length: 30 }, () => repo?.path as string);
    const statuses = await withPath(counter.env.PATH ?? "", () => readWorktreeStatuses(paths, 9));
    expect(statuses.map((s) => s?.changedFiles)).toEqual(paths.map(() => 1));
    const gits = counter.parents().filter(({ args }) => args[2] === "status");
    expect(gits).toHaveLength(30);
    // Seven lanes under one sh, two under another, and every lane has a share.
    expect(new Set(gits.map(({ grandparent }) => grandparent)).size).toBe(2);
    expect(new Set(gits.map(({ parent }) => parent)).size).toBe(9);
  });
});
