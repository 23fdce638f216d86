import { describe, expect, it } from "vitest";
import {
  parseRefs,
  parseRevListParents,
  parseStatusPorcelainV2,
  parseWorktreeList,
} from "../src/git/parse.js";
import { refusedPush } from "../src/git/remote.js";

const A = "a".repeat(40);
const B = "b".repeat(40);

describe("parseWorktreeList", () => {
  it("reads main, linked, detached, locked and prunable entries", () => {
    const out = [
      `worktree /r\0HEAD ${A}\0branch refs/heads/main\0\0`,
      `worktree /r.worktrees/x\0HEAD ${B}\0branch refs/heads/berth/x\0locked busy agent\0\0`,
      `worktree /r.worktrees/d\0HEAD ${A}\0detached\0prunable gitdir file points to non-existent location\0\0`,
    ].join("");
    const entries = parseWorktreeList(out);
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatchObject({ path: "/r", head: A, branch: "main", locked: false });
    expect(entries[1]).toMatchObject({ branch: "berth/x", locked: true, lockReason: "busy agent" });
    expect(entries[2]).toMatchObject({ detached: true, branch: null, prunable: true });
  });

  it("treats an all-zero HEAD (no commit yet) as null", () => {
    const [entry] = parseWorktreeList(
      `worktree /r\0HEAD ${"0".repeat(40)}\0branch refs/heads/main\0\0`,
    );
    expect(entry?.head).toBeNull();
  });

  it("keeps paths with spaces and newlines intact", () => {
    const [entry] = parseWorktreeList(`worktree /tmp/a b\nc\0HEAD ${A}\0detached\0\0`);
    expect(entry?.path).toBe("/tmp/a b\nc");
  });
});

describe("parseStatusPorcelainV2", () => {
  it("counts modified, renamed, unmerged and untracked entries", () => {
    const out = [
      "1 .M N... 100644 100644 100644 abc abc src/a file.ts",
      "2 R. N... 100644 100644 100644 abc abc R100 new.ts",
      "old.ts",
      "u UU N... 100644 100644 100644 100644 abc abc abc both.ts",
      "? notes.txt",
      "",
    ].join("\0");
    const summary = parseStatusPorcelainV2(out);
    expect(summary.changedFiles).toBe(4);
    expect(summary.untrackedFiles).toBe(1);
    expect(summary.trackedChanges).toBe(3);
    expect(summary.paths).toEqual(["src/a file.ts", "new.ts", "both.ts", "notes.txt"]);
  });

  it("counts a submodule with changes inside as a tracked change, one with only untracked files inside as untracked", () => {
    const gitlink =
      "160000 160000 160000 eda642ddd7491b091a35005c7fcc9c0c1f82a003 eda642ddd7491b091a35005c7fcc9c0c1f82a003";
    const out = [
      `1 .M S.M. ${gitlink} lib`,
      `1 .M S..U ${gitlink} vendor/other`,
      `1 .M SC.. ${gitlink} moved`,
      "? notes.txt",
      "",
    ].join("\0");
    expect(parseStatusPorcelainV2(out)).toEqual({
      changedFiles: 4,
      untrackedFiles: 2,
      trackedChanges: 2,
      paths: ["lib", "moved", "vendor/other", "notes.txt"],
    });
  });

  it("reports a clean tree as zero", () => {
    expect(parseStatusPorcelainV2("").changedFiles).toBe(0);
  });
});

describe("parseRefs", () => {
  it("reads refs, symrefs and peeled tags", () => {
    const out = `refs/heads/main\0${A}\0\0\0${B}\nrefs/remotes/origin/HEAD\0${A}\0refs/remotes/origin/main\0\nrefs/tags/v1\0${B}\0\0${A}\n`;
    expect(parseRefs(out)).toEqual([
      { ref: "refs/heads/main", oid: A, symref: null, peeled: null, tree: B },
      {
        ref: "refs/remotes/origin/HEAD",
        oid: A,
        symref: "refs/remotes/origin/main",
        peeled: null,
        tree: null,
      },
      { ref: "refs/tags/v1", oid: B, symref: null, peeled: A, tree: null },
    ]);
  });
});

describe("parseRevListParents", () => {
  it("maps commits to their parents", () => {
    const graph = parseRevListParents(`${A} ${B}\n${B}\n`);
    expect(graph.get(A)).toEqual([B]);
    expect(graph.get(B)).toEqual([]);
  });
});

describe("splitLaneOutput", () => {
  it("splits framed status outputs and marks failures", async () => {
    const { splitLaneOutput } = await import("../src/git/status.js");
    const n = "berth-nonce";
    const stream = `? a\0\0${n} 0\0\0${n} 0\0partial\0${n} 128\0`;
    expect(splitLaneOutput(stream, n, 4)).toEqual(["? a\0", "", null, null]);
  });
});

describe("parseDiffTreeStdin", () => {
  it("groups raw changes under each commit, paths kept whole", async () => {
    const { parseDiffTreeStdin } = await import("../src/git/diff-tree.js");
    const Z = "0".repeat(40);
    const out =
      `${A}\0:100644 100644 ${B} ${A} M\0a dir/f\0:000000 100755 ${Z} ${B} A\0${A}\0` +
      `${B}\0:100644 000000 ${A} ${Z} D\0gone\0`;
    const parsed = parseDiffTreeStdin(out);
    expect(parsed.get(A)).toEqual([
      { status: "M", oldMode: "100644", newMode: "100644", oldOid: B, newOid: A, path: "a dir/f" },
      { status: "A", oldMode: "000000", newMode: "100755", oldOid: Z, newOid: B, path: A },
    ]);
    expect(parsed.get(B)).toEqual([
      { status: "D", oldMode: "100644", newMode: "000000", oldOid: A, newOid: Z, path: "gone" },
    ]);
  });
});

describe("refusedPush", () => {
  // Captured from git 2.x `push --porcelain --force-with-lease` against a bare repository.
  const done = "To /tmp/r.git\n";
  it("a stale lease is git's own refusal: the remote moved", () => {
    const out = `${done}!\tHEAD:refs/heads/main\t[rejected] (stale info)\nDone\n`;
    expect(refusedPush(out, "error: failed to push some refs to '/tmp/r.git'\n")).toEqual({
      fate: "rejected",
      message: "[rejected] (stale info)",
    });
  });

  it("the remote's own compare-and-swap losing to a concurrent push: rejected (the trunk move asks whether it moved), in the remote's words", () => {
    const out = `${done}!\tHEAD:refs/heads/x\t[remote rejected] (failed to update ref)\nDone\n`;
    const err = "remote: error: cannot lock ref 'refs/heads/x': reference already exists        \n";
    expect(refusedPush(out, err)).toEqual({
      fate: "rejected",
      message:
        "[remote rejected] (failed to update ref): error: cannot lock ref 'refs/heads/x': reference already exists",
    });
  });

  it("a hook's refusal is the remote declining, in its own words", () => {
    const out = `${done}!\tHEAD:refs/heads/main\t[remote rejected] (pre-receive hook declined)\nDone\n`;
    const err =
      "remote: protected branch: pushes to main need a review        \nremote: \nerror: failed to push some refs to '/tmp/r.git'\n";
    expect(refusedPush(out, err)).toEqual({
      fate: "declined",
      message:
        "[remote rejected] (pre-receive hook declined): protected branch: pushes to main need a review",
    });
  });

  it("no refused ref: not a refusal", () => {
    expect(refusedPush(`${done}=\tHEAD:refs/heads/main\t[up to date]\nDone\n`, "")).toBeNull();
  });
});
