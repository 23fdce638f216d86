import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MALFORMED, RESOURCE, VALID_CONFIGS, ZERO_PORT_SPAN } from "../fixtures/configs.js";
import { makeRepo, makeTempDir, type RunResult, runBerth, type TestRepo } from "../helpers/repo.js";
import { STACK_LINE } from "./crash.js";

/**
 * Bad input, end to end: every malformed berth.toml, corrupted state files,
 * garbage in the logbook, refs that are not branches, detached HEADs, a
 * repository with no commits and a bare one. Each gets a clear refusal or is
 * handled: `--json` parses, stderr holds no stack trace, and the exit code is
 * 1 or 2 for a refusal (0 only where the input is handled and the verb did
 * its job).
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

function expectHandled(run: RunResult, codes: number[], label: string): void {
  const context = `${label}\nexit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
  expect(codes, context).toContain(run.code);
  expect(run.stderr, context).not.toMatch(STACK_LINE);
  expect(run.stdout, context).not.toMatch(STACK_LINE);
  expect(run.json, context).toBeDefined();
  expect(run.json.error?.code ?? null, context).not.toBe("internal");
  if (run.code !== 0) {
    expect(run.json.ok, context).toBe(false);
    expect(typeof run.json.error.message, context).toBe("string");
  }
}

const berth = (r: TestRepo, args: string[], cwd = r.path) =>
  runBerth([...args, "--json"], { cwd, env: r.env });

describe("a malformed berth.toml is refused with the file, the key and what was expected", () => {
  // One binary run per fixture, one after another: ~20 s on a quiet 2-core machine, 50 s and
  // more on a busy one (the schema check of their output adds a one-off compile).
  it("every type error, unknown key, cross-key rule and invalid TOML", async () => {
    repo = makeRepo();
    const r = repo;
    const failures: string[] = [];
    for (const [label, text, key] of MALFORMED) {
      writeFileSync(join(r.path, "berth.toml"), text);
      const run = await berth(r, ["status"]);
      try {
        expectHandled(run, [1], label);
        expect(run.json.error.code, label).toBe("config_invalid");
        expect(run.json.error.message, label).toContain("berth.toml");
        if (key !== null) expect(run.json.error.message, label).toContain(key);
      } catch (error) {
        failures.push((error as Error).message.split("\n").slice(0, 6).join("\n"));
      }
    }
    expect(failures, failures.join("\n\n")).toEqual([]);
  }, 180_000);

  it("every verb refuses it the same way, and a dry run too", async () => {
    repo = makeRepo();
    const r = repo;
    const { path } = (await berth(r, ["start", "ok"])).json.data;
    writeFileSync(join(r.path, "berth.toml"), ZERO_PORT_SPAN);
    const runs: [string[], string][] = [
      [["start", "x"], r.path],
      [["start", "x", "--dry-run"], r.path],
      [["gate"], path],
      [["update"], path],
      [["worktree", "prune", "--yes"], r.path],
      [["worktree", "drop", path, "--yes"], r.path],
      [["worktree", "setup"], path],
      [["worktree", "teardown", "--yes"], path],
    ];
    for (const [args, cwd] of runs) {
      const run = await berth(r, args, cwd);
      expectHandled(run, [1], args.join(" "));
      expect(run.json.error.code, args.join(" ")).toBe("config_invalid");
    }
  });

  it("a berth.toml that is a folder is refused; an empty one means every default", async () => {
    repo = makeRepo();
    const r = repo;
    mkdirSync(join(r.path, "berth.toml"));
    const run = await berth(r, ["status"]);
    expectHandled(run, [1], "berth.toml is a folder");
    expect(run.json.error.code).toBe("config_invalid");
    rmSync(join(r.path, "berth.toml"), { recursive: true });
    writeFileSync(join(r.path, "berth.toml"), VALID_CONFIGS["nothing but a comment"]);
    expectHandled(await berth(r, ["status"]), [0], "an empty berth.toml");
  });
});

describe("corrupted state files", () => {
  async function berthWithResource(r: TestRepo) {
    writeFileSync(join(r.path, "berth.toml"), RESOURCE);
    const run = await berth(r, ["start", "x"]);
    expectHandled(run, [0], "start");
    return run.json.data as { id: string; path: string };
  }

  const CORRUPT: [string, (file: string) => void][] = [
    ["not JSON", (file) => writeFileSync(file, "{ not json")],
    ["empty", (file) => writeFileSync(file, "")],
    ["a JSON array", (file) => writeFileSync(file, "[1, 2, 3]\n")],
    ["JSON of the wrong shape", (file) => writeFileSync(file, '{"version": "one", "id": 5}\n')],
    [
      "a folder",
      (file) => {
        rmSync(file, { force: true });
        mkdirSync(file);
      },
    ],
  ];

  it.each(CORRUPT)(
    "a ledger entry that is %s: status and prune go on, drop and teardown refuse to guess",
    async (_label, corrupt) => {
      repo = makeRepo();
      const r = repo;
      const b = await berthWithResource(r);
      const dir = join(r.path, ".git", "berth", "ledger", b.id);
      corrupt(join(dir, readdirSync(dir)[0] as string));
      expectHandled(await berth(r, ["status"]), [0], "status");
      expectHandled(await berth(r, ["worktree", "prune", "--yes"]), [0], "prune");
      const before = r.git(["worktree", "list", "--porcelain"]);
      expectHandled(await berth(r, ["worktree", "drop", b.id, "--force", "--yes"]), [1], "drop");
      expectHandled(await berth(r, ["worktree", "teardown", "--yes"], b.path), [0, 1], "teardown");
      expectHandled(await berth(r, ["worktree", "setup"], b.path), [0, 1], "setup");
      expect(r.git(["worktree", "list", "--porcelain"])).toBe(before);
    },
  );

  it.each(CORRUPT)(
    "a gate receipt that is %s reads as missing; gate replaces it or says why not",
    async (_label, corrupt) => {
      repo = makeRepo({ config: '[gate]\nchecks = [{ name = "ok", run = "true" }]\n' });
      const r = repo;
      const b = (await berth(r, ["start", "x"])).json.data;
      expectHandled(await berth(r, ["gate"], b.path), [0], "gate");
      const key = r.git(["rev-parse", "--git-dir"], b.path).split("/").pop() as string;
      corrupt(join(r.path, ".git", "worktrees", key, "berth", "receipt.json"));
      const status = await berth(r, ["status"]);
      expectHandled(status, [0], "status");
      const row = status.json.data.worktrees.find((w: { path: string }) => w.path === b.path);
      expect(row.receipt).toBe("missing");
      expectHandled(await berth(r, ["gate"], b.path), [0, 1], "gate again");
      expectHandled(await berth(r, ["worktree", "prune", "--contained", "--yes"]), [0], "prune");
    },
  );

  it.each(CORRUPT)(
    "a ready marker that is %s: berth no longer owns the checkout and says so",
    async (_label, corrupt) => {
      repo = makeRepo();
      const r = repo;
      const b = (await berth(r, ["start", "x"])).json.data;
      const key = r.git(["rev-parse", "--git-dir"], b.path).split("/").pop() as string;
      corrupt(join(r.path, ".git", "worktrees", key, "berth", "ready"));
      expectHandled(await berth(r, ["status"]), [0], "status");
      expectHandled(await berth(r, ["worktree", "drop", b.path, "--force", "--yes"]), [1], "drop");
      expectHandled(await berth(r, ["worktree", "prune", "--contained", "--yes"]), [0], "prune");
      expect(r.git(["worktree", "list", "--porcelain"])).toContain(b.path);
    },
  );

  it("a lock file of garbage is taken over once it is old (at once) or has aged while waited on", async () => {
    repo = makeRepo();
    const r = repo;
    const lock = join(r.path, ".git", "berth", "lock");
    mkdirSync(join(r.path, ".git", "berth"), { recursive: true });
    writeFileSync(lock, "\u0000garbage");
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expectHandled(await berth(r, ["start", "x"]), [0], "start over an old garbage lock");
    // Fresh garbage could be a holder still writing: waited on, then taken over once it is old.
    writeFileSync(lock, "{ fresh garbage");
    expectHandled(await berth(r, ["start", "y"]), [0, 1], "start over a fresh garbage lock");
  }, 60_000);

  it("a logbook with garbage lines, a torn line and wrong shapes is read around them", async () => {
    repo = makeRepo();
    const r = repo;
    expectHandled(await berth(r, ["start", "x"]), [0], "start");
    const dir = join(r.path, ".git", "berth", "logbook");
    mkdirSync(dir, { recursive: true });
    const month = readdirSync(dir)[0] ?? "2026-06.jsonl";
    const garbage = [
      "not json at all",
      "\u0000\u0001\u0002",
      "[1,2,3]",
      '{"schema": 99, "event": "begin"}',
      '{"schema": 1, "event": "begin", "at": "not a time", "verb": 5}',
      "x".repeat(100_000),
      '{"schema": 1, "event": "finish", "invocation": "torn"',
    ].join("\n");
    writeFileSync(join(dir, month), `${garbage}\n`, { flag: "a" });
    writeFileSync(join(dir, "1999-13.jsonl"), "garbage\n");
    expectHandled(await berth(r, ["status"]), [0], "status");
    expectHandled(
      await berth(r, ["logbook"]).then((run) => ({ ...run, json: {} })),
      [0],
      "logbook",
    );
    const lines = await runBerth(["logbook", "--json"], { cwd: r.path, env: r.env });
    expect(lines.code).toBe(0);
    expect(lines.stderr).not.toMatch(STACK_LINE);
    for (const line of lines.stdout.split("\n").filter(Boolean))
      expect(() => JSON.parse(line)).not.toThrow();
    expectHandled(
      await berth(r, ["logbook", "--since", "yesterday-ish"]),
      [1, 2],
      "logbook --since garbage",
    );
    expectHandled(await berth(r, ["worktree", "prune", "--contained", "--yes"]), [0], "prune");
  });
});

describe("refs that are not branches, and detached HEADs", () => {
  it("--from a tree, a blob, an option-like or empty name is refused", async () => {
    repo = makeRepo();
    const r = repo;
    const tree = r.git(["rev-parse", "HEAD^{tree}"]);
    const blob = r.git(["rev-parse", "HEAD:README.md"]);
    r.git(["tag", "v1"]);
    for (const from of [
      tree,
      blob,
      "",
      "HEAD^{tree}",
      "refs/tags/v1^{tree}",
      "no/such/ref",
      "..",
    ]) {
      const run = await berth(r, ["start", "x", "--from", from]);
      expectHandled(run, [1, 2], `--from ${JSON.stringify(from)}`);
    }
    expectHandled(await berth(r, ["start", "x", "--from", "-x"]), [1, 2], "--from -x");
    expect(r.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });

  it("tags, notes and recovery refs are no berth to drop or update from a tree", async () => {
    repo = makeRepo();
    const r = repo;
    const b = (await berth(r, ["start", "x"])).json.data;
    r.git(["tag", "v1"]);
    r.git(["notes", "add", "-m", "a note", "HEAD"]);
    for (const target of ["v1", "refs/tags/v1", "refs/notes/commits", "HEAD", "main"]) {
      expectHandled(await berth(r, ["worktree", "drop", target, "--yes"]), [1], `drop ${target}`);
    }
    expectHandled(
      await berth(r, ["update", "--from", r.git(["rev-parse", "HEAD^{tree}"])], b.path),
      [1],
      "update --from a tree",
    );
    expectHandled(
      await berth(r, ["update", "--from", "refs/notes/commits"], b.path),
      [0, 1],
      "update --from notes",
    );
  });

  it("a branch ref that names a tree or a blob is reported, not a crash", async () => {
    repo = makeRepo();
    const r = repo;
    const b = (await berth(r, ["start", "x"])).json.data;
    // git refuses to write these; a hand edit (or another tool) can.
    for (const [ref, object] of [
      ["refs/heads/berth/tree-ref", r.git(["rev-parse", "HEAD^{tree}"])],
      ["refs/heads/blob-ref", r.git(["rev-parse", "HEAD:README.md"])],
    ] as const) {
      mkdirSync(dirname(join(r.path, ".git", ref)), { recursive: true });
      writeFileSync(join(r.path, ".git", ref), `${object}\n`);
    }
    expectHandled(await berth(r, ["status"]), [0, 1], "status");
    expectHandled(await berth(r, ["worktree", "prune", "--contained", "--yes"]), [0, 1], "prune");
    expectHandled(
      await berth(r, ["start", "y", "--from", "berth/tree-ref"]),
      [1],
      "start --from a tree branch",
    );
    expectHandled(await berth(r, ["gate"], b.path), [0, 1], "gate");
    expectHandled(await berth(r, ["worktree", "drop", b.id, "--yes"]), [0, 1], "drop");
  });

  it("a berth on a detached HEAD: observed, refused where a branch is needed, dropped with its commits kept", async () => {
    repo = makeRepo();
    const r = repo;
    const b = (await berth(r, ["start", "x"])).json.data;
    r.write("d.txt", "detached work\n", b.path);
    r.commit("detached work", b.path);
    r.git(["checkout", "-q", "--detach"], b.path);
    const detachedTip = r.git(["rev-parse", "HEAD"], b.path);
    expectHandled(await berth(r, ["status"]), [0], "status");
    expectHandled(await berth(r, ["status"], b.path), [0], "status inside");
    expectHandled(await berth(r, ["gate"], b.path), [1], "gate");
    expectHandled(await berth(r, ["update"], b.path), [1], "update");
    expectHandled(await berth(r, ["worktree", "prune", "--contained", "--yes"]), [0], "prune");
    expectHandled(await berth(r, ["worktree", "drop", b.id, "--yes"]), [1], "drop without --force");
    expectHandled(
      await berth(r, ["worktree", "drop", b.id, "--force", "--yes"]),
      [0],
      "drop --force",
    );
    expect(r.git(["for-each-ref", "--format=%(objectname)", "refs/berth/recovery"])).toContain(
      detachedTip,
    );
  });
});

describe("repositories berth cannot work in", () => {
  const VERBS: string[][] = [
    ["status"],
    ["start", "x"],
    ["start", "x", "--dry-run"],
    ["gate"],
    ["update"],
    ["worktree", "prune", "--yes"],
    ["worktree", "drop", "x", "--yes"],
    ["worktree", "setup"],
    ["worktree", "teardown", "--yes"],
    ["logbook"],
  ];

  it("a repository with no commits: each verb observes or refuses", async () => {
    repo = makeRepo({ empty: true });
    const r = repo;
    for (const args of VERBS) {
      const run = await berth(r, args);
      if (args[0] === "logbook") expect(run.code, args.join(" ")).toBe(0);
      else expectHandled(run, args[0] === "status" ? [0, 1] : [0, 1], args.join(" "));
    }
    const start = await berth(r, ["start", "x"]);
    expect(start.code).toBe(1);
    expect(start.json.error.code).toBe("precondition_failed");
    expect(r.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });

  it("a bare repository, and a folder that is no repository: not_a_repository", async () => {
    const dir = makeTempDir();
    try {
      const bare = join(dir.path, "bare.git");
      execFileSync("git", ["init", "-q", "--bare", bare], { env: dir.env });
      const plain = join(dir.path, "plain");
      mkdirSync(plain);
      for (const cwd of [bare, plain]) {
        for (const args of VERBS.filter((a) => a[0] !== "logbook")) {
          const run = await runBerth([...args, "--json"], { cwd, env: dir.env });
          expectHandled(run, [1], `${args.join(" ")} in ${cwd}`);
          expect(run.json.error.code, `${args.join(" ")} in ${cwd}`).toBe("not_a_repository");
        }
      }
    } finally {
      dir.cleanup();
    }
  });

  it("usage mistakes exit 2 with a JSON usage error", async () => {
    repo = makeRepo();
    const r = repo;
    for (const args of [
      ["start", "--nope"],
      ["worktree", "drop"],
      ["status", "extra", "args"],
      ["frobnicate"],
    ]) {
      const run = await berth(r, args);
      expect([2], `${args.join(" ")}: ${run.stdout}${run.stderr}`).toContain(run.code);
      expect(run.stderr).not.toMatch(STACK_LINE);
      expect(run.json?.error?.code ?? "usage").toBe("usage");
    }
  });

  it("an option that needs a value, followed by another option, is a usage error naming it", async () => {
    repo = makeRepo();
    const r = repo;
    for (const [args, lacking, next] of [
      [["await", "--green", "--timeout", "1"], "--green", "--timeout"],
      [["start", "x", "--from", "--dry-run"], "--from", "--dry-run"],
      [["logbook", "--since", "--verb", "gate"], "--since", "--verb"],
      [["start", "y", "--title", "-", "--dry-run"], null, null],
    ] as const) {
      const run = await berth(r, [...args]);
      const label = args.join(" ");
      if (lacking === null) {
        expectHandled(run, [0], label);
        continue;
      }
      expectHandled(run, [2], label);
      expect(run.json.error.code, label).toBe("usage");
      expect(run.json.error.message, label).toContain(
        `${lacking} needs a value of its own before ${next}`,
      );
    }
    expect(r.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });
});
