import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { attentionReasons } from "../src/core/desk/model.js";
import { makeTwoMachines, startWithCommit, type TwoMachines } from "./helpers/remote.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Integrated berths (spec section 13, docs/decisions/0050): work merged into
 * the trunk by a squash or rebase merge, so its commits are never ancestors
 * of the trunk. A bare repository on disk is the forge's remote; clone two
 * squash-merges by hand, as a forge's button would.
 */

let machines: TwoMachines | undefined;
let local: TestRepo | undefined;
afterEach(() => {
  machines?.cleanup();
  local?.cleanup();
  machines = undefined;
  local = undefined;
});

const rowOf = (json: { data: { worktrees: { id: string }[] } }, id: string) =>
  json.data.worktrees.find((w) => w.id === id) as Record<string, unknown> | undefined;

describe("a berth squash-merged on the remote's trunk", () => {
  it("is integrated after a fetch, in prune's landed section, and pruned behind a recovery ref", async () => {
    const m = makeTwoMachines();
    machines = m;
    const x = await startWithCommit(m, m.one, "x");
    m.one.git(["push", "-q", "origin", x.branch], x.path);
    // The forge's squash merge, by hand in clone two, then a later unrelated commit.
    m.two.git(["fetch", "-q", "origin", x.branch]);
    m.two.git(["merge", "-q", "--squash", "FETCH_HEAD"]);
    m.two.commit("x (squashed)");
    m.two.write("later.txt", "later\n");
    m.two.commit("later work");
    m.two.git(["push", "-q", "origin", "main"]);

    const before = await m.berth(["status", "--json"]);
    expect(rowOf(before.json, x.id)?.state).toBe("active");

    m.one.git(["fetch", "-q", "origin"]);
    const after = await m.berth(["status", "--json"]);
    expect(after.code).toBe(0);
    expect(rowOf(after.json, x.id)).toMatchObject({ state: "integrated", ahead: 1 });
    // The local trunk did not move: integration is judged against the remote's trunk as fetched.
    expect(after.json.data.trunk.tip).toBe(m.one.git(["rev-parse", "main"]));
    // await asks the same rule, of the remote's trunk.
    const landed = await m.berth([
      "await",
      "--landed",
      x.branch,
      "--remote",
      "--timeout",
      "0",
      "--json",
    ]);
    expect(landed.code, landed.stdout + landed.stderr).toBe(0);
    expect(landed.json.data).toMatchObject({ met: true, met_by: "landed", landed_commit: x.tip });

    const dry = await m.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.json.data.sections.landed).toEqual([
      expect.objectContaining({
        kind: "worktree",
        id: x.id,
        integrated: true,
        delete_branch: x.branch,
      }),
    ]);
    // The confirmation does not claim the commits are on the trunk: it names the recovery ref.
    const unconfirmed = await m.berth(["worktree", "prune"]);
    expect(unconfirmed.stdout + unconfirmed.stderr).not.toContain("their commits are on the trunk");
    expect(unconfirmed.stdout + unconfirmed.stderr).toContain(
      "tear down 1 integrated berth(s) and delete their branches, each after a recovery ref under refs/berth/recovery/",
    );

    const apply = await m.berth(["worktree", "prune", "--yes", "--json"]);
    expect(apply.code).toBe(0);
    expect(existsSync(x.path)).toBe(false);
    expect(m.one.git(["branch", "--list", x.branch])).toBe("");
    const recovery = m.one.git([
      "for-each-ref",
      "--format=%(refname) %(objectname)",
      "refs/berth/recovery",
    ]);
    expect(recovery).toMatch(new RegExp(`^refs/berth/recovery/\\S+-${x.id} ${x.tip}$`));
    const order = apply.json.data.applied.map((a: { action: string }) => a.action);
    expect(order.indexOf("wrote recovery ref")).toBeLessThan(
      order.indexOf("tore down landed berth"),
    );
  });
});

