import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { startWithCommit } from "./helpers/train.js";

/** The CLI habits of issue 18: completion, examples in every --help, aliases, init --agents. */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

function berthOnPath(r: TestRepo): NodeJS.ProcessEnv {
  const bin = join(r.dir.path, "bin");
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, "berth");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BERTH_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return { ...r.env, PATH: `${bin}:${r.env.PATH ?? ""}` };
}

/**
 * What zsh completion offers: the script as `eval` loads it, then the completer it registered
 * for berth (bashcompinit's `_bash_complete`) run on the words typed, as zsh's completion
 * widget would. Only `compadd`, which needs a live widget, is replaced: it prints the words it
 * was given that start with the one being completed, as zsh's matching keeps them.
 */
function completeInZsh(r: TestRepo, words: string[]): string[] {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const script = [
    'eval "$(berth completion zsh)"',
    `compadd() { while [[ $# -gt 0 && $1 != - ]]; do shift; done; shift; print -l -- \${(M)@:#$PREFIX*}; }`,
    `words=(berth ${quoted}); CURRENT=${words.length + 1}; PREFIX='${words.at(-1)}'`,
    `\${=_comps[berth]}`,
  ].join("\n");
  const run = spawnSync("zsh", ["-f", "-c", script], {
    cwd: r.path,
    env: berthOnPath(r),
    encoding: "utf8",
  });
  if (run.error !== undefined) {
    throw new Error("zsh is not installed: run bash .ci/setup-zsh.sh (CI runs it from .ci/run)");
  }
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).toBe("");
  return run.stdout.split("\n").filter(Boolean).sort();
}

