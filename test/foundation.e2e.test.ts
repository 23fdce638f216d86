import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, makeTempDir, runBerth, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const berth = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => runBerth(args, { cwd, env });

describe("berth start", () => {
  it("forks from the trunk by name even when the main checkout is parked on another branch", async () => {
    repo = makeRepo();
    const trunkTip = repo.git(["rev-parse", "main"]);
    repo.git(["checkout", "-q", "-b", "side"]);
    const sideTip = repo.commit("side work");
    expect(sideTip).not.toBe(trunkTip);

    const run = await berth(["start", "feat", "--json"], repo.path, repo.env);
    expect(run.code).toBe(0);
    expect(() => JSON.parse(run.stdout)).not.toThrow();
    const { ok, data } = run.json;
    expect(ok).toBe(true);
    expect(Object.keys(data)).toEqual(
      expect.arrayContaining(["id", "branch", "path", "port", "from", "from_tip"]),
    );
    expect(data.id).toMatch(/^feat-[0-9a-f]{6}$/);
    expect(data.branch).toBe(`berth/${data.id}`);
    expect(data.path).toBe(join(repo.dir.path, "repo.worktrees", data.id));
    expect(data.from).toBe("main");
    expect(data.from_tip).toBe(trunkTip);
    expect(existsSync(data.path)).toBe(true);
    expect(repo.git(["rev-parse", "--abbrev-ref", "HEAD"], data.path)).toBe(data.branch);
    expect(repo.git(["rev-parse", "HEAD"], data.path)).toBe(trunkTip);
    expect(repo.git(["rev-parse", "HEAD"])).toBe(sideTip);
  });

  it("normalises names, reports it, and gives two berths for the same name", async () => {
    repo = makeRepo();
    const first = await berth(["start", "Fix: upload/retry!!", "--json"], repo.path, repo.env);
    const second = await berth(["start", "Fix: upload/retry!!"], repo.path, repo.env);
    expect(first.json.data.id).toMatch(/^fix-upload-retry-[0-9a-f]{6}$/);
    expect(first.json.data.name_note).toContain("fix-upload-retry");
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("fix-upload-retry");
    const secondPath = second.stdout.trim();
    expect(secondPath).not.toBe(first.json.data.path);
    expect(existsSync(secondPath)).toBe(true);
    const worktrees = repo.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm) ?? [];
    expect(worktrees).toHaveLength(3);
  });

  it("forks from a branch, a tag or a commit with --from", async () => {
    repo = makeRepo();
    repo.git(["checkout", "-q", "-b", "base"]);
    const baseTip = repo.commit("base work");
    repo.git(["tag", "v1", "HEAD~1"]);
    repo.git(["checkout", "-q", "main"]);
    const fromBranch = await berth(["start", "a", "--from", "base", "--json"], repo.path, repo.env);
    expect(fromBranch.json.data.from_tip).toBe(baseTip);
    const fromTag = await berth(["start", "b", "--from", "v1", "--json"], repo.path, repo.env);
    expect(fromTag.json.data.from_tip).toBe(repo.git(["rev-parse", "v1^{commit}"]));
    const fromCommit = await berth(
      ["start", "c", "--from", baseTip.slice(0, 10), "--json"],
      repo.path,
      repo.env,
    );
    expect(fromCommit.json.data.from_tip).toBe(baseTip);
    // A message search names the newest commit whose message matches.
    const fromMessage = await berth(
      ["start", "d", "--from", ":/base w", "--json"],
      repo.path,
      repo.env,
    );
    expect(fromMessage.json.data.from_tip).toBe(baseTip);
  });

  it("refuses an unknown --from and creates nothing", async () => {
    repo = makeRepo();
    const before = repo.git(["for-each-ref"]);
    const run = await berth(["start", "x", "--from", "nope", "--json"], repo.path, repo.env);
    expect(run.code).toBe(1);
    expect(run.json.ok).toBe(false);
    expect(run.json.error.code).toBe("unknown_target");
    expect(repo.git(["for-each-ref"])).toBe(before);
    expect(existsSync(join(repo.dir.path, "repo.worktrees"))).toBe(false);
  });

  it("refuses a name that is both a branch and a tag, listing both", async () => {
    repo = makeRepo();
    repo.git(["branch", "dup"]);
    repo.git(["tag", "dup"]);
    const before = repo.git(["for-each-ref"]);
    const run = await berth(["start", "x", "--from", "dup", "--json"], repo.path, repo.env);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("ambiguous_target");
    expect(run.json.error.message).toContain("refs/heads/dup");
    expect(run.json.error.message).toContain("refs/tags/dup");
    expect(repo.git(["for-each-ref"])).toBe(before);
  });

  it("a branch only a remote has: start and update name it as <remote>/<branch>, changing nothing", async () => {
    repo = makeRepo();
    const head = repo.git(["rev-parse", "HEAD"]);
    // As a fetch leaves it: origin's branch, no local one of that name.
    repo.git(["update-ref", "refs/remotes/origin/feature/x", head]);
    const before = repo.git(["for-each-ref"]);
    const run = await berth(["start", "y", "--from", "feature/x", "--json"], repo.path, repo.env);
    expect(run.code).toBe(1);
    expect(run.json.error).toMatchObject({
      code: "unknown_target",
      message:
        '"feature/x" is not a local branch, tag or commit; origin/feature/x is that branch as last fetched from origin: name it so.',
      next: "berth start --from origin/feature/x",
    });
    expect(repo.git(["for-each-ref"])).toBe(before);
    expect(existsSync(join(repo.dir.path, "repo.worktrees"))).toBe(false);

    const started = await berth(
      ["start", "y", "--from", "origin/feature/x", "--json"],
      repo.path,
      repo.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const update = await berth(
      ["update", "--from", "feature/x", "--json"],
      started.json.data.path,
      repo.env,
    );
    expect(update.code).toBe(1);
    expect(update.json.error.next).toBe("berth update --from origin/feature/x");
  });

  it("--from a berth id forks from that berth's branch (a train's next stage), and a remote one's id names <remote>/<branch>", async () => {
    repo = makeRepo();
    const one = await berth(["start", "one", "--json"], repo.path, repo.env);
    const { id, branch, path } = one.json.data;
    repo.write("one.txt", "1\n", path);
    const tip = repo.commit("one", path);
    const two = await berth(["start", "two", "--from", id, "--json"], repo.path, repo.env);
    expect(two.code, two.stderr).toBe(0);
    expect(two.json.data).toMatchObject({ from: id, from_tip: tip });
    expect(repo.git(["rev-parse", two.json.data.branch])).toBe(tip);
    // Only the remote has it (as a fetch leaves another machine's berth): named as there.
    repo.git(["update-ref", "refs/remotes/origin/berth/far-abc123", tip]);
    const before = repo.git(["for-each-ref"]);
    const far = await berth(["start", "x", "--from", "far-abc123", "--json"], repo.path, repo.env);
    expect(far.code).toBe(1);
    expect(far.json.error.next).toBe("berth start --from origin/berth/far-abc123");
    expect(repo.git(["for-each-ref"])).toBe(before);
    expect(branch).toBe(`berth/${id}`);
  });

  it("start and update --from a branch checked out with uncommitted changes say they stay behind; the trunk's main checkout never does", async () => {
    repo = makeRepo();
    const r = repo;
    const one = (await berth(["start", "one", "--json"], r.path, r.env)).json.data;
    r.write("one.txt", "1\n", one.path);
    const tip = r.commit("one", one.path);
    r.write("one.txt", "1, and more not committed\n", one.path);
    r.write("new.txt", "untracked\n", one.path);
    const two = await berth(["start", "two", "--from", one.id, "--json"], r.path, r.env);
    expect(two.code, two.stderr).toBe(0);
    expect(two.json.hints).toContain(
      `${one.branch} has 2 uncommitted change(s) at ${one.path} (one.txt, new.txt); ` +
        `the new berth starts from its last commit, ${tip.slice(0, 8)}, without them`,
    );
    expect(existsSync(join(two.json.data.path, "new.txt"))).toBe(false);
    // And update --from it, in the stage after it: the merge takes the commit alone.
    r.git(["add", "new.txt"], one.path);
    r.git(["commit", "-q", "-m", "new"], one.path);
    const next = r.git(["rev-parse", "HEAD"], one.path);
    const update = await berth(["update", "--from", one.id, "--json"], two.json.data.path, r.env);
    expect(update.code, update.stderr).toBe(0);
    expect(update.json.hints).toEqual([
      `${one.branch} has 1 uncommitted change(s) at ${one.path} (one.txt); ` +
        `the merge takes its last commit, ${next.slice(0, 8)}, without them`,
    ]);
    // Edits in the main checkout are not the trunk's either, but a start from the trunk is not --from.
    r.write("README.md", "edited in the main checkout\n");
    const three = await berth(["start", "three", "--json"], r.path, r.env);
    expect(three.json.hints.join("\n")).not.toContain("uncommitted");
  });

  it("refuses in a repository without commits, and without a trunk", async () => {
    repo = makeRepo({ empty: true });
    const empty = await berth(["start", "x", "--json"], repo.path, repo.env);
    expect(empty.code).toBe(1);
    expect(empty.json.error.code).toBe("precondition_failed");
    repo.commit("first");
    repo.git(["branch", "-m", "main", "work"]);
    const noTrunk = await berth(["start", "x", "--json"], repo.path, repo.env);
    expect(noTrunk.code).toBe(1);
    expect(noTrunk.json.error.code).toBe("precondition_failed");
    expect(noTrunk.json.error.message).toContain("--from");
    expect(noTrunk.json.error.next).toBe(`git -C ${repo.path} branch --list`);

    expect(repo.git(["branch", "--list"]).trim()).toBe("* work");
  });

  it("undoes the half-made berth when a step fails", async () => {
    repo = makeRepo();
    // A post-checkout hook that fails makes `git worktree add` fail after it created the branch.
    mkdirSync(join(repo.path, ".git", "hooks"), { recursive: true });
    const hook = join(repo.path, ".git", "hooks", "post-checkout");
    writeFileSync(hook, "#!/bin/sh\nexit 1\n");
    chmodSync(hook, 0o755);
    const before = repo.git(["for-each-ref"]);
    const run = await berth(["start", "x", "--json"], repo.path, repo.env);
    expect(run.code).toBe(1);
    expect(repo.git(["for-each-ref"])).toBe(before);
    expect(repo.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });

  it("--dry-run prints the plan and changes nothing", async () => {
    repo = makeRepo();
    const run = await berth(["start", "x", "--dry-run", "--json"], repo.path, repo.env);
    expect(run.code).toBe(0);
    expect(run.json.plan.steps.length).toBeGreaterThan(0);
    expect(existsSync(run.json.data.path)).toBe(false);
    expect(repo.git(["branch", "--list", "berth/*"])).toBe("");
  });
});

describe("berth status", () => {
  it("surveys the fleet from the main checkout without touching a dirty tree", async () => {
    repo = makeRepo();
    const a = (await berth(["start", "a", "--json"], repo.path, repo.env)).json.data;
    const b = (await berth(["start", "b", "--json"], repo.path, repo.env)).json.data;
    const dirtyFile = join(b.path, "notes.txt");
    writeFileSync(dirtyFile, "work in progress\n");
    const indexBefore = readFileSync(join(repo.path, ".git", "worktrees", b.id, "index"));

    const run = await berth(["status", "--json"], repo.path, repo.env);
    expect(run.code).toBe(0);
    const rows = run.json.data.worktrees;
    expect(rows).toHaveLength(3);
    expect(
      rows
        .filter((r: { is_current: boolean }) => r.is_current)
        .map((r: { is_main: boolean }) => r.is_main),
    ).toEqual([true]);
    const rowA = rows.find((r: { id: string }) => r.id === a.id);
    const rowB = rows.find((r: { id: string }) => r.id === b.id);
    expect(rowA).toMatchObject({
      clean: true,
      changed_files: 0,
      ahead: 0,
      behind: 0,
      port: a.port,
      state: "active",
    });
    expect(rowB).toMatchObject({
      clean: false,
      changed_files: 1,
      branch: b.branch,
      head: b.from_tip,
    });
    expect(readFileSync(dirtyFile, "utf8")).toBe("work in progress\n");
    expect(readFileSync(join(repo.path, ".git", "worktrees", b.id, "index"))).toEqual(indexBefore);
  });

  it("inside a berth shows that berth, and --all the fleet", async () => {
    repo = makeRepo();
    const a = (await berth(["start", "a", "--json"], repo.path, repo.env)).json.data;
    await berth(["start", "b"], repo.path, repo.env);
    const local = await berth(["status", "--json"], a.path, repo.env);
    expect(local.json.data.worktrees.map((r: { id: string }) => r.id)).toEqual([a.id]);
    expect(local.json.data.worktrees[0].is_current).toBe(true);
    const all = await berth(["status", "--all", "--json"], a.path, repo.env);
    expect(all.json.data.worktrees).toHaveLength(3);
  });

  it("reports ahead/behind against the trunk, and null when the trunk is missing", async () => {
    repo = makeRepo();
    const a = (await berth(["start", "a", "--json"], repo.path, repo.env)).json.data;
    repo.commit("a1", a.path);
    repo.commit("a2", a.path);
    repo.commit("trunk moves");
    const rows = (await berth(["status", "--json"], repo.path, repo.env)).json.data.worktrees;
    expect(rows.find((r: { id: string }) => r.id === a.id)).toMatchObject({ ahead: 2, behind: 1 });

    writeFileSync(join(repo.path, "berth.toml"), '[repository]\ntrunk = "gone"\n');
    const missing = (await berth(["status", "--json"], repo.path, repo.env)).json.data.worktrees;
    expect(missing.find((r: { id: string }) => r.id === a.id)).toMatchObject({
      ahead: null,
      behind: null,
    });
  });

  it("marks a registration whose folder is gone as prunable and an unreadable checkout as unreadable", async () => {
    repo = makeRepo();
    const a = (await berth(["start", "a", "--json"], repo.path, repo.env)).json.data;
    const b = (await berth(["start", "b", "--json"], repo.path, repo.env)).json.data;
    repo.git(["worktree", "list"]);
    // Hand-deleted folder.
    const { rmSync } = await import("node:fs");
    rmSync(a.path, { recursive: true, force: true });
    // A checkout whose .git file points nowhere git can read.
    writeFileSync(join(b.path, ".git"), "gitdir: /nonexistent/admin\n");
    const rows = (await berth(["status", "--json"], repo.path, repo.env)).json.data.worktrees;
    const rowA = rows.find((r: { id: string }) => r.id === a.id);
    const rowB = rows.find((r: { id: string }) => r.id === b.id);
    expect(rowA).toMatchObject({ prunable: true, state: "prunable", clean: null });
    expect(rowB).toMatchObject({
      readable: false,
      state: "unreadable",
      clean: null,
      changed_files: null,
      ahead: null,
    });
  });
});

describe("configuration and usage errors", () => {
  it("refuses a wrongly typed key naming its path", async () => {
    repo = makeRepo({ config: '[worktree]\nport_span = "x"\n' });
    const run = await berth(["status", "--json"], repo.path, repo.env);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("config_invalid");
    expect(run.json.error.message).toContain("worktree.port_span");
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it("refuses an unknown key the same way", async () => {
    repo = makeRepo({ config: "[worktree]\nprot_span = 10\n" });
    const run = await berth(["start", "x", "--json"], repo.path, repo.env);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("config_invalid");
    expect(run.json.error.message).toContain("worktree.prot_span");
  });

  it("refuses outside a repository with not_a_repository, for every verb", async () => {
    const dir = makeTempDir();
    try {
      for (const args of [["status"], ["start", "x"], ["init"]]) {
        const run = await berth([...args, "--json"], dir.path, {
          ...dir.env,
          GIT_CEILING_DIRECTORIES: dir.path,
        });
        expect(run.code).toBe(1);
        expect(run.json.error.code).toBe("not_a_repository");
      }
      const human = await berth(["status"], dir.path, {
        ...dir.env,
        GIT_CEILING_DIRECTORIES: dir.path,
      });
      expect(human.stderr).toContain("not inside a git repository");
      expect(human.stderr).not.toMatch(/\n\s+at /);
    } finally {
      dir.cleanup();
    }
  });

  it("says in git's words why git will not work in the repository (its owner, a broken config), not 'not a repository'", async () => {
    repo = makeRepo();
    const r = repo;
    const brokenConfig = join(r.dir.path, "broken.gitconfig");
    writeFileSync(brokenConfig, "[core\nbad");
    const cases: [NodeJS.ProcessEnv, string][] = [
      [{ ...r.env, GIT_CONFIG_GLOBAL: brokenConfig }, `bad config line 1 in file ${brokenConfig}`],
      // git's own knob for a repository owned by another user (safe.directory).
      [
        { ...r.env, GIT_TEST_ASSUME_DIFFERENT_OWNER: "1" },
        "detected dubious ownership in repository",
      ],
    ];
    for (const [env, said] of cases) {
      // `status` reads from the entry (one sh); `start --dry-run` through the parser (runGit).
      for (const args of [["status"], ["start", "x", "--dry-run"]]) {
        const run = await berth([...args, "--json"], r.path, env);
        expect(run.code).toBe(1);
        expect(run.json.error.code).toBe("precondition_failed");
        expect(run.json.error.message).toContain(`git cannot work in ${r.path}: `);
        expect(run.json.error.message).toContain(said);
        expect(run.json.error.next).toBe(`git -C ${r.path} status`);
      }
    }
  });

  it("says git is missing when there is no git on PATH, from the entry's reads and the parser's", async () => {
    repo = makeRepo();
    const bin = join(repo.dir.path, "no-git");
    mkdirSync(bin);
    for (const tool of ["sh", process.execPath]) {
      const found = execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim();
      symlinkSync(found, join(bin, tool.split("/").pop() as string));
    }
    const env = { ...repo.env, PATH: bin };
    // `status` starts its reads from the entry (one sh); `start --dry-run` through the parser (runGit).
    for (const args of [["status"], ["start", "x", "--dry-run"]]) {
      const run = await berth([...args, "--json"], repo.path, env);
      expect(run.code).toBe(1);
      expect(run.json.error).toMatchObject({ code: "precondition_failed" });
      expect(run.json.error.message).toContain("there is no git on PATH");
    }
  });

  it("says git is too old when a git below the minimum fails on an option it does not know", async () => {
    repo = makeRepo();
    const r = repo;
    // Real git behind a wrapper that answers as git 2.30 does: its version, and no `worktree list -z`.
    const bin = join(r.dir.path, "old-git");
    mkdirSync(bin);
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    writeFileSync(
      join(bin, "git"),
      [
        "#!/bin/sh",
        'case "$*" in',
        '  --version) echo "git version 2.30.9"; exit 0;;',
        '  *"worktree list"*-z*) echo "error: unknown switch z" >&2; echo "usage: git worktree list [<options>]" >&2; exit 129;;',
        "esac",
        `exec ${realGit} "$@"`,
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "git"), 0o755);
    const env = { ...r.env, PATH: `${bin}:${r.env.PATH ?? ""}` };
    const run = await berth(["status", "--json"], r.path, env);
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toMatch(
      /^berth needs git 2\.38 or later, and this git is 2\.30\.9 \(git worktree list --porcelain -z failed \(exit 129\): error: unknown switch z\)\. Install a newer git, then run this again\.$/,
    );
    expect(run.json.error.next).toBe("git --version");
    expect(run.json.hints).toEqual([]);
  });

  it("exits 2 on an unknown flag", async () => {
    repo = makeRepo();
    const run = await berth(["status", "--bogus"], repo.path, repo.env);
    expect(run.code).toBe(2);
    const json = await berth(["status", "--bogus", "--json"], repo.path, repo.env);
    expect(json.code).toBe(2);
    expect(json.json.error.code).toBe("usage");
  });

  it("a usage error's --json verb is the subcommand as typed, not only its group", async () => {
    repo = makeRepo();
    const cases: [string[], string][] = [
      [["worktree", "drop", "--json"], "worktree drop"],
      [["worktree", "drop", "a", "b", "--json"], "worktree drop"],
      [["queue", "approve", "--json"], "queue approve"],
      [["queue", "run", "extra", "--json"], "queue run"],
      [["worktree", "--debug", "prune", "--bogus", "--json"], "worktree prune"],
      [["queue", "extra", "--json"], "queue"],
      [["status", "--bogus", "--json"], "status"],
    ];
    for (const [args, verb] of cases) {
      const run = await berth(args, repo.path, repo.env);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.json, args.join(" ")).toMatchObject({ ok: false, verb, error: { code: "usage" } });
    }
  });

  it("init writes a starter berth.toml once and refuses to overwrite", async () => {
    repo = makeRepo();
    const first = await berth(["init", "--json"], repo.path, repo.env);
    expect(first.code).toBe(0);
    const text = readFileSync(join(repo.path, "berth.toml"), "utf8");
    expect(text).toContain('trunk = "main"');
    const second = await berth(["init", "--json"], repo.path, repo.env);
    expect(second.code).toBe(1);
    expect(second.json.error.code).toBe("precondition_failed");
    expect(readFileSync(join(repo.path, "berth.toml"), "utf8")).toBe(text);
    const status = await berth(["status", "--json"], repo.path, repo.env);
    expect(status.code).toBe(0);
  });

  it("init names the main checkout's branch when there is no origin/HEAD, main or master to detect", async () => {
    repo = makeRepo({ trunk: "develop" });
    const init = await berth(["init", "--json"], repo.path, repo.env);
    expect(init.json.data.trunk).toBe("develop");
    expect(init.json.hints.join("\n")).toContain("the main checkout's branch");
    expect(readFileSync(join(repo.path, "berth.toml"), "utf8")).toContain('trunk = "develop"');
    const start = await berth(["start", "next", "--json"], repo.path, repo.env);
    expect(start.json).toMatchObject({ ok: true, data: { from: "develop" } });
  });
});
