import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hookWorktreeCreateCommand, hookWorktreeRemoveCommand } from "../src/commands/hook.js";
import { makeRepo, runBerth, type TestRepo, testContext } from "./helpers/repo.js";

/**
 * `berth hook ...` fed the payloads Claude Code sends (spec section 12), on the
 * built binary: the create hook's stdout is the path alone, the remove hook
 * never discards work, session-start tells an agent where it is.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());
beforeAll(() => {
  // The e2e tier runs the built binary: `npm run build` first.
  expect(existsSync(join(__dirname, "..", "dist", "cli.cjs"))).toBe(true);
});

const worktreePaths = (r: TestRepo) =>
  r
    .git(["worktree", "list", "--porcelain"])
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice("worktree ".length));

function createPayload(r: TestRepo, key: "worktree_name" | "name", name: string): string {
  return JSON.stringify({
    session_id: "0b1c2d3e",
    transcript_path: join(r.dir.home, "transcript.jsonl"),
    cwd: r.path,
    hook_event_name: "WorktreeCreate",
    [key]: name,
  });
}

function logbookLines(r: TestRepo): Record<string, unknown>[] {
  const dir = join(r.path, ".git", "berth", "logbook");
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  );
}

describe("berth hook claude-worktree-create", () => {
  it.each(["worktree_name", "name"] as const)(
    "starts a berth from the %s key and prints only its path",
    async (key) => {
      const r = makeRepo();
      repo = r;
      // From another folder: the payload's cwd names the repository.
      const run = await runBerth(["hook", "claude-worktree-create"], {
        cwd: r.dir.home,
        env: r.env,
        input: createPayload(r, key, "Fix the login form"),
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^\/\S+\n$/);
      const path = run.stdout.trim();
      expect(worktreePaths(r)).toContain(path);
      expect(path).toMatch(/fix-the-login-form-[0-9a-f]{6}$/);
      expect(existsSync(join(r.path, ".git", "worktrees"))).toBe(true);
      const branch = r.git(["rev-parse", "--abbrev-ref", "HEAD"], path);
      expect(branch).toMatch(/^berth\/fix-the-login-form-/);
      const events = logbookLines(r).filter((e) => e.verb === "start");
      expect(events.map((e) => [e.event, e.surface])).toEqual([
        ["begin", "hook"],
        ["finish", "hook"],
      ]);
    },
  );

  it("refuses a payload that is not JSON, on stderr, and creates nothing", async () => {
    const r = makeRepo();
    repo = r;
    const run = await runBerth(["hook", "claude-worktree-create"], {
      cwd: r.path,
      env: r.env,
      input: "worktree_name=x",
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/not JSON/);
    // One line, naming the hook once.
    expect(run.stderr).toBe(
      "berth hook claude-worktree-create: stdin is not JSON; nothing changed.\n",
    );
    const remove = await runBerth(["hook", "claude-worktree-remove"], {
      cwd: r.path,
      env: r.env,
      input: "{}",
    });
    expect(remove.code).toBe(2);
    expect(remove.stderr).toBe(
      'berth hook claude-worktree-remove: stdin has no "worktree_path"; nothing changed.\n',
    );
    expect(worktreePaths(r)).toEqual([r.path]);
  });

  it("run by hand, stdin a terminal: refused with the verb for people, and nothing is created", async () => {
    const r = makeRepo();
    repo = r;
    const { ctx } = testContext(r.path, r.env);
    const atTerminal = { ...ctx, stdinIsTTY: true };
    // A terminal reads as empty stdin (io/stdin.ts), which a pipe would turn into a random berth.
    await expect(hookWorktreeCreateCommand(atTerminal, "")).rejects.toMatchObject({
      code: "usage",
      message:
        "this is what Claude Code runs at WorktreeCreate, with the event's JSON on stdin, and stdin " +
        "here is a terminal; nothing changed. By hand: berth start [name].",
      next: "berth start --help",
    });
    await expect(hookWorktreeRemoveCommand(atTerminal, "")).rejects.toMatchObject({
      code: "usage",
      next: "berth worktree drop --help",
    });
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(r.git(["branch", "--list", "berth/*"])).toBe("");
  });

  it("refuses a payload larger than 1 MiB as too large, not as not JSON, and creates nothing", async () => {
    const r = makeRepo();
    repo = r;
    const input = JSON.stringify({ worktree_name: "big", pad: "x".repeat(1024 * 1024) });
    const run = await runBerth(["hook", "claude-worktree-create"], {
      cwd: r.path,
      env: r.env,
      input,
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      "berth hook claude-worktree-create: stdin is larger than 1 MiB, which no hook payload is; nothing changed.\n",
    );
    expect(worktreePaths(r)).toEqual([r.path]);
  });

  it("fails non-zero outside a repository, with the reason on stderr", async () => {
    const r = makeRepo();
    repo = r;
    const run = await runBerth(["hook", "claude-worktree-create"], {
      cwd: r.dir.home,
      env: r.env,
      input: JSON.stringify({ worktree_name: "x", cwd: r.dir.home }),
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/repository/i);
  });
});

describe("a payload cwd that is no folder", () => {
  it("a file or a NUL byte is refused as a missing folder is (not_a_repository), not internal; nothing is created", async () => {
    const r = makeRepo();
    repo = r;
    const file = join(r.path, "README.md");
    r.write("README.md", "a file\n");
    for (const cwd of [file, `${r.path}\u0000x`]) {
      for (const [hook, extra] of [
        ["session-start", {}],
        ["claude-worktree-create", { worktree_name: "x" }],
      ] as const) {
        const run = await runBerth(["hook", hook], {
          cwd: r.path,
          env: r.env,
          input: JSON.stringify({ cwd, ...extra }),
        });
        expect(run.code, `${hook} ${JSON.stringify(cwd)}`).toBe(1);
        expect(run.stderr).not.toContain("unexpected failure");
        expect(run.stderr).toMatch(/is not a folder|NUL/);
        expect(run.stderr).toContain("name (or cd into) a folder inside a git repository");
      }
    }
    expect(worktreePaths(r)).toEqual([r.path]);
  });
});

describe("berth hook claude-worktree-remove", () => {
  async function created(r: TestRepo, name: string): Promise<string> {
    const run = await runBerth(["hook", "claude-worktree-create"], {
      cwd: r.path,
      env: r.env,
      input: createPayload(r, "worktree_name", name),
    });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trim();
  }
  const removePayload = (r: TestRepo, path: string) =>
    JSON.stringify({
      session_id: "0b1c2d3e",
      cwd: r.path,
      hook_event_name: "WorktreeRemove",
      worktree_path: path,
    });

  it("keeps a berth with unlanded commits and says why", async () => {
    const r = makeRepo();
    repo = r;
    const path = await created(r, "keep me");
    r.write("work.txt", "work\n", path);
    const tip = r.commit("unlanded work", path);
    const run = await runBerth(["hook", "claude-worktree-remove"], {
      cwd: r.path,
      env: r.env,
      input: removePayload(r, path),
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/kept/);
    expect(run.stderr).toMatch(/1 commit/);
    expect(run.stderr).toMatch(/--force/);
    expect(worktreePaths(r)).toContain(path);
    expect(r.git(["rev-parse", "HEAD"], path)).toBe(tip);
  });

  it("removes a clean berth whose work has landed, and its branch", async () => {
    const r = makeRepo();
    repo = r;
    const path = await created(r, "landed");
    const branch = r.git(["rev-parse", "--abbrev-ref", "HEAD"], path);
    r.write("done.txt", "done\n", path);
    r.commit("landed work", path);
    r.git(["merge", "-q", "--ff-only", branch]);
    const run = await runBerth(["hook", "claude-worktree-remove"], {
      cwd: r.path,
      env: r.env,
      input: removePayload(r, path),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("");
    expect(worktreePaths(r)).toEqual([r.path]);
    expect(existsSync(path)).toBe(false);
    expect(r.git(["branch", "--list", branch])).toBe("");
  });
});

describe("berth hook session-start", () => {
  it("in the main checkout, tells the agent to start a berth", async () => {
    const r = makeRepo();
    repo = r;
    const run = await runBerth(["hook", "session-start"], {
      cwd: r.path,
      env: r.env,
      input: JSON.stringify({ hook_event_name: "SessionStart", source: "startup", cwd: r.path }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/main checkout/);
    expect(run.stdout).toMatch(/berth start '<name>'/);
  });

  it("in a berth, runs its convergent setup and names the berth", async () => {
    const r = makeRepo({
      config: '[worktree.setup]\nensure = ["echo ensured >> setup.log"]\n',
    });
    repo = r;
    const start = await runBerth(["start", "agent"], { cwd: r.path, env: r.env });
    const path = start.stdout.trim();
    const run = await runBerth(["hook", "session-start"], {
      cwd: path,
      env: r.env,
      input: JSON.stringify({ hook_event_name: "SessionStart", source: "startup", cwd: path }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^You are in berth agent-[0-9a-f]{6} /);
    expect(run.stdout).toMatch(/berth gate/);
    // start ran ensure once, the hook once more.
    expect(readFileSync(join(path, "setup.log"), "utf8")).toBe("ensured\nensured\n");
    const setups = logbookLines(r).filter((e) => e.verb === "worktree setup");
    expect(setups.map((e) => e.surface)).toEqual(["hook", "hook"]);
  });

  it("tells the agent whether its accept lands once green or waits for a person's approval", async () => {
    const r = makeRepo();
    repo = r;
    const path = (await runBerth(["start", "agent"], { cwd: r.path, env: r.env })).stdout.trim();
    const advice = async () =>
      (await runBerth(["hook", "session-start"], { cwd: path, env: r.env, input: "{}" })).stdout;
    expect(await advice()).toContain("Your accept submits it; a person approves the landing.");
    const id = path.slice(path.lastIndexOf("/") + 1);
    expect((await runBerth(["queue", "approve", id], { cwd: r.path, env: r.env })).code).toBe(0);
    expect(await advice()).toContain("A person has let it land once green: your accept lands it.");
  });

  it("in a berth off its own branch, says so and names the command that mends it before any commit", async () => {
    const r = makeRepo();
    repo = r;
    const path = (await runBerth(["start", "agent"], { cwd: r.path, env: r.env })).stdout.trim();
    const id = path.slice(path.lastIndexOf("/") + 1);
    const advice = async () =>
      (await runBerth(["hook", "session-start"], { cwd: path, env: r.env, input: "{}" })).stdout;
    expect(await advice()).not.toContain("mend it");

    r.write("work.txt", "committed\n", path);
    const tip = r.commit("work", path);
    r.git(["update-ref", "-d", `refs/heads/berth/${id}`]);
    const mend = `git -C ${path} branch berth/${id} ${tip}`;
    expect(await advice()).toContain(
      `Before you commit, mend it: berth/${id} was deleted under it;`,
    );
    expect(await advice()).toContain(`${mend}. Then commit your work here, then: berth gate`);
    r.git(["branch", `berth/${id}`, tip], path);

    r.git(["switch", "-q", "-c", "elsewhere"], path);
    expect(await advice()).toContain(
      `mend it: has elsewhere checked out, not its berth branch berth/${id}; go back with git -C ${path} switch berth/${id}.`,
    );
    r.git(["switch", "-q", "--detach", `berth/${id}`], path);
    expect(await advice()).toContain(
      `mend it: its HEAD is detached from its branch berth/${id}: git -C ${path} switch berth/${id}.`,
    );
    r.git(["switch", "-q", `berth/${id}`], path);
    expect(await advice()).not.toContain("mend it");
  });
});
