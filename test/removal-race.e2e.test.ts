import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gitShim, REAL_GIT } from "./helpers/git-shim.js";
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
  const PATH = gitShim(
    dir,
    "late-writer",
    [
      "for last; do :; done",
      'case " $* " in *" worktree remove "*) printf "written late\\n" > "$last/late.txt" ;; esac',
    ],
    env.PATH,
  );
  return { ...env, PATH };
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

/**
 * A removal that fails half-way (a file git cannot delete: an immutable or
 * busy one): git forgets the checkout but its folder stays. A `git` on PATH
 * stands in for that: the real removal, then a file left in the folder and
 * git's error.
 */
function halfFailingRemoval(dir: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const PATH = gitShim(
    dir,
    "half-removing",
    [
      "for last; do :; done",
      'case " $* " in *" worktree remove "*)',
      `  '${REAL_GIT}' "$@" || exit $?`,
      '  mkdir -p "$last" && printf "kept\\n" > "$last/build.log"',
      `  echo "error: failed to delete '$last': Operation not permitted" >&2; exit 255 ;;`,
      "esac",
    ],
    env.PATH,
  );
  return { ...env, PATH };
}

describe("a removal git could finish only half-way", () => {
  it("park says git forgot the checkout but its folder is left, and never that nothing changed", async () => {
    repo = makeRepo({
      config: `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'true'\n`,
    });
    const r = repo;
    const started = await runBerth(["start", "half", "--json"], { cwd: r.path, env: r.env });
    const b = started.json.data as { id: string; branch: string; path: string };
    r.write("half.txt", "half\n", b.path);
    r.commit("half", b.path);
    const env = halfFailingRemoval(r.dir.path, r.env);

    const park = await runBerth(["worktree", "park", b.id, "--yes"], { cwd: r.path, env });
    expect(park.code).toBe(1);
    expect(park.stderr).toContain(`git no longer knows ${b.path} as a checkout`);
    // Its resource was destroyed and git forgot it: something did change.
    expect(park.stderr).not.toContain("Nothing changed");
    expect(park.stderr).toContain(`next: ls -A -- ${b.path}`);
    // Later, status still names the folder: nothing else in the fleet would.
    const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(status.json.hints).toContain(
      `${b.path} is left from a berth: git no longer knows it as a checkout (a removal failed half-way); look at what is in it, then delete the folder by hand`,
    );
    expect(readFileSync(join(b.path, "build.log"), "utf8")).toBe("kept\n");
    expect(r.git(["branch", "--list", b.branch])).toContain(b.branch);
  });
  it("prune --yes of a landed berth names the folder left, and does not blame a destroy command", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "landed", "--json"], { cwd: r.path, env: r.env });
    const b = started.json.data as { id: string; branch: string; path: string };
    r.write("landed.txt", "landed\n", b.path);
    r.commit("landed", b.path);
    r.git(["merge", "-q", "--ff-only", b.branch]);
    const env = halfFailingRemoval(r.dir.path, r.env);

    const prune = await runBerth(["worktree", "prune", "--yes", "--json"], { cwd: r.path, env });
    expect(prune.code).toBe(1);
    expect(prune.json.data.skipped).toEqual([
      expect.objectContaining({
        section: "landed",
        target: b.path,
        reason: expect.stringContaining(`git no longer knows ${b.path} as a checkout`),
      }),
    ]);
    expect(prune.json.error.message).not.toContain("Fix the failing destroy command");
    expect(readFileSync(join(b.path, "build.log"), "utf8")).toBe("kept\n");
  });
});