/** What bash completion offers for the words typed so far (the last one being completed). */
function completeInBash(r: TestRepo, words: string[]): string[] {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const script = `eval "$(berth completion bash)"; COMP_WORDS=(berth ${quoted}); COMP_CWORD=${words.length}; _berth; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = spawnSync("bash", ["--norc", "--noprofile", "-c", script], {
    cwd: r.path,
    env: berthOnPath(r),
    encoding: "utf8",
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split("\n").filter(Boolean).sort();
}

describe("berth completion", () => {
  it.each([
    ["bash", completeInBash],
    ["zsh", completeInZsh],
  ])("%s completes verbs, subcommands, flags and berth ids", async (_, complete) => {
    const r = makeRepo();
    repo = r;
    const a = await startWithCommit(r, "alpha");
    expect(complete(r, ["wor"])).toEqual(["worktree"]);
    expect(complete(r, ["st"])).toEqual(["start", "status"]);
    expect(complete(r, ["worktree", "re"])).toEqual(["reclaim"]);
    expect(complete(r, ["start", "--f"])).toEqual(["--from"]);
    expect(complete(r, ["worktree", "drop", "--f"])).toEqual(["--force"]);
    expect(complete(r, ["accept", "al"])).toEqual([a.id]);
    expect(complete(r, ["await", "--green", ""])).toEqual([a.id]);
    expect(complete(r, ["path", ""])).toContain(a.id);
    // The landing queue's verbs (issue 17).
    expect(complete(r, ["qu"])).toEqual(["queue"]);
    expect(complete(r, ["queue", ""])).toEqual(
      ["--debug", "--help", "--json", "-h", "approve", "run", "withdraw"].sort(),
    );
    expect(complete(r, ["queue", "approve", "al"])).toEqual([a.id]);
    expect(complete(r, ["queue", "withdraw", "al"])).toEqual([a.id]);
    expect(complete(r, ["accept", "--no"])).toEqual(["--no-wait"]);
    expect(complete(r, ["worktree", "drop", ""])).toContain(a.id);
    expect(complete(r, ["switch", ""])).toContain(a.id);
    // Hidden suggestions are not offered.
    expect(complete(r, ["dr"])).toEqual([]);
  });

  it("zsh and fish scripts cover the same tree; an unknown shell is a usage error", async () => {
    const r = makeRepo();
    repo = r;
    const zsh = await runBerth(["completion", "zsh"], { cwd: r.path, env: r.env });
    expect(zsh.stdout).toContain("bashcompinit");
    expect(zsh.stdout).toContain('"worktree reclaim"|"worktree reclaim "*');
    const fish = await runBerth(["completion", "fish"], { cwd: r.path, env: r.env });
    expect(fish.stdout).toMatch(/-n '__fish_use_subcommand' -a '[^']*\bworktree\b/);
    expect(fish.stdout).toContain(
      "-n '__fish_seen_subcommand_from worktree' -a 'setup teardown park drop prune reclaim'",
    );
    expect(fish.stdout).toContain("-n '__fish_seen_subcommand_from start' -l from");
    expect(fish.stdout).toContain(
      "-n '__fish_seen_subcommand_from queue' -a 'run approve withdraw'",
    );
    expect(zsh.stdout).toContain('"queue approve"|"queue approve "*');
    const bad = await runBerth(["completion", "powershell"], { cwd: r.path, env: r.env });
    expect(bad.code).toBe(2);
  });
});

/** The verbs a --help lists under "Commands:". */
function commandsIn(help: string): string[] {
  const section = help.split("Commands:\n")[1]?.split("\n\n")[0] ?? "";
  return section
    .split("\n")
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== "help")
    .map((name) => name.split("|")[0] as string);
}

describe("--help", () => {
  it("every verb's --help ends with two or three examples", async () => {
    const r = makeRepo();
    repo = r;
    const help = async (args: string[]) =>
      (await runBerth([...args, "--help"], { cwd: r.path, env: r.env })).stdout;
    const paths: string[][] = [];
    for (const verb of commandsIn(await help([]))) {
      paths.push([verb]);
      for (const sub of commandsIn(await help([verb]))) paths.push([verb, sub]);
    }
    expect(paths).toContainEqual(["worktree", "reclaim"]);
    expect(paths).toContainEqual(["hook", "claude-worktree-create"]);
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) {
      const text = await help(path);
      const block = text.split("\nExamples:\n").at(-1) ?? "";
      const lines = block.trimEnd().split("\n");
      expect(text, path.join(" ")).toContain("\nExamples:\n");
      expect(lines.length, path.join(" ")).toBeGreaterThanOrEqual(2);
      expect(lines.length, path.join(" ")).toBeLessThanOrEqual(3);
      for (const line of lines) expect(line, path.join(" ")).toMatch(/^ {2}\$ .*berth/);
    }
  });

  it("ls and list are status", async () => {
    const r = makeRepo();
    repo = r;
    for (const alias of ["ls", "list"]) {
      const run = await runBerth([alias, "--json"], { cwd: r.path, env: r.env });
      expect(run.code).toBe(0);
      expect(run.json).toMatchObject({ ok: true, verb: "status" });
      expect(run.json.data.worktrees).toHaveLength(1);
    }
  });

  it("flags that contradict or name nothing are usage errors that change nothing", async () => {
    const r = makeRepo();
    repo = r;
    const refs = () => r.git(["for-each-ref"]);
    const before = refs();
    const scopes = await runBerth(["status", "--local", "--all", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(scopes.code).toBe(2);
    expect(scopes.json.error.message).toBe(
      "--local (this checkout) and --all (the whole fleet) contradict each other: give one.",
    );
    // Empty, --from was "similar" to every ref in the repository.
    for (const from of ["", " "]) {
      const start = await runBerth(["start", "x", "--from", from, "--json"], {
        cwd: r.path,
        env: r.env,
      });
      expect(start.code).toBe(2);
      expect(start.json.error).toMatchObject({
        code: "usage",
        message: "--from needs a branch, tag or commit; it was given none.",
      });
    }
    expect(refs()).toBe(before);
    expect(r.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
  });

  it("a usage error names the --help of the command it came from, on stderr and as --json's next", async () => {
    const r = makeRepo();
    repo = r;
    const cases: [string[], string][] = [
      [["start", "--bogus"], "berth start --help"],
      [["ls", "--bogus"], "berth status --help"],
      [["worktree", "frob"], "berth worktree --help"],
      [["worktree", "drop"], "berth worktree drop --help"],
      [["hook", "stop"], "berth hook --help"],
      [["frob"], "berth --help"],
    ];
    for (const [args, help] of cases) {
      const human = await runBerth(args, { cwd: r.path, env: r.env });
      expect(human.code).toBe(2);
      expect(human.stderr).toContain(`(run ${help} for usage)`);
      const json = await runBerth([...args, "--json"], { cwd: r.path, env: r.env });
      expect(json.code).toBe(2);
      expect(json.json.error).toMatchObject({ code: "usage", next: help });
    }
  });

  it("berth drop and berth prune point at berth worktree drop|prune, with the arguments typed", async () => {
    const r = makeRepo();
    repo = r;
    const drop = await runBerth(["drop", "fix-login", "--force"], { cwd: r.path, env: r.env });
    expect(drop.code).toBe(2);
    expect(drop.stderr).toContain("berth worktree drop fix-login --force");
    const prune = await runBerth(["prune", "--contained", "--json"], { cwd: r.path, env: r.env });
    expect(prune.code).toBe(2);
    expect(prune.json.error).toMatchObject({
      code: "usage",
      next: "berth worktree prune --contained --json",
    });
  });
});

describe("berth init --agents", () => {
  it("writes berth.toml, creates AGENTS.md, appends to CLAUDE.md, and appends only once", async () => {
    const r = makeRepo();
    repo = r;
    writeFileSync(join(r.path, "CLAUDE.md"), "# Notes for Claude\n");
    const run = await runBerth(["init", "--agents", "--json"], { cwd: r.path, env: r.env });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(r.path, "berth.toml"))).toBe(true);
    const agents = readFileSync(join(r.path, "AGENTS.md"), "utf8");
    expect(agents).toMatch(/^<!-- berth:agents -->\n## Working here with berth\n/);
    for (const step of ["berth start", "berth gate", "berth accept", "berth await --landed"]) {
      expect(agents).toContain(step);
    }
    const claude = readFileSync(join(r.path, "CLAUDE.md"), "utf8");
    expect(claude.startsWith("# Notes for Claude\n\n<!-- berth:agents -->\n")).toBe(true);
    expect(run.json.data.agents.map((a: { outcome: string }) => a.outcome)).toEqual([
      "created",
      "appended",
    ]);

    const again = await runBerth(["init", "--agents", "--json"], { cwd: r.path, env: r.env });
    expect(again.code, again.stderr).toBe(0); // berth.toml kept, not refused
    expect(again.json.data.agents.map((a: { outcome: string }) => a.outcome)).toEqual([
      "already present",
      "already present",
    ]);
    expect(readFileSync(join(r.path, "AGENTS.md"), "utf8")).toBe(agents);
    expect(readFileSync(join(r.path, "CLAUDE.md"), "utf8")).toBe(claude);
  });

  it("refuses an instructions file it cannot read (a folder named CLAUDE.md), and writes nothing", async () => {
    const r = makeRepo();
    repo = r;
    mkdirSync(join(r.path, "CLAUDE.md"));
    const run = await runBerth(["init", "--agents", "--json"], { cwd: r.path, env: r.env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(run.json.error.message).toContain(`Cannot read ${join(r.path, "CLAUDE.md")} (EISDIR)`);
    expect(run.json.error.next).toBe(`ls -ld ${join(r.path, "CLAUDE.md")}`);
    expect(existsSync(join(r.path, "berth.toml"))).toBe(false);
    expect(existsSync(join(r.path, "AGENTS.md"))).toBe(false);
  });

  it("--untracked-cache after berth.toml exists keeps the file and says so, then what it set", async () => {
    const r = makeRepo();
    repo = r;
    expect((await runBerth(["init"], { cwd: r.path, env: r.env })).code).toBe(0);
    const toml = join(r.path, "berth.toml");
    const written = readFileSync(toml, "utf8");
    const run = await runBerth(["init", "--untracked-cache"], { cwd: r.path, env: r.env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`kept ${toml} as it is\nset core.untrackedCache = true\n`);
    expect(readFileSync(toml, "utf8")).toBe(written);
  }, 60_000);
});
