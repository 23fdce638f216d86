import { describe, expect, it } from "vitest";
import { landedQuestion } from "../src/core/fleet/landed.js";
import { refFiles, refWatchFolders } from "../src/core/fleet/ref-watch.js";

/** The one ref-watching module and the landed rule's fact steps, on plain values. */

describe("refWatchFolders", () => {
  it("watches refs/heads, each named branch's folder, packed refs, reftable and a berth's folder", () => {
    const folders = refWatchFolders("/r/.git", {
      branches: ["release/main", "berth/team/x-1", "main"],
      berths: ["/r/.git/worktrees/x-1"],
    });
    expect(folders.map((f) => f.path)).toEqual([
      "/r/.git/refs/heads",
      "/r/.git/refs/heads/release",
      "/r/.git/refs/heads/berth/team",
      "/r/.git",
      "/r/.git/reftable",
      "/r/.git/worktrees/x-1/berth",
    ]);
    const common = folders.find((f) => f.path === "/r/.git");
    expect(common?.accepts?.("packed-refs.lock")).toBe(true);
    expect(common?.accepts?.("HEAD")).toBe(false);
  });

  it("watches registrations only when asked", () => {
    const paths = (registrations: boolean) =>
      refWatchFolders("/r/.git", { registrations }).map((f) => f.path);
    expect(paths(true)).toContain("/r/.git/worktrees");
    expect(paths(false)).not.toContain("/r/.git/worktrees");
  });

  it("names every file a branch's value can be read from", () => {
    expect(refFiles("/r/.git", ["main", "berth/x"])).toEqual([
      "/r/.git/refs/heads/main",
      "/r/.git/refs/heads/berth/x",
      "/r/.git/packed-refs",
      "/r/.git/reftable/tables.list",
    ]);
  });
});

describe("landedQuestion", () => {
  const trunk = { name: "main", tip: "t".repeat(40) };
  const tip = "a".repeat(40);

  it("asks whether the tip is on the trunk tip", () => {
    expect(landedQuestion(tip, "f".repeat(40), "berth/x", trunk)).toEqual({
      tip,
      trunkTip: trunk.tip,
    });
  });

  it("answers not landed from the facts: no tip, no trunk, the trunk itself, a fresh fork", () => {
    expect(landedQuestion(null, null, "berth/x", trunk)).toBeNull();
    expect(landedQuestion(tip, null, "berth/x", { name: "main", tip: null })).toBeNull();
    expect(landedQuestion(tip, null, "main", trunk)).toBeNull();
    expect(landedQuestion(tip, tip, "berth/x", trunk)).toBeNull();
  });
});
