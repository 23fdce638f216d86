import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discoverRepo } from "../src/git/repo.js";
import { readAdminKeys } from "../src/io/admin-dirs.js";
import { guessCheckout } from "../src/io/checkout-guess.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("guessCheckout (io/checkout-guess.ts)", () => {
  it("finds what rev-parse finds, from the main checkout, a subfolder, a linked worktree and through a symlink", async () => {
    repo = makeRepo();
    const linked = join(repo.dir.path, "linked");
    repo.git(["worktree", "add", "-q", "-b", "side", linked]);
    mkdirSync(join(repo.path, "sub", "deeper"), { recursive: true });
    mkdirSync(join(linked, "inner"));
    const alias = join(repo.dir.path, "alias");
    symlinkSync(repo.path, alias);
    for (const [cwd, isLinked] of [
      [repo.path, false],
      [join(repo.path, "sub", "deeper"), false],
      [linked, true],
      [join(linked, "inner"), true],
      [alias, false],
    ] as const) {
      const found = await discoverRepo(cwd);
      expect(guessCheckout(cwd), cwd).toEqual({
        toplevel: found.toplevel,
        commonDir: found.commonDir,
        linked: isLinked,
      });
    }
  });

  it("makes no guess where git's discovery could go elsewhere: a discovery variable set, inside a git dir, outside any repository", () => {
    repo = makeRepo();
    expect(guessCheckout(repo.path, { GIT_DIR: join(repo.path, ".git") })).toBeNull();
    expect(guessCheckout(repo.path, { GIT_CEILING_DIRECTORIES: repo.dir.path })).toBeNull();
    expect(guessCheckout(join(repo.path, ".git", "refs"))).toBeNull();
    const outside = join(repo.dir.path, "plain");
    mkdirSync(outside);
    expect(guessCheckout(outside)).toBeNull();
    expect(guessCheckout(join(repo.dir.path, "no-such-folder"))).toBeNull();
  });
});

describe("readAdminKeys", () => {
  it("maps each linked checkout to its admin key, whether git wrote its gitdir absolute or relative", () => {
    repo = makeRepo();
    const linked = join(repo.dir.path, "linked");
    repo.git(["worktree", "add", "-q", "-b", "side", linked]);
    const common = join(repo.path, ".git");
    expect(readAdminKeys(common)).toEqual(new Map([[linked, "linked"]]));
    // As worktree.useRelativePaths (git 2.48) writes it: relative to the admin dir.
    writeFileSync(join(common, "worktrees", "linked", "gitdir"), "../../../../linked/.git\n");
    expect(readAdminKeys(common)).toEqual(new Map([[linked, "linked"]]));
  });
});
