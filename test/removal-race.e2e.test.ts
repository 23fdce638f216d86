import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * A file an agent writes into a berth after berth's last `git status` and
 * before git deletes the checkout must stop the removal, never go with it
 * (invariant 1). A `git` on PATH writes that file at the worst moment, as
 * the real `git worktree remove` starts, then runs the real git.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const LATE = "late.txt";

function lateWriter(dir: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const bin = join(dir, "late-writer-bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, "git"),
    [
      "#!/bin/sh",
      "for last; do :; done",
      'case " $* " in *" worktree remove "*) printf "written late\\n" > "$last/late.txt" ;; esac',
      `exec '${realGit}' "$@"`,
      "",
    ].join("\n"),
  );
  chmodSync(join(bin, "git"), 0o755);
  return { ...env, PATH: `${bin}:${env.PATH ?? ""}` };
}

function setUp() {
  repo = makeRepo();
  const r = repo;
  // git's own check before deleting is `git status`: a user who hides untracked files there must not lose them.
  r.git(["config", "status.showUntrackedFiles", "no"]);
  const env = lateWriter(r.dir.path, r.env);
  return { r, berth: (args: string[]) => runBerth(args, { cwd: r.path, env }) };
}

async function startWithCommit(f: ReturnType<typeof setUp>, name: string) {
  const run = await f.berth(["start", name, "--json"]);
  expect(run.code).toBe(0);
  const b = run.json.data as { id: string; branch: string; path: string };
  f.r.write(`${name}.txt`, `${name}\n`, b.path);
  f.r.commit(name, b.path);
  return b;
}

describe("a file written while a checkout is being removed stays", () => {
  it("prune --yes of a landed berth: the removal stops, the file, checkout and branch stay", async () => {
    const f = setUp();
    const b = await startWithCommit(f, "landed");
    f.r.git(["merge", "-q", "--ff-only", b.branch]);

    const prune = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(prune.code).not.toBe(0);
    expect(JSON.stringify(prune.json)).toContain("changed while it was being removed");
    expect(readFileSync(join(b.path, LATE), "utf8")).toBe("written late\n");
    expect(f.r.git(["worktree", "list", "--porcelain"])).toContain(b.path);
    expect(f.r.git(["branch", "--list", b.branch])).toContain(b.branch);
  });

  it("park: the removal stops and the file stays", async () => {
    const f = setUp();
    const b = await startWithCommit(f, "parked");

    const park = await f.berth(["worktree", "park", b.id, "--yes", "--json"]);
    expect(park.code).not.toBe(0);
    expect(readFileSync(join(b.path, LATE), "utf8")).toBe("written late\n");
    expect(existsSync(join(b.path, "parked.txt"))).toBe(true);
  });
});
