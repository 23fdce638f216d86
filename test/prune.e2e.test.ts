import { existsSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendLogbookEvent, logbookDir } from "../src/io/logbook.js";
import { commonDirOf, ledgerFiles, markerLines, worktreePaths } from "./helpers/fleet.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * `berth worktree prune` and the contained reclaim (ADR 0225), end to end
 * through the built binary on real repositories.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const RESOURCE = `[worktree.resources.db]
create = 'echo "create $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy $BERTH_ID" >> "$MARKER"'
`;

interface Berth {
  id: string;
  branch: string;
  path: string;
}

interface Fleet {
  repo: TestRepo;
  env: NodeJS.ProcessEnv;
  marker: string;
  berth: (args: string[], cwd?: string) => ReturnType<typeof runBerth>;
}

function setUp(options: { logbook?: boolean; resource?: string } = {}): Fleet {
  const config = `${options.resource ?? RESOURCE}\n[logbook]\nenabled = ${options.logbook ?? false}\n`;
  repo = makeRepo({ config });
  const marker = join(repo.dir.path, "marker");
  const env = { ...repo.env, MARKER: marker };
  const r = repo;
  return { repo: r, env, marker, berth: (args, cwd = r.path) => runBerth(args, { cwd, env }) };
}

async function start(f: Fleet, name: string, from?: Berth): Promise<Berth> {
  const run = await f.berth(["start", name, ...(from ? ["--from", from.branch] : []), "--json"]);
  if (run.code !== 0) throw new Error(`start ${name}: ${run.stdout}${run.stderr}`);
  const data = run.json.data as Berth;
  f.repo.write(`${name}.txt`, `${name}\n`, data.path);
  f.repo.commit(name, data.path);
  return data;
}

/** Makes a berth's git-derived activity two hours old (the reflog is already in January). */
function backdate(f: Fleet, ...berths: Berth[]): void {
  const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
  for (const b of berths) {
    const key = f.repo.git(["rev-parse", "--git-dir"], b.path).split("/").pop() as string;
    utimesSync(join(commonDirOf(f.repo), "worktrees", key), old, old);
  }
}

async function train(f: Fleet): Promise<[Berth, Berth, Berth]> {
  const a = await start(f, "a");
  const b = await start(f, "b", a);
  const c = await start(f, "c", b);
  backdate(f, a, b, c);
  return [a, b, c];
}

const refsOf = (r: TestRepo) => r.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
const tipOf = (r: TestRepo, b: Berth) => r.git(["rev-parse", b.branch]);

