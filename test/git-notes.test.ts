import { afterEach, describe, expect, it } from "vitest";
import { readNote, readNotes } from "../src/git/notes.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

/**
 * readNotes: many commits' notes under one ref in one git process, the same
 * answers readNote gives one at a time.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("readNotes", () => {
  it("answers as readNote does for each commit: only that ref's notes, multi-line and non-ASCII kept, null without one", async () => {
    repo = makeRepo();
    const r = repo;
    const ref = "refs/notes/remotes/origin/berth";
    const first = r.git(["rev-parse", "HEAD"]);
    const second = r.commit("second");
    const bare = r.commit("no note");
    r.git(["notes", `--ref=${ref}`, "add", "-m", '{"check":"café"}', first]);
    r.git(["notes", `--ref=${ref}`, "add", "-m", "line one\nline two", second]);
    // Notes under another ref (the default one a user's config shows) are not this ref's.
    r.git(["notes", "add", "-m", "the default ref's note", bare]);
    r.git(["notes", "add", "-m", "the default ref's note", first]);

    const commits = [bare, first, second, first];
    const batch = await readNotes(r.path, ref, commits);
    expect([...batch.keys()].sort()).toEqual([bare, first, second].sort());
    for (const commit of commits) {
      expect(batch.get(commit), commit).toBe(await readNote(r.path, ref, commit));
    }
    expect(batch.get(first)).toBe('{"check":"café"}\n');
    expect(batch.get(bare)).toBeNull();
    expect(await readNotes(r.path, ref, [])).toEqual(new Map());
  });
});
