import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { berthBranches } from "./helpers/fleet.js";
import { makeRepo, repoAt, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * The bare-repository-plus-worktrees layout (`git clone --bare x repo.git`,
 * `git -C repo.git worktree add ../main main`) is a fleet like any other
 * (docs/decisions/0001): its main checkout is the worktree on the bare
 * repository's default branch, and berth.toml is read from there. Issue 15:
 * the gate said "no checks declared" and status refused in the bare folder.
 */

let upstream: TestRepo | undefined;
afterEach(() => upstream?.cleanup());

interface BareFleet {
  bare: string;
  main: TestRepo;
  marker: string;
}

/** A bare clone of a repository whose berth.toml declares one check, with `main` checked out beside it. */
function bareFleet(options: { addMain?: boolean } = {}): BareFleet {
  upstream = makeRepo({ name: "upstream" });
  const marker = join(upstream.dir.path, "check-ran");
  upstream.write(
    "berth.toml",
    `[gate]\nchecks = [{ name = "unit", run = "echo ran >> ${marker}" }]\n`,
  );
  upstream.commit("declare the gate");
  upstream.git(["branch", "side"]);
  const bare = join(upstream.dir.path, "repo.git");
  execFileSync("git", ["clone", "-q", "--bare", upstream.path, bare], { env: upstream.env });
  const mainPath = join(upstream.dir.path, "main");
  if (options.addMain !== false) {
    execFileSync("git", ["-C", bare, "worktree", "add", "-q", mainPath, "main"], {
      env: upstream.env,
    });
  }
  return { bare, main: repoAt(mainPath, upstream.dir), marker };
}

describe("a bare repository with worktrees", () => {
  it("works under safe.bareRepository = explicit: berth names the git dir it runs git in", async () => {
    const { main } = bareFleet();
    // That setting refuses a git dir found from inside it (the bare folder, or a
    // checkout's .git), where await runs its git; it allows one named by GIT_DIR.
    const global = join(upstream?.dir.path ?? "", "explicit.gitconfig");
    writeFileSync(global, "[safe]\n\tbareRepository = explicit\n");
    const env = { ...main.env, GIT_CONFIG_GLOBAL: global };
    const started = await runBerth(["start", "work", "--json"], { cwd: main.path, env });
    expect(started.code, started.stdout + started.stderr).toBe(0);
    const path = started.json.data.path as string;
    main.write("feature.txt", "feature\n", path);
    main.commit("feature", path);
    expect((await runBerth(["gate", "--json"], { cwd: path, env })).code).toBe(0);
    const green = await runBerth(
      ["await", "--green", started.json.data.id, "--timeout", "0", "--json"],
      { cwd: main.path, env },
    );
    expect(green.code, green.stdout + green.stderr).toBe(0);
    expect(green.json.data).toMatchObject({ met: true, met_by: "receipt" });
    const moved = await runBerth(["await", "--trunk-moved", "--timeout", "0", "--json"], {
      cwd: main.path,
      env,
    });
    expect(moved.code, moved.stdout + moved.stderr).toBe(124);
    const accept = await runBerth(["accept", "--yes", "--json"], { cwd: path, env });
    expect(accept.code, accept.stdout + accept.stderr).toBe(0);
  });

  it("the gate runs the checks berth.toml declares in the trunk's checkout", async () => {
    const { main, marker } = bareFleet();
    const gate = await runBerth(["gate", "--json"], { cwd: main.path, env: main.env });
    expect(gate.code, gate.stdout).toBe(0);
    expect(gate.json.data.checks).toEqual([
      expect.objectContaining({ name: "unit", outcome: "passed" }),
    ]);
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
  });

  it("status in the bare folder shows the fleet, the trunk's checkout as main", async () => {
    const { bare, main } = bareFleet();
    const started = await runBerth(["start", "work", "--json"], { cwd: bare, env: main.env });
    expect(started.code, started.stdout).toBe(0);
    for (const cwd of [bare, main.path]) {
      const status = await runBerth(["status", "--json"], { cwd, env: main.env });
      expect(status.code, status.stdout).toBe(0);
      expect(status.json.data.scope).toBe("fleet");
      expect(status.json.data.trunk.name).toBe("main");
      const rows = status.json.data.worktrees.map((w: { path: string; is_main: boolean }) => [
        w.path,
        w.is_main,
      ]);
      // The bare folder is no checkout: it is not a row.
      expect(rows).toEqual([
        [main.path, true],
        [started.json.data.path, false],
      ]);
    }
    // Run in the bare folder, a verb that needs a checkout says where to go.
    const gate = await runBerth(["gate", "--json"], { cwd: bare, env: main.env });
    expect(gate.json.error).toMatchObject({ code: "precondition_failed" });
    expect(gate.json.error.message).toContain("bare repository's folder");
  });

  it("a berth is gated and accepted; the trunk's checkout follows and is never removed", async () => {
    const { bare, main, marker } = bareFleet();
    const started = await runBerth(["start", "work", "--json"], { cwd: main.path, env: main.env });
    const path = started.json.data.path as string;
    main.write("feature.txt", "feature\n", path);
    main.commit("feature", path);
    const gate = await runBerth(["gate", "--json"], { cwd: path, env: main.env });
    expect(gate.code, gate.stdout).toBe(0);
    expect(readFileSync(marker, "utf8")).toBe("ran\n");

    const accept = await runBerth(["accept", "--yes", "--json"], { cwd: path, env: main.env });
    expect(accept.code, accept.stdout).toBe(0);
    expect(accept.json.data.landing.main_checkout_updated).toBe(true);
    expect(readFileSync(join(main.path, "feature.txt"), "utf8")).toBe("feature\n");
    expect(existsSync(path)).toBe(false);
    expect(berthBranches(main)).toEqual([]);

    const prune = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: bare,
      env: main.env,
    });
    expect(prune.code, prune.stdout).toBe(0);
    expect(existsSync(join(main.path, "feature.txt"))).toBe(true);
    expect(main.git(["worktree", "list", "--porcelain"])).toContain(`worktree ${main.path}`);
  });

  it("without a checkout of its default branch, berth refuses and says how to add one", async () => {
    const { bare, main } = bareFleet({ addMain: false });
    const side = join(upstream?.dir.path ?? "", "side");
    execFileSync("git", ["-C", bare, "worktree", "add", "-q", side, "side"], { env: main.env });
    let next = "";
    for (const cwd of [bare, side]) {
      const status = await runBerth(["status", "--json"], { cwd, env: main.env });
      expect(status.code).toBe(1);
      expect(status.json.error).toMatchObject({
        code: "not_a_repository",
        next: `git -C ${bare} worktree add ${main.path} main`,
      });
      expect(status.json.error.message).toContain("default branch main");
      next = status.json.error.next;
    }
    // The printed next, run as it stands, makes the layout work.
    execFileSync("sh", ["-c", next], { cwd: side, env: main.env });
    const status = await runBerth(["status", "--json"], { cwd: side, env: main.env });
    expect(status.code, status.stdout).toBe(0);
    expect(status.json.data.scope).toBe("local");
    expect(status.json.data.worktrees[0]).toMatchObject({ path: side, is_main: false });
  });

  it("without a checkout of its default branch, the next names a folder that is free (main-3 when main and main-2 are taken)", async () => {
    const { bare, main } = bareFleet({ addMain: false });
    mkdirSync(main.path);
    writeFileSync(join(main.path, "occupied"), "");
    writeFileSync(`${main.path}-2`, "a file, not a folder\n");
    const status = await runBerth(["status", "--json"], { cwd: bare, env: main.env });
    expect(status.code).toBe(1);
    expect(status.json.error).toMatchObject({
      code: "not_a_repository",
      next: `git -C ${bare} worktree add ${main.path}-3 main`,
    });
    // Nothing was touched, and the printed next works as it stands.
    expect(readFileSync(`${main.path}-2`, "utf8")).toBe("a file, not a folder\n");
    execFileSync("sh", ["-c", status.json.error.next], { cwd: bare, env: main.env });
    const after = await runBerth(["status", "--json"], { cwd: bare, env: main.env });
    expect(after.code, after.stdout).toBe(0);
  });
});