describe("the contained offer", () => {
  it("lists each spent stage with its evidence; the default apply skips them", async () => {
    const f = setUp();
    const [a, b, c] = await train(f);
    const dry = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    const contained = dry.json.data.sections.contained;
    expect(contained).toEqual([
      {
        id: a.id,
        path: a.path,
        branch: a.branch,
        tip: tipOf(f.repo, a),
        container: b.branch,
        container_tip: tipOf(f.repo, b),
        container_ahead: 1,
        container_has_checkout: true,
        admin_key: expect.any(String),
        resources: ["db"],
        ignored: { files: 0, bytes: 0, largest: [] },
      },
      expect.objectContaining({
        id: b.id,
        container: c.branch,
        container_ahead: 1,
        tip: tipOf(f.repo, b),
      }),
    ]);
    expect(dry.stderr).toBe(""); // --json: the document only, on stdout
    const human = await f.berth(["worktree", "prune", "--dry-run"]);
    expect(human.stdout).toContain("contained (offer only");
    expect(human.stdout).toContain(`${b.branch}`);
    expect(human.stdout).toContain("+1");

    const before = refsOf(f.repo);
    const apply = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(apply.code).toBe(0);
    expect(worktreePaths(f.repo)).toEqual([f.repo.path, a.path, b.path, c.path]);
    expect(refsOf(f.repo)).toBe(before);
    expect(markerLines(f.marker).filter((l) => l.startsWith("destroy"))).toEqual([]);
  });

  it("prune --contained --yes reclaims A and B, keeps their refs, destroys their resources once", async () => {
    const f = setUp();
    const [a, b, c] = await train(f);
    const keyOf = (x: Berth) => f.repo.git(["rev-parse", "--git-dir"], x.path);
    const adminA = keyOf(a);
    const adminB = keyOf(b);
    const refsBefore = refsOf(f.repo);
    const run = await f.berth(["worktree", "prune", "--contained", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(
      run.json.data.applied.map((r: { section: string; target: string }) => [r.section, r.target]),
    ).toEqual([
      ["contained", a.path],
      ["contained", b.path],
    ]);
    expect(existsSync(a.path)).toBe(false);
    expect(existsSync(b.path)).toBe(false);
    expect(existsSync(adminA)).toBe(false); // per-berth state (receipt, marker) gone with it
    expect(existsSync(adminB)).toBe(false);
    expect(existsSync(c.path)).toBe(true);
    expect(worktreePaths(f.repo)).toEqual([f.repo.path, c.path]);
    // No ref changed at all: the reclaim never deletes or moves a ref.
    expect(refsOf(f.repo)).toBe(refsBefore);
    const destroys = markerLines(f.marker).filter((l) => l.startsWith("destroy"));
    expect(destroys.sort()).toEqual([`destroy ${a.id}`, `destroy ${b.id}`].sort());
    expect(ledgerFiles(f.repo)).toHaveLength(1); // C's

    // The kept refs are a calm fact beside their live container...
    const status = await f.berth(["status", "--json"]);
    expect(status.json.data.refs).toEqual([
      expect.objectContaining({ branch: a.branch, contained_by: c.branch, abandoned: false }),
      expect.objectContaining({ branch: b.branch, contained_by: c.branch, abandoned: false }),
    ]);
    const human = await f.berth(["status"]);
    expect(human.stdout).toContain(`kept ref ${a.branch}`);
    expect(human.stdout).not.toContain("abandoned work");

    // ...until nothing live holds them.
    const drop = await f.berth(["worktree", "drop", c.id, "--force", "--yes", "--json"]);
    expect(drop.code).toBe(0);
    const after = await f.berth(["status", "--json"]);
    expect(after.json.data.refs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ branch: a.branch, contained_by: null, abandoned: true }),
        expect.objectContaining({ branch: b.branch, contained_by: null, abandoned: true }),
      ]),
    );
    const warned = await f.berth(["status"]);
    expect(warned.stdout).toContain("abandoned work");
    expect(warned.stdout).toContain(`berth start --from ${a.branch}`);
  });

  it("never reclaims without a fresh confirmation: no TTY and no --yes refuses; --yes alone skips the offer", async () => {
    const f = setUp();
    const [a, b] = await train(f);
    const before = JSON.stringify([refsOf(f.repo), worktreePaths(f.repo), ledgerFiles(f.repo)]);
    const refused = await f.berth(["worktree", "prune", "--contained", "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe("confirmation_required");
    expect(refused.json.plan.steps.length).toBeGreaterThan(0);
    expect(JSON.stringify([refsOf(f.repo), worktreePaths(f.repo), ledgerFiles(f.repo)])).toBe(
      before,
    );
    const human = await f.berth(["worktree", "prune", "--contained"]);
    expect(human.stderr).toContain("keeps:");
    expect(human.stderr).toContain("the gate receipt included");

    const yesOnly = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(yesOnly.code).toBe(0);
    expect(existsSync(a.path) && existsSync(b.path)).toBe(true);
  });

  it("never offers the checkout running prune, nor a stage with a verb in flight", async () => {
    const f = setUp({ logbook: true });
    const [a, b] = await train(f);
    const fromA = await f.berth(["worktree", "prune", "--dry-run", "--json"], a.path);
    expect(fromA.json.data.sections.contained.map((r: Berth) => r.id)).toEqual([b.id]);

    appendLogbookEvent(logbookDir(commonDirOf(f.repo)), {
      schema: 1,
      event: "begin",
      at: new Date().toISOString(),
      invocation: "in-flight-gate",
      verb: "gate",
      branch: b.branch,
      path: b.path,
      target: b.branch,
      pid: process.pid,
      host: hostname(),
    });
    const run = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(run.json.data.sections.contained.map((r: Berth) => r.id)).toEqual([a.id]);
  });

  it("withholds a stage active ten minutes ago when the logbook is off", async () => {
    const f = setUp();
    const [a] = await train(f);
    const key = f.repo.git(["rev-parse", "--git-dir"], a.path);
    const recent = new Date(Date.now() - 10 * 60 * 1000);
    utimesSync(key, recent, recent);
    const run = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(run.json.data.sections.contained.map((r: Berth) => r.id)).not.toContain(a.id);
  });

  it("refuses the reclaim of a berth whose destroy fails, keeps it whole, still reclaims the others", async () => {
    const resource = `[worktree.resources.db]
create = 'echo "create $BERTH_ID" >> "$MARKER"'
destroy = 'if [ "$BERTH_ID" = "$FAIL_ID" ]; then echo "cannot drop $BERTH_ID" >&2; exit 3; fi; echo "destroy $BERTH_ID" >> "$MARKER"'
`;
    const f = setUp({ resource });
    const [a, b] = await train(f);
    const env = { ...f.env, FAIL_ID: a.id };
    const run = await runBerth(["worktree", "prune", "--contained", "--yes", "--json"], {
      cwd: f.repo.path,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("teardown_failed");
    expect(run.json.data.skipped).toEqual([
      expect.objectContaining({
        section: "contained",
        target: a.path,
        reason: expect.stringContaining("cannot drop"),
      }),
    ]);
    expect(existsSync(a.path)).toBe(true);
    expect(ledgerFiles(f.repo).length).toBe(2); // A's entry kept, C's
    expect(existsSync(b.path)).toBe(false);
    expect(markerLines(f.marker).filter((l) => l.startsWith("destroy"))).toEqual([
      `destroy ${b.id}`,
    ]);
  });
});

describe("nothing to prune", () => {
  it("--yes with nothing to do says so; it is no dry run", async () => {
    repo = makeRepo();
    const run = await runBerth(["worktree", "prune", "--yes"], { cwd: repo.path, env: repo.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Nothing to prune.");
    expect(run.stdout).not.toContain("dry run");
    const json = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(json.json).toMatchObject({ ok: true, steps: [] });
    const dry = await runBerth(["worktree", "prune", "--dry-run"], {
      cwd: repo.path,
      env: repo.env,
    });
    expect(dry.stdout).toContain("(dry run: nothing changed)");
  });
});

describe("a parked berth", () => {
  it("parked before its first commit keeps its branch, title and brief through a prune", async () => {
    repo = makeRepo();
    const r = repo;
    const started = await runBerth(["start", "idea", "--title", "An idea", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    const { id, branch } = started.json.data as { id: string; branch: string };
    const parked = await runBerth(["worktree", "park", id, "--yes"], { cwd: r.path, env: r.env });
    expect(parked.code, parked.stderr).toBe(0);

    const pruned = await runBerth(["worktree", "prune", "--yes", "--json"], {
      cwd: r.path,
      env: r.env,
    });
    expect(pruned.code).toBe(0);
    expect(pruned.json.data.sections.landed).toEqual([]);
    expect(r.git(["branch", "--list", branch])).toContain(branch);
    const described = await runBerth(["describe", branch, "--json"], { cwd: r.path, env: r.env });
    expect(described.json.data.title).toBe("An idea");
  });
});

describe("the landed and stale sections", () => {
  it("after the train lands, prune deletes the kept refs as landed branches", async () => {
    const f = setUp();
    const [a, b, c] = await train(f);
    await f.berth(["worktree", "prune", "--contained", "--yes"]);
    // The train lands: accept C carries A's and B's commits onto the trunk.
    const accept = await f.berth(["accept", c.id, "--yes", "--json"]);
    expect(accept.code).toBe(0);
    expect(existsSync(c.path)).toBe(false);
    const run = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([
      { kind: "branch", branch: a.branch, tip: expect.any(String), integrated: false },
      { kind: "branch", branch: b.branch, tip: expect.any(String), integrated: false },
    ]);
    expect(run.json.data.applied.map((r: { action: string }) => r.action)).toEqual([
      "deleted landed branch",
      "deleted landed branch",
    ]);
    expect(f.repo.git(["branch", "--list", "berth/*"])).toBe("");
    expect(
      markerLines(f.marker)
        .filter((l) => l.startsWith("destroy"))
        .sort(),
    ).toEqual([`destroy ${a.id}`, `destroy ${b.id}`, `destroy ${c.id}`].sort());
    expect(ledgerFiles(f.repo)).toEqual([]);
  });

  it("keeps a landed berth with uncommitted work", async () => {
    const f = setUp();
    const a = await start(f, "a");
    f.repo.git(["merge", "-q", "--ff-only", a.branch]);
    writeFileSync(join(a.path, "wip.txt"), "unsaved\n");
    const run = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([]);
    expect(existsSync(join(a.path, "wip.txt"))).toBe(true);
    expect(run.json.hints.join("\n")).toContain("uncommitted");
  });

  it("removes just the registration whose folder was deleted by hand, and runs its ledger's destroy", async () => {
    const f = setUp();
    const a = await start(f, "a");
    const b = await start(f, "b");
    rmSync(a.path, { recursive: true, force: true });
    const dry = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.json.data.sections.stale).toEqual([
      expect.objectContaining({ id: a.id, path: a.path, resources: ["db"] }),
    ]);
    const run = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(worktreePaths(f.repo)).toEqual([f.repo.path, b.path]);
    expect(markerLines(f.marker).filter((l) => l.startsWith("destroy"))).toEqual([
      `destroy ${a.id}`,
    ]);
    expect(f.repo.git(["rev-parse", a.branch])).toMatch(/^[0-9a-f]{40}$/); // its branch (unlanded) stays
  });

  it("destroys orphaned ledger entries whose berth no longer exists", async () => {
    const f = setUp();
    const a = await start(f, "a");
    // Remove the berth behind berth's back: the ledger entry is orphaned.
    f.repo.git(["worktree", "remove", "--force", a.path]);
    f.repo.git(["worktree", "prune"]);
    const dry = await f.berth(["worktree", "prune", "--dry-run", "--json"]);
    expect(dry.json.data.sections.orphaned).toEqual([
      expect.objectContaining({ id: a.id, resource: "db", gc: true }),
    ]);
    await f.berth(["worktree", "prune", "--yes"]);
    expect(markerLines(f.marker).filter((l) => l.startsWith("destroy"))).toEqual([
      `destroy ${a.id}`,
    ]);
    expect(ledgerFiles(f.repo)).toEqual([]);
    expect(readdirSync(join(commonDirOf(f.repo), "berth", "ledger"))).toEqual([]);
  });
});

describe("landed berths with checkouts", () => {
  it("tears down a landed berth and deletes its branch by compare-and-swap", async () => {
    const f = setUp();
    const a = await start(f, "a");
    const b = await start(f, "b", a);
    // B lands (accept from the main checkout); A is an earlier stage of the train, now landed.
    const accept = await f.berth(["accept", b.id, "--yes", "--json"]);
    expect(accept.code).toBe(0);
    const status = await f.berth(["status", "--json"]);
    expect(status.json.data.worktrees.find((w: Berth) => w.path === a.path).state).toBe("landed");
    const run = await f.berth(["worktree", "prune", "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(run.json.data.sections.landed).toEqual([
      expect.objectContaining({ kind: "worktree", path: a.path, delete_branch: a.branch }),
    ]);
    expect(existsSync(a.path)).toBe(false);
    expect(f.repo.git(["branch", "--list", "berth/*"])).toBe("");
    expect(
      markerLines(f.marker)
        .filter((l) => l.startsWith("destroy"))
        .sort(),
    ).toEqual([`destroy ${a.id}`, `destroy ${b.id}`].sort());
    expect(ledgerFiles(f.repo)).toEqual([]);
  });
});
