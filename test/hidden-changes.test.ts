import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseIndexFlags, readHiddenChanges, revealCommand } from "../src/git/hidden-changes.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

/**
 * Edits git is told not to look at (`update-index --assume-unchanged` or
 * `--skip-worktree`): `git status` hides them, so berth finds them itself.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const OID = "78981922613b2afb6025042ff6bd878ac1994e85";

describe("parseIndexFlags (captured `git ls-files -v -s -z`)", () => {
  it("keeps only stage-0 entries git is told not to look at, with their flags and index oids", () => {
    const out = [
      `h 100644 ${OID} 0\tassumed.txt`,
      `S 100755 ${OID} 0\tsparse dir/run.sh`,
      `s 100644 ${OID} 0\tboth.txt`,
      `H 100644 ${OID} 0\tplain.txt`,
      `M 100644 ${OID} 2\tconflicted.txt`,
      "",
    ].join("\0");
    expect(parseIndexFlags(out)).toEqual([
      {
        path: "assumed.txt",
        mode: "100644",
        oid: OID,
        assumeUnchanged: true,
        skipWorktree: false,
      },
      {
        path: "sparse dir/run.sh",
        mode: "100755",
        oid: OID,
        assumeUnchanged: false,
        skipWorktree: true,
      },
      { path: "both.txt", mode: "100644", oid: OID, assumeUnchanged: true, skipWorktree: true },
    ]);
    expect(parseIndexFlags("")).toEqual([]);
  });
});

describe("readHiddenChanges", () => {
  it("names flagged files whose content differs from the index; an unedited flagged file and a sparse (absent) skip-worktree file are not changes", async () => {
    repo = makeRepo();
    const r = repo;
    for (const name of ["edited-au", "same-au", "edited-sw", "sparse-sw", "gone-au", "plain"]) {
      r.write(`${name}.txt`, `${name}\n`);
    }
    r.commit("files");
    for (const name of ["edited-au", "same-au", "gone-au"]) {
      r.git(["update-index", "--assume-unchanged", `${name}.txt`]);
    }
    for (const name of ["edited-sw", "sparse-sw"]) {
      r.git(["update-index", "--skip-worktree", `${name}.txt`]);
    }
    r.write("edited-au.txt", "my local edit\n");
    r.write("edited-sw.txt", "another local edit\n");
    rmSync(join(r.path, "sparse-sw.txt"));
    rmSync(join(r.path, "gone-au.txt"));
    // Rewritten with the same bytes: still the index's content.
    writeFileSync(join(r.path, "same-au.txt"), "same-au\n");
    // git status sees none of it: that is the bug this guards against.
    expect(r.git(["status", "--porcelain"])).toBe("");

    expect(await readHiddenChanges(r.path)).toEqual([
      { path: "edited-au.txt", assumeUnchanged: true, skipWorktree: false },
      { path: "edited-sw.txt", assumeUnchanged: false, skipWorktree: true },
      { path: "gone-au.txt", assumeUnchanged: true, skipWorktree: false },
    ]);
  });

  it("compares through the checkout's filters: a CRLF working copy of an LF blob under text=auto is unedited", async () => {
    repo = makeRepo();
    const r = repo;
    r.write(".gitattributes", "*.txt text=auto eol=crlf\n");
    r.write("config.txt", "line one\nline two\n");
    r.commit("crlf");
    r.git(["update-index", "--assume-unchanged", "config.txt"]);
    r.write("config.txt", "line one\r\nline two\r\n");
    expect(await readHiddenChanges(r.path)).toEqual([]);
    r.write("config.txt", "line one\r\nline 2\r\n");
    expect(await readHiddenChanges(r.path)).toEqual([
      { path: "config.txt", assumeUnchanged: true, skipWorktree: false },
    ]);
  });

  it("hashes paths git's --stdin-paths would misread (a leading quote, a newline, a trailing CR) as they are", async () => {
    repo = makeRepo();
    const r = repo;
    const odd = ['"quoted".txt', "two\nlines.txt", "cr\r"];
    for (const name of odd) r.write(name, `${name}\n`);
    r.commit("odd names");
    for (const name of odd) r.git(["update-index", "--assume-unchanged", "--", name]);
    expect(await readHiddenChanges(r.path)).toEqual([]);
    r.write("two\nlines.txt", "edited\n");
    expect(await readHiddenChanges(r.path)).toEqual([
      { path: "two\nlines.txt", assumeUnchanged: true, skipWorktree: false },
    ]);
  });

  it("the fix clears each flag with its own update-index (git applies only the last flag of one call), shell-quoted", () => {
    const fix = revealCommand("/tmp/my berth", [
      { path: "a b.txt", assumeUnchanged: true, skipWorktree: false },
      { path: "c.txt", assumeUnchanged: true, skipWorktree: true },
    ]);
    expect(fix).toBe(
      "git -C '/tmp/my berth' update-index --no-assume-unchanged -- 'a b.txt' c.txt && " +
        "git -C '/tmp/my berth' update-index --no-skip-worktree -- c.txt",
    );
  });
});