describe("a berth the other clone landed with its commits (fast-forward or merge)", () => {
  it.each([
    ["fast-forward", ["merge", "-q", "--ff-only"]],
    ["merge", ["merge", "-q", "--no-ff", "-m", "merge x"]],
  ])(
    "is landed after a fetch, and pruned with its branch and no recovery ref (%s)",
    async (_how, merge) => {
      const m = makeTwoMachines();
      machines = m;
      const x = await startWithCommit(m, m.one, "x");
      m.one.git(["push", "-q", "origin", x.branch], x.path);
      // A branch with no checkout, on the remote trunk too; and one that is not.
      const kept = await startWithCommit(m, m.one, "kept");
      m.one.git(["push", "-q", "origin", kept.branch], kept.path);
      m.one.git(["worktree", "remove", kept.path]);
      const y = await startWithCommit(m, m.one, "y");
      m.two.git(["fetch", "-q", "origin", x.branch, kept.branch]);
      m.two.git([...merge, `origin/${x.branch}`]);
      m.two.git(["merge", "-q", "--no-ff", "-m", "merge kept", `origin/${kept.branch}`]);
      m.two.git(["push", "-q", "origin", "main"]);

      m.one.git(["fetch", "-q", "origin"]);
      const status = await m.berth(["status", "--json"]);
      expect(status.code).toBe(0);
      expect(rowOf(status.json, x.id)).toMatchObject({ state: "landed" });
      expect(rowOf(status.json, y.id)).toMatchObject({ state: "active" });
      expect(status.json.data.trunk.tip).toBe(m.one.git(["rev-parse", "main"]));

      const dry = await m.berth(["worktree", "prune", "--dry-run", "--json"]);
      expect(dry.json.data.sections.landed).toEqual([
        expect.objectContaining({ kind: "worktree", id: x.id, integrated: false }),
        expect.objectContaining({ kind: "branch", branch: kept.branch, integrated: false }),
      ]);
      const apply = await m.berth(["worktree", "prune", "--yes", "--json"]);
      expect(apply.code).toBe(0);
      expect(existsSync(x.path)).toBe(false);
      expect(existsSync(y.path)).toBe(true);
      expect(m.one.git(["branch", "--list", x.branch, kept.branch])).toBe("");
      expect(m.one.git(["rev-parse", y.branch])).toBe(y.tip);
      // Their commits are on the remote trunk as fetched: no recovery ref is needed.
      expect(m.one.git(["for-each-ref", "refs/berth/recovery"])).toBe("");
    },
  );
});

