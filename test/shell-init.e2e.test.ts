import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { startWithCommit } from "./helpers/train.js";

/**
 * Moving between berths (spec section 12): `berth path`, unique id prefixes,
 * and the `berth switch` wrapper from `berth shell-init`, run in a real bash.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A `berth` on PATH that runs the built binary, as an installed one would. */
function berthOnPath(r: TestRepo): NodeJS.ProcessEnv {
  const bin = join(r.dir.path, "bin");
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, "berth");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BERTH_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return { ...r.env, PATH: `${bin}:${r.env.PATH ?? ""}` };
}

function bash(r: TestRepo, script: string): { code: number; stdout: string; stderr: string } {
  const run = spawnSync("bash", ["--norc", "--noprofile", "-c", script], {
    cwd: r.path,
    env: berthOnPath(r),
    encoding: "utf8",
  });
  return { code: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

describe("berth shell-init bash", () => {
  it('eval "$(berth shell-init bash)"; berth switch <id>; pwd prints the berth\'s folder', async () => {
    const r = makeRepo();
    repo = r;
    const a = await startWithCommit(r, "alpha");
    const run = bash(r, `eval "$(berth shell-init bash)"; berth switch ${a.id}; pwd`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${a.path}\n`);
  });

  it("switches by a unique id prefix, leaves the folder on an unknown berth, and passes other verbs through", async () => {
    const r = makeRepo();
    repo = r;
    const a = await startWithCommit(r, "alpha");
    await startWithCommit(r, "beta");
    const prefix = bash(r, `eval "$(berth shell-init bash)"; berth switch alp; pwd`);
    expect(prefix.stdout).toBe(`${a.path}\n`);
    const unknown = bash(
      r,
      `eval "$(berth shell-init bash)"; berth switch nope; echo "rc=$? $PWD"`,
    );
    expect(unknown.stdout).toBe(`rc=1 ${r.path}\n`);
    expect(unknown.stderr).toMatch(/No worktree of this repository is "nope"/);
    // Not a switch to a berth: the binary's own answer, and the folder stays.
    const bare = bash(r, `eval "$(berth shell-init bash)"; berth switch; echo "rc=$? $PWD"`);
    expect(bare.stdout).toBe(`rc=2 ${r.path}\n`);
    expect(bare.stderr).toContain("missing required argument");
    expect(bare.stderr).not.toContain("cd:");
    const json = bash(
      r,
      `eval "$(berth shell-init bash)"; berth switch --json ${a.id}; echo "rc=$? $PWD"`,
    );
    expect(JSON.parse(json.stdout.slice(0, json.stdout.lastIndexOf("rc=")))).toMatchObject({
      ok: true,
    });
    expect(json.stdout).toContain(`rc=0 ${r.path}\n`);
    const started = bash(r, `eval "$(berth shell-init bash)"; cd "$(berth start gamma)" && pwd`);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/\.worktrees\/gamma-[0-9a-f]{6}\n$/);
  });

  it("prints a script bash accepts, and the zsh and fish wrappers", async () => {
    const r = makeRepo();
    repo = r;
    const script = await runBerth(["shell-init", "bash"], { cwd: r.path, env: r.env });
    expect(script.code).toBe(0);
    execFileSync("bash", ["-n"], { input: script.stdout });
    const zsh = await runBerth(["shell-init", "zsh"], { cwd: r.path, env: r.env });
    expect(zsh.stdout).toContain('__berth_dir="$(command berth path "$2")" || return');
    const fish = await runBerth(["shell-init", "fish"], { cwd: r.path, env: r.env });
    expect(fish.stdout).toContain("function berth");
    expect(fish.stdout).toContain("command berth path $argv[2]");
    expect(fish.stdout).toContain("test (count $argv) -eq 2");
    const bad = await runBerth(["shell-init", "tcsh"], { cwd: r.path, env: r.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bash, zsh, fish");
  });
});

describe("berth path", () => {
  it("prints a berth's folder alone, by id or unique prefix; lists every berth without one", async () => {
    const r = makeRepo();
    repo = r;
    const a = await startWithCommit(r, "alpha");
    const b = await startWithCommit(r, "beta");
    const byId = await runBerth(["path", a.id], { cwd: r.path, env: r.env });
    expect(byId.stdout).toBe(`${a.path}\n`);
    const byPrefix = await runBerth(["path", "bet", "--json"], { cwd: r.path, env: r.env });
    expect(byPrefix.json).toMatchObject({
      ok: true,
      verb: "path",
      data: { berth: { id: b.id, path: b.path, branch: b.branch, is_main: false } },
    });
    const all = await runBerth(["path"], { cwd: r.path, env: r.env });
    expect(all.stdout.split("\n").filter(Boolean).sort()).toEqual(
      [`${a.id}\t${a.path}`, `${b.id}\t${b.path}`].sort(),
    );
  });

  it("refuses an ambiguous prefix, naming the candidates", async () => {
    const r = makeRepo();
    repo = r;
    const a = await startWithCommit(r, "fix-one");
    const b = await startWithCommit(r, "fix-two");
    const run = await runBerth(["path", "fix-", "--json"], { cwd: r.path, env: r.env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("ambiguous_target");
    expect(run.json.error.message).toContain(a.id);
    expect(run.json.error.message).toContain(b.id);
    // Ids that start alike differ in full: the whole id is the way, not the path.
    expect(run.json.error.message).toContain("Name the worktree by its whole id: berth path <id>.");
  });

  it("berth switch without the wrapper prints the folder and says how to load it", async () => {
    const r = makeRepo();
    repo = r;
    const a = await startWithCommit(r, "alpha");
    const run = await runBerth(["switch", a.id], { cwd: r.path, env: r.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${a.path}\n`);
    expect(run.stderr).toContain('eval "$(berth shell-init bash)"');
  });
});
