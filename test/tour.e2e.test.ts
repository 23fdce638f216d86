import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { makeTempDir, runBerth } from "./helpers/repo.js";

describe("berth tour", () => {
  it("runs the real verbs on a throwaway repository and removes it", async () => {
    const dir = makeTempDir();
    try {
      // Outside any repository: the tour needs none.
      const run = await runBerth(["tour", "--json"], {
        cwd: dir.path,
        env: { ...dir.env, GIT_CEILING_DIRECTORIES: dir.path },
      });
      expect(run.code).toBe(0);
      const { folder, chapters, removed } = run.json.data;
      expect(removed).toBe(true);
      expect(existsSync(folder)).toBe(false);
      const offer = chapters.find(
        (c: { title: string }) => c.title === "berth worktree prune --dry-run",
      );
      expect(offer.prune.sections.contained).toHaveLength(2);
      const reclaim = chapters.find(
        (c: { title: string }) => c.title === "berth worktree prune --contained --yes",
      );
      expect(reclaim.prune.applied.map((a: { section: string }) => a.section)).toEqual([
        "contained",
        "contained",
      ]);
      const after = chapters.filter((c: { kind: string }) => c.kind === "status").at(-1);
      expect(after.status.refs.map((r: { abandoned: boolean }) => r.abandoned)).toEqual([
        false,
        false,
      ]);
      const human = await runBerth(["tour"], { cwd: dir.path, env: dir.env });
      expect(human.code).toBe(0);
      expect(human.stdout).toContain("$ berth worktree prune --contained --yes");
    } finally {
      dir.cleanup();
    }
  });
});
