import { describe, expect, it } from "vitest";
import { findOverlaps } from "../src/core/fleet/overlaps.js";
import { type ChangedCommit, parseChangedCommits } from "../src/git/changed-files.js";
import { naturalCompare } from "../src/text.js";

/**
 * The overlap rule on constructed histories (the one git process is proved in
 * test/supervise.e2e.test.ts): independent changes to one file overlap, a
 * train's shared commits and a shared fork stage never do.
 */

const oid = (n: number) => n.toString(16).padStart(40, "0");
const commit = (n: number, parents: number[], paths: string[]): ChangedCommit => ({
  oid: oid(n),
  parents: parents.map(oid),
  paths,
});
const berth = (id: string, tip: number) => ({ id, branch: `berth/${id}`, tip: oid(tip) });

describe("parseChangedCommits", () => {
  it("reads commits, parents and paths from git log -z --name-only --format=%x00%H %P", () => {
    const output = [
      `\0${oid(3)} ${oid(2)}\0`,
      `\0${oid(2)} ${oid(1)} ${oid(9)}\0`,
      `\n${"src/a.ts"}\0sp ace.txt\0`,
      `\0${oid(1)} ${oid(0)}\0`,
      "\n\nstarts with a newline\0",
    ].join("");
    expect(parseChangedCommits(output)).toEqual([
      { oid: oid(3), parents: [oid(2)], paths: [] },
      { oid: oid(2), parents: [oid(1), oid(9)], paths: ["src/a.ts", "sp ace.txt"] },
      { oid: oid(1), parents: [oid(0)], paths: ["\nstarts with a newline"] },
    ]);
    expect(parseChangedCommits("")).toEqual([]);
  });
});

describe("findOverlaps", () => {
  it("two berths editing src/a.ts independently: one group naming both and the file", () => {
    const commits = [
      commit(1, [100], ["src/a.ts", "src/only-a.ts"]),
      commit(2, [100], ["src/a.ts", "docs/b.md"]),
    ];
    expect(findOverlaps([berth("b-2", 2), berth("a-1", 1)], commits)).toEqual([
      { berths: ["a-1", "b-2"], branches: ["berth/a-1", "berth/b-2"], files: ["src/a.ts"] },
    ]);
  });

  it("never between the stages of a train, nor between two forks of one stage", () => {
    // s (1) changes f; a (2) and b (3) fork from s and change other files; t (4) is s's next stage.
    const commits = [
      commit(1, [100], ["f.ts"]),
      commit(2, [1], ["a.ts"]),
      commit(3, [1], ["b.ts"]),
      commit(4, [1], ["f.ts"]),
    ];
    expect(
      findOverlaps([berth("s", 1), berth("a", 2), berth("b", 3)], commits.slice(0, 3)),
    ).toEqual([]);
    // t changes f again: its own commit against a's and b's shared one is not theirs alone.
    expect(findOverlaps([berth("t", 4), berth("a", 2)], commits)).toEqual([]);
  });

  it("groups berths by the files they share; merges of the trunk bring no files", () => {
    const commits = [
      commit(1, [100], ["x.ts", "y.ts"]),
      commit(2, [100], ["x.ts", "y.ts"]),
      commit(3, [100], ["y.ts"]),
      // c merged the trunk: the merge lists no paths, its trunk side is outside the set.
      commit(4, [3, 200], []),
    ];
    expect(findOverlaps([berth("a", 1), berth("b", 2), berth("c", 4)], commits)).toEqual([
      { berths: ["a", "b"], branches: ["berth/a", "berth/b"], files: ["x.ts"] },
      { berths: ["a", "b", "c"], branches: ["berth/a", "berth/b", "berth/c"], files: ["y.ts"] },
    ]);
  });

  it("a berth alone, or none, overlaps nothing", () => {
    const commits = [commit(1, [100], ["x.ts"])];
    expect(findOverlaps([berth("a", 1)], commits)).toEqual([]);
    expect(findOverlaps([], [])).toEqual([]);
  });
});

describe("naturalCompare", () => {
  it("orders digit runs by value, the rest by code unit, deterministically", () => {
    const names = ["bulk-10", "bulk-2", "bulk-1", "bulk-02x", "alpha", "bulk-100", "Bulk-3"];
    expect([...names].sort(naturalCompare)).toEqual([
      "Bulk-3",
      "alpha",
      "bulk-1",
      "bulk-2",
      "bulk-02x",
      "bulk-10",
      "bulk-100",
    ]);
    expect(naturalCompare("a-99999999999999999999", "a-100000000000000000000")).toBeLessThan(0);
    expect(naturalCompare("same", "same")).toBe(0);
  });
});