describe("integrated without a remote", () => {
  it("a tree equal to the trunk's is integrated; the desk never advises update; await --landed is met", async () => {
    local = makeRepo({ config: "[logbook]\nenabled = false\n" });
    const r = local;
    const env = r.env;
    const start = await runBerth(["start", "y", "--json"], { cwd: r.path, env });
    const y = start.json.data as { id: string; path: string; branch: string };
    r.write("y.txt", "y\n", y.path);
    const tip = r.commit("y", y.path);
    r.git(["merge", "-q", "--squash", y.branch]);
    r.commit("y (squashed)");

    const status = await runBerth(["status", "--json"], { cwd: r.path, env });
    const row = rowOf(status.json, y.id);
    expect(row).toMatchObject({ state: "integrated", ahead: 1, behind: 1 });
    const reasons = attentionReasons(row as never, "main", new Date());
    expect(reasons.join("\n")).not.toContain("berth update");
    expect(reasons.join("\n")).toContain("integrated");

    const landed = await runBerth(["await", "--landed", y.branch, "--timeout", "0", "--json"], {
      cwd: r.path,
      env,
    });
    expect(landed.code).toBe(0);
    expect(landed.json.data).toMatchObject({ met: true });

    // accept refuses: landing it would put its commits on the trunk a second time.
    const trunkBefore = r.git(["rev-parse", "main"]);
    const accept = await runBerth(["accept", y.id, "--yes", "--json"], { cwd: r.path, env });
    expect(accept.code).toBe(1);
    expect(accept.json.error.code).toBe("precondition_failed");
    expect(accept.json.error.message).toContain("integrated");
    expect(r.git(["rev-parse", "main"])).toBe(trunkBefore);

    // drop is not prune: integrated work still needs --force there, and the branch is untouched.
    const remove = await runBerth(["worktree", "drop", y.id, "--yes", "--json"], {
      cwd: r.path,
      env,
    });
    expect(remove.code).not.toBe(0); // drop still needs --force: its commits are not on the trunk.
    expect(r.git(["rev-parse", y.branch])).toBe(tip);
  });

  it("a berth whose merge into the trunk would change something stays active", async () => {
    local = makeRepo({ config: "[logbook]\nenabled = false\n" });
    const r = local;
    const start = await runBerth(["start", "z", "--json"], { cwd: r.path, env: r.env });
    const z = start.json.data as { id: string; path: string };
    r.write("z.txt", "z\n", z.path);
    r.commit("z", z.path);
    r.write("other.txt", "other\n");
    r.commit("unrelated trunk work");
    const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(rowOf(status.json, z.id)?.state).toBe("active");
  });

  it.each([
    ["a binary file", "logo.bin", "", (side: string) => `${side}\0bin`],
    [
      "a merge driver's file",
      "notes.txt",
      "notes.txt merge=keep-ours\n",
      (side: string) => `${side}\n`,
    ],
  ])(
    "a conflict in %s is not integrated, though git's conflicted tree is the trunk's: status keeps it active, prune keeps it",
    async (_, file, attributes, content) => {
      local = makeRepo({ config: "[logbook]\nenabled = false\n" });
      const r = local;
      // A driver that fails keeps the trunk's side in merge-tree's tree, as a binary conflict does.
      r.git(["config", "merge.keep-ours.driver", "false"]);
      if (attributes !== "") r.write(".gitattributes", attributes);
      writeFileSync(join(r.path, file), content("base"));
      r.commit("the shared file");
      const start = await runBerth(["start", "c", "--json"], { cwd: r.path, env: r.env });
      const c = start.json.data as { id: string; branch: string; path: string };
      writeFileSync(join(c.path, file), content("berth"));
      const tip = r.commit("the berth's version", c.path);
      writeFileSync(join(r.path, file), content("trunk"));
      r.commit("the trunk's version");

      const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
      expect(rowOf(status.json, c.id)?.state).toBe("active");
      const apply = await runBerth(["worktree", "prune", "--yes", "--json"], {
        cwd: r.path,
        env: r.env,
      });
      expect(apply.code).toBe(0);
      expect(existsSync(c.path)).toBe(true);
      expect(r.git(["rev-parse", c.branch])).toBe(tip);
    },
  );

  it("an integrated branch with no checkout leaves status refs and is pruned behind a recovery ref", async () => {
    local = makeRepo({ config: "[logbook]\nenabled = false\n" });
    const r = local;
    const start = await runBerth(["start", "k", "--json"], { cwd: r.path, env: r.env });
    const k = start.json.data as { id: string; path: string; branch: string };
    r.write("k.txt", "k\n", k.path);
    const tip = r.commit("k", k.path);
    // Its checkout goes (the branch stays), then the work is squash-merged.
    r.git(["worktree", "remove", k.path]);
    const kept = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(kept.json.data.refs.map((x: { branch: string }) => x.branch)).toEqual([k.branch]);
    r.git(["merge", "-q", "--squash", k.branch]);
    r.commit("k (squashed)");

    const status = await runBerth(["status", "--json"], { cwd: r.path, env: r.env });
    expect(status.json.data.refs).toEqual([]);
    const dry = await runBerth(["worktree", "prune", "--dry-run", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(dry.json.data.sections.landed).toEqual([
      { kind: "branch", branch: k.branch, tip, integrated: true },
    ]);
    const apply = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(apply.code, apply.stdout).toBe(0);
    expect(r.git(["branch", "--list", k.branch])).toBe("");
    const recovery = r.git(["for-each-ref", "--format=%(objectname)", "refs/berth/recovery"]);
    expect(recovery).toBe(tip);
  });
});

describe("a branch with no work of its own is not integrated, for await as for status", () => {
  it.each([
    [
      "only an empty commit",
      (m: TwoMachines, path: string) => m.one.commit("wip: nothing yet", path),
    ],
    [
      "a commit and its revert",
      (m: TwoMachines, path: string) => {
        m.one.write("x.txt", "x\n", path);
        m.one.commit("x", path);
        m.one.git(["revert", "--no-edit", "HEAD"], path);
        return m.one.git(["rev-parse", "HEAD"], path);
      },
    ],
  ])("%s: status says active, await --landed (local and --remote) is not met", async (_, work) => {
    const m = makeTwoMachines();
    machines = m;
    const start = await m.berth(["start", "x", "--json"]);
    const x = start.json.data as { id: string; branch: string; path: string };
    const tip = work(m, x.path);
    m.one.git(["push", "-q", "origin", x.branch], x.path);

    const status = await m.berth(["status", "--json"]);
    expect(rowOf(status.json, x.id)).toMatchObject({ state: "active" });
    const here = await m.berth(["await", "--landed", x.branch, "--timeout", "0", "--json"]);
    expect(here.code, here.stdout + here.stderr).toBe(124);
    expect(here.json.data).toMatchObject({ met: false, tip });
    const there = await m.berth(
      ["await", "--landed", x.branch, "--remote", "--timeout", "0", "--json"],
      m.two.path,
    );
    expect(there.code, there.stdout + there.stderr).toBe(124);
    expect(there.json.data).toMatchObject({ met: false, tip });
  });
});
