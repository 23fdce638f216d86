import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseIndexFlags, readHiddenChanges, revealCommand } from "../src/git/hidden-changes.js";
import {
  makeRepo,
  makeSubmoduleOrigin,
  makeTempDir,
  repoAt,
  submodule,
  type TestRepo,
} from "./helpers/repo.js";

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

  for (const format of ["sha1", "sha256"]) {
    it(`a flagged symlink is compared by its target (${format}): retargeted, or replaced by a file or folder, it is a change`, async () => {
      const dir = makeTempDir();
      const path = join(dir.path, "repo");
      execFileSync("git", ["init", "-q", "-b", "main", `--object-format=${format}`, path], {
        env: dir.env,
      });
      repo = repoAt(path, dir);
      const r = repo;
      r.write("target.txt", "t\n");
      for (const name of ["same", "retargeted", "filed", "foldered", "gone-au", "sparse-sw"]) {
        symlinkSync("target.txt", join(r.path, name));
      }
      r.commit("links");
      for (const name of ["same", "retargeted", "filed", "foldered", "gone-au"]) {
        r.git(["update-index", "--assume-unchanged", name]);
      }
      r.git(["update-index", "--skip-worktree", "sparse-sw"]);
      rmSync(join(r.path, "retargeted"));
      symlinkSync("elsewhere.txt", join(r.path, "retargeted"));
      rmSync(join(r.path, "filed"));
      writeFileSync(join(r.path, "filed"), "a file now\n");
      rmSync(join(r.path, "foldered"));
      mkdirSync(join(r.path, "foldered"));
      writeFileSync(join(r.path, "foldered", "inside.txt"), "work\n");
      rmSync(join(r.path, "gone-au"));
      rmSync(join(r.path, "sparse-sw"));
      // git status sees none of it.
      expect(r.git(["status", "--porcelain", "--untracked-files=no"])).toBe("");

      expect(await readHiddenChanges(r.path)).toEqual([
        { path: "filed", assumeUnchanged: true, skipWorktree: false },
        { path: "foldered", assumeUnchanged: true, skipWorktree: false },
        { path: "gone-au", assumeUnchanged: true, skipWorktree: false },
        { path: "retargeted", assumeUnchanged: true, skipWorktree: false },
      ]);
    });
  }

  it("a flagged submodule is read by its own status: an edit, an untracked file or a moved HEAD inside is a change; clean or unpopulated, none", async () => {
    repo = makeRepo();
    const r = repo;
    const source = makeSubmoduleOrigin(r, "source");
    for (const name of ["edited", "untracked", "moved", "clean", "unpopulated"]) {
      submodule(r, ["add", "-q", source, name]);
    }
    r.commit("submodules");
    for (const name of ["edited", "untracked", "moved", "clean", "unpopulated"]) {
      r.git(["update-index", "--assume-unchanged", name]);
    }
    r.write("f.txt", "my edit inside\n", join(r.path, "edited"));
    r.write("new.txt", "new\n", join(r.path, "untracked"));
    r.write("f.txt", "committed inside\n", join(r.path, "moved"));
    r.commit("inside", join(r.path, "moved"));
    r.git(["submodule", "deinit", "-q", "--force", "unpopulated"]);
    // git status skips flagged submodules whole: that is the bug this guards against.
    expect(r.git(["status", "--porcelain", "--ignore-submodules=none"])).toBe("");

    expect(await readHiddenChanges(r.path)).toEqual([
      { path: "edited", assumeUnchanged: true, skipWorktree: false },
      { path: "moved", assumeUnchanged: true, skipWorktree: false },
      { path: "untracked", assumeUnchanged: true, skipWorktree: false },
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
