import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Spec invariant 10, end to end: in a repository whose folder is named to
 * attack a shell, every `error.next` and the gate's reproduce line, executed
 * with `sh -c`, runs exactly the intended commands. `berth` and `git` are
 * stubs that only record their argv and cwd; `touch` is the real one, so an
 * unquoted `$(touch PWN)` would leave a file behind.
 */

const HOSTILE = "my repo 'q' $(touch PWN)";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

interface Call {
  argv: string[];
  cwd: string;
}

/** A bin folder whose `berth` and `git` append {argv, cwd} to `log`, one JSON line each. */
function stubBin(root: string): { bin: string; log: string } {
  const bin = join(root, "stub-bin");
  const log = join(root, "argv.jsonl");
  mkdirSync(bin);
  for (const name of ["berth", "git"]) {
    const file = join(bin, name);
    writeFileSync(
      file,
      `#!${process.execPath}\n` +
        `require("fs").appendFileSync(process.env.ARGV_LOG, JSON.stringify({ argv: [${JSON.stringify(name)}, ...process.argv.slice(2)], cwd: process.cwd() }) + "\\n");\n`,
    );
    chmodSync(file, 0o755);
  }
  // Real enough to be dangerous: env and sh for `env BERTH_…=… sh -c` reproduce lines
  // (the berth's hostile path is one of the values), touch for the attack.
  for (const tool of ["env", "sh", "touch"]) {
    const real = spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" });
    symlinkSync(real.stdout.trim(), join(bin, tool));
  }
  return { bin, log };
}

/** Files named PWN anywhere under `dir`. */
function pwned(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter(
    (p) => p === "PWN" || p.endsWith("/PWN"),
  );
}

describe("printed commands in a hostile folder (invariant 10)", () => {
  it("every next and reproduce line runs exactly its arguments", async () => {
    repo = makeRepo({
      name: HOSTILE,
      config: '[gate]\nchecks = [{ name = "unit", run = "git log -1 --format=%s; false" }]\n',
    });
    const root = repo.dir.path;
    const env = repo.env;
    const main = repo.path;
    expect(main.endsWith(`/${HOSTILE}`)).toBe(true);
    const { bin, log } = stubBin(root);
    const sandbox = join(root, "sandbox");
    mkdirSync(sandbox);

    /** Runs `command` with sh in the sandbox, the stubs first on PATH; the calls it made. */
    const execute = (command: string): Call[] => {
      rmSync(log, { force: true });
      const run = spawnSync("/bin/sh", ["-c", command], {
        cwd: sandbox,
        env: { PATH: bin, ARGV_LOG: log, HOME: repo.dir.home },
        encoding: "utf8",
      });
      expect(run.error).toBeUndefined();
      if (!existsSync(log)) return [];
      return readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Call);
    };
    const refused = async (args: string[], cwd: string, code: string) => {
      const result = await runBerth([...args, "--json"], { cwd, env });
      expect(result.code, result.stdout + result.stderr).not.toBe(0);
      expect(result.json.error.code).toBe(code);
      expect(typeof result.json.error.next).toBe("string");
      return result.json.error.next as string;
    };
    const cases: { name: string; command: string; calls: Call[] }[] = [];
    const expectCalls = (name: string, command: string, calls: Call[]) =>
      cases.push({ name, command, calls });

    const started = await runBerth(["start", "work", "--json"], { cwd: main, env });
    expect(started.code, started.stderr).toBe(0);
    const berth = started.json.data.path as string;
    const id = started.json.data.id as string;
    expect(berth).toContain(HOSTILE);

    // start --from a ref that does not exist: the list of refs, in the repository.
    expectCalls(
      "start --from unknown",
      await refused(["start", "x", "--from", "nope"], main, "unknown_target"),
      [
        {
          argv: [
            "git",
            "-C",
            main,
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads",
            "refs/tags",
          ],
          cwd: sandbox,
        },
      ],
    );

    repo.write("feature.txt", "one\n", berth);
    repo.commit("feature", berth);

    // gate on a dirty tree: stash in the berth, then gate.
    repo.write("scratch.txt", "x\n", berth);
    expectCalls("gate on a dirty tree", await refused(["gate"], berth, "precondition_failed"), [
      { argv: ["git", "-C", berth, "stash", "-u"], cwd: sandbox },
      { argv: ["berth", "gate"], cwd: sandbox },
    ]);
    // accept on a dirty tree: a next that names the berth's path.
    expectCalls(
      "accept on a dirty tree",
      await refused(["accept", id], main, "precondition_failed"),
      [
        { argv: ["git", "-C", berth, "stash", "-u"], cwd: sandbox },
        { argv: ["berth", "accept", id], cwd: sandbox },
      ],
    );
    rmSync(join(berth, "scratch.txt"));

    // update with tracked changes.
    repo.write("feature.txt", "changed\n", berth);
    expectCalls(
      "update with tracked changes",
      await refused(["update"], berth, "precondition_failed"),
      [
        { argv: ["git", "-C", berth, "stash"], cwd: sandbox },
        { argv: ["berth", "update"], cwd: sandbox },
      ],
    );
    repo.git(["checkout", "--", "feature.txt"], berth);

    // A failing check: the JSON next and the human reproduce line run it in the berth.
    const reproduceCalls = [{ argv: ["git", "log", "-1", "--format=%s"], cwd: berth }];
    expectCalls(
      "gate red (json next)",
      await refused(["gate"], berth, "gate_failed"),
      reproduceCalls,
    );
    const human = await runBerth(["gate"], { cwd: berth, env });
    expect(human.code).toBe(1);
    const reproduce = /^reproduce: (.*)$/m.exec(human.stderr)?.[1];
    expect(reproduce, human.stderr).toBeDefined();
    expectCalls("gate red (human reproduce line)", reproduce as string, reproduceCalls);

    // drop without --force while the berth holds unlanded commits.
    expectCalls(
      "drop with unlanded commits",
      await refused(["worktree", "drop", id], main, "precondition_failed"),
      [{ argv: ["berth", "worktree", "drop", id, "--force"], cwd: sandbox }],
    );
    // With --force but no terminal and no --yes: the --yes command.
    expectCalls(
      "drop --force without --yes",
      await refused(["worktree", "drop", id, "--force"], main, "confirmation_required"),
      [{ argv: ["berth", "worktree", "drop", id, "--force", "--yes"], cwd: sandbox }],
    );

    // accept while the berth is behind the trunk: the queue would land it through an
    // integration commit; with no terminal and no --yes it waits for a person's approval,
    // and the next command is the person's accept.
    repo.write("trunk.txt", "moved\n");
    repo.commit("trunk moves");
    expectCalls("accept while behind", await refused(["accept", id], main, "awaiting_approval"), [
      { argv: ["berth", "accept", id], cwd: sandbox },
    ]);

    const ran = cases.map((c) => ({ name: c.name, calls: execute(c.command) }));
    expect(pwned(root)).toEqual([]);
    expect(existsSync(join(process.cwd(), "PWN"))).toBe(false);
    expect(ran).toEqual(cases.map((c) => ({ name: c.name, calls: c.calls })));
  });
});
