import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GitError } from "../src/errors.js";
import { type GitResult, runGit } from "../src/git/run.js";
import { gitGroup } from "../src/git/run-group.js";
import { REAL_GIT } from "./helpers/git-shim.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A call's outcome, the same shape whether it resolved or rejected. */
async function outcome(promise: Promise<GitResult>) {
  try {
    return { ok: await promise };
  } catch (error) {
    expect(error).toBeInstanceOf(GitError);
    const { message, exitCode, stderr, args } = error as GitError;
    return { failed: { message, exitCode, stderr, args } };
  }
}

// Shell aliases give a git call any output, exit code or duration a test needs.
const alias = (name: string, script: string) => ["-c", `alias.${name}=!${script}`, name];

describe("gitGroup (git/run-group.ts)", () => {
  it("settles every call exactly as runGit does: output, exit code, refusal", async () => {
    repo = makeRepo();
    repo.commit("second");
    const calls: { args: string[]; okCodes?: number[] }[] = [
      { args: ["rev-parse", "--path-format=absolute", "--git-dir", "--show-toplevel"] },
      { args: ["rev-parse", "--verify", "no-such-branch"] },
      { args: alias("bye", "printf 'out\\n'; printf 'a warning' >&2; exit 1"), okCodes: [1] },
      { args: alias("odd", "printf 'it said \"no\" x\\0y' >&2; exit 3") },
    ];
    const group = gitGroup(repo.path);
    const grouped = calls.map(({ args, okCodes }) =>
      outcome(group.run(args, { cwd: repo?.path as string, okCodes })),
    );
    group.start();
    const direct = calls.map(({ args, okCodes }) =>
      outcome(runGit(args, { cwd: repo?.path as string, okCodes })),
    );
    const [fromGroup, fromRunGit] = [await Promise.all(grouped), await Promise.all(direct)];
    expect(fromGroup).toEqual(fromRunGit);
    // The cases the calls were chosen for really happened.
    expect(fromGroup[0]?.ok?.stdout).toContain(repo.path);
    expect(fromGroup[1]?.failed?.exitCode).toBe(128);
    expect(fromGroup[2]?.ok).toEqual({ stdout: "out\n", stderr: "a warning", exitCode: 1 });
    expect(fromGroup[3]?.failed).toMatchObject({ exitCode: 3, stderr: 'it said "no" x\0y' });
  });

  it("settles each call when its own git ends, not when the slowest does", async () => {
    repo = makeRepo();
    const group = gitGroup(repo.path);
    const order: string[] = [];
    const slow = group
      .run(alias("slow", "sleep 2"), { cwd: repo.path })
      .then(() => order.push("slow"));
    const quick = group.run(["rev-parse", "HEAD"], { cwd: repo.path }).then((result) => {
      order.push("quick");
      return result.stdout.trim();
    });
    group.start();
    expect(await quick).toBe(repo.git(["rev-parse", "HEAD"]));
    expect(order).toEqual(["quick"]);
    await slow;
    expect(order).toEqual(["quick", "slow"]);
  });

  it("carries an output larger than a pipe holds, byte for byte", async () => {
    repo = makeRepo();
    const group = gitGroup(repo.path);
    const big = group.run(alias("big", "yes 'berth é' | head -c 300000"), { cwd: repo.path });
    const small = group.run(["rev-parse", "--is-bare-repository"], { cwd: repo.path });
    group.start();
    const { stdout } = await big;
    expect(Buffer.byteLength(stdout)).toBe(300000);
    expect(stdout).toBe(
      (await runGit(alias("big", "yes 'berth é' | head -c 300000"), { cwd: repo.path })).stdout,
    );
    expect((await small).stdout).toBe("false\n");
  });

  it("runs by runGit whatever it cannot group: stdin, another folder, a fifth call, a late call", async () => {
    repo = makeRepo();
    const cwd = repo.path;
    const elsewhere = join(repo.dir.path, "elsewhere");
    mkdirSync(elsewhere);
    const group = gitGroup(cwd);
    const hashed = group.run(["hash-object", "--stdin"], { cwd, input: "text\n" });
    const outside = group.run(["rev-parse", "--is-inside-work-tree"], {
      cwd: elsewhere,
      okCodes: [128],
    });
    const five = Array.from({ length: 5 }, () => group.run(["rev-parse", "HEAD^{tree}"], { cwd }));
    group.start();
    const late = group.run(["rev-parse", "HEAD"], { cwd });
    // git's own id of a blob "text\n".
    expect((await hashed).stdout.trim()).toBe("8e27be7d6154a1f68ea9160ef0e18691d20560dc");
    expect((await outside).exitCode).toBe(128);
    const tree = repo.git(["rev-parse", "HEAD^{tree}"]);
    expect((await Promise.all(five)).map((r) => r.stdout.trim())).toEqual(five.map(() => tree));
    expect((await late).stdout.trim()).toBe(repo.git(["rev-parse", "HEAD"]));
  });

  it("falls back to runGit when there is no sh to fork", async () => {
    repo = makeRepo();
    const bin = join(repo.dir.path, "git-only");
    mkdirSync(bin);
    symlinkSync(REAL_GIT, join(bin, "git"));
    const saved = process.env.PATH;
    process.env.PATH = bin;
    try {
      const group = gitGroup(repo.path);
      const calls = [group.run(["rev-parse", "HEAD"], { cwd: repo.path })];
      calls.push(group.run(["rev-parse", "--is-bare-repository"], { cwd: repo.path }));
      group.start();
      const [head, bare] = await Promise.all(calls);
      expect(head?.stdout.trim()).toMatch(/^[0-9a-f]{40}$/);
      expect(bare?.stdout).toBe("false\n");
    } finally {
      process.env.PATH = saved;
    }
  });
});
