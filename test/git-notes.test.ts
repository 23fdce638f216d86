import { afterEach, describe, expect, it } from "vitest";
import { grepNotes, readNote, readNotes } from "../src/git/notes.js";
import { installFakeGpg } from "./helpers/fake-gpg.js";
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

describe("notes, whatever the user's log and grep settings", () => {
  it("reads a signed commit's note with log.showSignature, and greps plain lines with color, line numbers and columns on", async () => {
    repo = makeRepo();
    const r = repo;
    const gpg = installFakeGpg(r.dir.path);
    r.git(["config", "gpg.program", gpg]);
    r.git(["config", "user.signingKey", "fake"]);
    r.write("signed.txt", "signed\n");
    r.git(["add", "signed.txt"]);
    r.git(["commit", "-q", "-S", "-m", "signed"]);
    const signed = r.git(["rev-parse", "HEAD"]);
    const ref = "refs/notes/berth-landings";
    r.git(["notes", `--ref=${ref}`, "add", "-m", '{"branch":"berth/x"}', signed]);
    for (const [key, value] of [
      ["log.showSignature", "true"],
      ["color.ui", "always"],
      ["grep.lineNumber", "true"],
      ["grep.column", "true"],
    ]) {
      r.git(["config", key as string, value as string]);
    }
    expect(r.git(["log", "-1", "--format=%H", signed])).toContain("Good signature");
    expect((await readNotes(r.path, ref, [signed])).get(signed)).toBe('{"branch":"berth/x"}\n');
    expect(await grepNotes(r.path, ref, '"berth/x"')).toEqual(['{"branch":"berth/x"}']);
  });
});
