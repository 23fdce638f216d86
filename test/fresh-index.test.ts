import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SETTLE_MIN_ENTRIES } from "../src/core/lifecycle/settle-index.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A repository tracking `files` small files in ten folders. */
function repoWithFiles(files: number): TestRepo {
  const r = makeRepo();
  for (let d = 0; d < 10; d++) mkdirSync(join(r.path, `dir${d}`));
  for (let i = 0; i < files; i++) {
    writeFileSync(join(r.path, `dir${i % 10}`, `f${i}.txt`), `file ${i}\n`);
  }
  r.commit("many files");
  return r;
}

/** The index file's identity: a write changes its mtime (nanoseconds) or size. */
function indexStamp(adminDir: string): string {
  const st = statSync(join(adminDir, "index"), { bigint: true });
  return `${st.mtimeNs}:${st.size}`;
}

describe("a freshly started berth's index", () => {
  it("is settled by start, so git finds nothing to refresh on the first status", async () => {
    repo = repoWithFiles(SETTLE_MIN_ENTRIES + 100);
    const r = repo;
    const { ctx } = testContext(r.path, r.env);
    const started = await startBerth(ctx, { name: "settled" });
    const path = started.data?.path as string;
    const adminDir = r.git(["rev-parse", "--absolute-git-dir"], path);
    const before = indexStamp(adminDir);
    // A plain `git status` writes the index back whenever an entry is racily
    // clean (or stale): an untouched index means it found nothing to re-hash,
    // so berth's read-only surveys of this berth re-hash nothing either.
    r.git(["status", "--porcelain"], path);
    expect(indexStamp(adminDir)).toBe(before);
    expect(r.git(["status", "--porcelain"], path)).toBe("");
  });

  it("would otherwise be re-read: a checkout git just wrote is rewritten by its first status", () => {
    repo = repoWithFiles(SETTLE_MIN_ENTRIES + 100);
    const r = repo;
    const path = join(r.dir.path, "plain");
    r.git(["worktree", "add", "-q", "-b", "plain", path]);
    const adminDir = r.git(["rev-parse", "--absolute-git-dir"], path);
    const before = indexStamp(adminDir);
    r.git(["status", "--porcelain"], path);
    expect(indexStamp(adminDir)).not.toBe(before);
  });
});
