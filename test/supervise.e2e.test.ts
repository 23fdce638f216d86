import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { briefRecordPath } from "../src/io/briefs.js";
import { fleetSnapshot, worktreePaths } from "./helpers/fleet.js";
import { gitSubcommand, installGitCounter } from "./helpers/git-counter.js";
import { logbookLines } from "./helpers/logbook.js";
import { makeRepo, type RunResult, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Supervising a fleet (issue 21), through the built binary on real
 * repositories: titles and briefs that travel with the branch (through a
 * park and a resume, and a reclaim), parking through THE teardown, and the
 * overlaps of unlanded berths computed by a fixed number of git processes.
 */

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** A resource whose create and destroy append a line to a counter file. */
const COUNTED_RESOURCE = `[worktree.resources.db]
create = 'echo "create $BERTH_ID" >> "$COUNTER"'
destroy = 'echo "destroy $BERTH_ID" >> "$COUNTER"'
`;

interface Started {
  id: string;
  branch: string;
  path: string;
}

async function berth(
  r: TestRepo,
  args: string[],
  cwd = r.path,
  input?: string,
): Promise<RunResult> {
  return runBerth(args, { cwd, env: r.env, ...(input === undefined ? {} : { input }) });
}

async function start(r: TestRepo, args: string[], input?: string): Promise<Started> {
  const run = await berth(r, ["start", ...args, "--json"], r.path, input);
  if (run.code !== 0) throw new Error(`start ${args.join(" ")}: ${run.stdout}${run.stderr}`);
  return run.json.data as Started;
}

async function status(r: TestRepo, cwd = r.path, env = r.env) {
  const run = await runBerth(["status", "--json"], { cwd, env });
  expect(run.code).toBe(0);
  return run.json.data as {
    worktrees: { id: string; title: string | null; branch: string }[];
    refs: {
      branch: string;
      tip: string;
      state: string;
      title: string | null;
      abandoned: boolean;
      contained_by: string | null;
    }[];
    overlaps: { berths: string[]; branches: string[]; files: string[] }[];
  };
}

function commitFile(r: TestRepo, b: Started, file: string, content: string): string {
  mkdirSync(dirname(join(b.path, file)), { recursive: true });
  r.write(file, content, b.path);
  return r.commit(`edit ${file} in ${b.id}`, b.path);
}

describe("titles and briefs", () => {
  it("start --title/--brief store them by branch; status shows titles; describe shows and changes them", async () => {
    repo = makeRepo();
    const r = repo;
    writeFileSync(join(r.dir.path, "brief.md"), "Make login retry.\n\nSee ticket 42.\n");
    const a = await start(r, ["login", "--title", "Fix the login form", "--brief", "../brief.md"]);
    const b = await start(r, ["upload", "--brief", "-"], "Upload from stdin\n");
    const c = await start(r, ["plain"]);

    const rows = (await status(r)).worktrees;
    expect(rows.find((w) => w.id === a.id)?.title).toBe("Fix the login form");
    expect(rows.find((w) => w.id === b.id)?.title).toBeNull();
    expect(rows.find((w) => w.id === c.id)?.title).toBeNull();
    expect(rows.find((w) => w.id === "repo")?.title).toBeNull();

    const shown = await berth(r, ["describe", a.id, "--json"]);
    expect(shown.code).toBe(0);
    expect(shown.json.data).toMatchObject({
      id: a.id,
      branch: a.branch,
      path: a.path,
      title: "Fix the login form",
      brief: "Make login retry.\n\nSee ticket 42.\n",
      parked: false,
      changed: false,
    });
    expect((await berth(r, ["describe", b.branch, "--json"])).json.data.brief).toBe(
      "Upload from stdin\n",
    );

    // A new title keeps the brief; a bare describe is an observation, not logged.
    const changed = await berth(r, ["describe", b.id, "--title", "  Upload   retries ", "--json"]);
    expect(changed.json.data).toMatchObject({
      title: "Upload retries",
      brief: "Upload from stdin\n",
    });
    const verbs = logbookLines(r.path).map((line) => JSON.parse(line).verb);
    expect(verbs.filter((v) => v === "describe")).toEqual(["describe", "describe"]);

    // One line only: refused as a usage error, nothing written.
    const twoLines = await berth(r, ["describe", c.id, "--title", "one\ntwo", "--json"]);
    expect(twoLines.code).toBe(2);
    expect(twoLines.json.error.code).toBe("usage");
    expect(twoLines.json.error.next).toBe("berth describe --help");
    expect((await status(r)).worktrees.find((w) => w.id === c.id)?.title).toBeNull();
    // The help named is the verb's that was given the title.
    const atStart = await berth(r, ["start", "two-lines", "--title", "one\ntwo", "--json"]);
    expect(atStart.code).toBe(2);
    expect(atStart.json.error.next).toBe("berth start --help");

    // The main checkout is not a berth: neither shown nor titled, by path or by its branch.
    for (const target of [r.path, "main"]) {
      const onMain = await berth(r, ["describe", target, "--title", "Trunk", "--json"]);
      expect(onMain.code, target).toBe(1);
      expect(onMain.json.error).toMatchObject({
        code: "precondition_failed",
        next: "berth status",
      });
      expect(onMain.json.error.message).toContain("is the main checkout, not a berth");
    }
    expect((await status(r)).worktrees.find((w) => w.branch === "main")?.title).toBeNull();
    // A record an earlier berth wrote for the trunk is not the main checkout's title either.
    writeFileSync(
      join(r.path, ".git", "berth", "briefs", "main.json"),
      `${JSON.stringify({ version: 1, branch: "main", title: "Trunk", brief: null, parked: null, updated_at: "2026-12-01T00:00:00Z" })}\n`,
    );
    expect((await status(r)).worktrees.find((w) => w.branch === "main")?.title).toBeNull();

    // Human status shows the title column.
    const human = await berth(r, ["status"]);
    expect(human.stdout).toMatch(/id +title +branch/);
    expect(human.stdout).toContain("Upload retries");
  });
});

describe("titles with control characters", () => {
  it("a title holding ESC, DEL or a C1 character is refused at start and describe, naming it; nothing changes", async () => {
    repo = makeRepo();
    const r = repo;
    const before = r.git(["worktree", "list", "--porcelain"]);
    const atStart = await berth(r, ["start", "x", "--title", "\u001b[31mred\u001b[2J", "--json"]);
    expect(atStart.code).toBe(2);
    expect(atStart.json.error.code).toBe("usage");
    expect(atStart.json.error.message).toContain("\\x1b");
    expect(atStart.json.error.message).toContain("nothing changed");
    expect(atStart.json.error.next).toBe("berth start --help");
    expect(r.git(["worktree", "list", "--porcelain"])).toBe(before);

    const b = await start(r, ["kept", "--title", "Kept title"]);
    for (const [title, shown] of [
      ["tab\there", "\\x09"],
      ["del\u007f", "\\x7f"],
      ["csi\u009b2J", "\\x9b"],
    ] as const) {
      const refused = await berth(r, ["describe", b.id, "--title", title, "--json"]);
      expect(refused.code).toBe(2);
      expect(refused.json.error.code).toBe("usage");
      expect(refused.json.error.message).toContain(shown);
    }
    expect((await status(r)).worktrees.find((w) => w.id === b.id)?.title).toBe("Kept title");
  });

  it("a hand-edited record's title holding ESC is shown as escapes by status, never sent raw", async () => {
    repo = makeRepo();
    const r = repo;
    const b = await start(r, ["edited", "--title", "Plain"]);
    const file = briefRecordPath(join(r.path, ".git"), b.branch);
    const record = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...record, title: "red\u001b[31m now" }));
    const human = await berth(r, ["status"]);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toContain("\u001b");
    expect(human.stdout).toContain("red\\x1b[31m now");
  });

  it("a name holding ESC becomes a slug; the hint quoting it shows ESC as an escape, --json keeps it", async () => {
    repo = makeRepo();
    const r = repo;
    const human = await berth(r, ["start", "z\u001b[31mx"]);
    expect(human.code).toBe(0);
    expect(human.stderr).not.toContain("\u001b");
    expect(human.stderr).toContain('hint: "z\\x1b[31mx" became "z-31mx"');
    const json = await berth(r, ["start", "y\u001b[2J", "--json"]);
    expect(json.json.hints).toContain('"y\u001b[2J" became "y-2j"');
  });

  it("a brief's control characters are shown as escapes by describe, kept as written in --json", async () => {
    repo = makeRepo();
    const r = repo;
    const b = await start(
      r,
      ["briefed", "--brief", "-"],
      "line one\n\u001b[31mred\u001b[0m\tend\n",
    );
    const human = await berth(r, ["describe", b.id]);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toContain("\u001b");
    expect(human.stdout).toContain("line one\n\\x1b[31mred\\x1b[0m\tend");
    const json = await berth(r, ["describe", b.id, "--json"]);
    expect(json.json.data.brief).toBe("line one\n\u001b[31mred\u001b[0m\tend\n");
  });

  it("a brief that is not UTF-8 text (the wrong file) is refused at start and describe, not stored altered", async () => {
    repo = makeRepo();
    const r = repo;
    const binary = join(r.dir.path, "picture.png");
    writeFileSync(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x0a]));
    const refusedStart = await berth(r, ["start", "pictured", "--brief", binary, "--json"]);
    expect(refusedStart.code).toBe(1);
    expect(refusedStart.json.error.message).toBe(
      `The brief (${binary}) is not UTF-8 text; nothing changed. Give --brief a text file.`,
    );
    expect(worktreePaths(r)).toEqual([r.path]);

    const b = await start(r, ["briefed", "--brief", "-"], "the real brief\n");
    const refused = await berth(r, ["describe", b.id, "--brief", binary, "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe("precondition_failed");
    expect((await berth(r, ["describe", b.id, "--json"])).json.data.brief).toBe("the real brief\n");
  });
});

describe("parking", () => {
  it("the plan names the largest ignored files that go with the checkout, as every removal's does", async () => {
    repo = makeRepo();
    const r = repo;
    r.write(".gitignore", "build/\n");
    r.commit("ignore build output");
    const a = await start(r, ["bulky"]);
    mkdirSync(join(a.path, "build"));
    writeFileSync(join(a.path, "build", "big.bin"), "x".repeat(5000));
    const dry = await berth(r, ["worktree", "park", a.id, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("(largest: build 4.9 KiB)");
  });

  it("tears the berth down through the teardown, keeps branch, title and brief; start --from resumes it", async () => {
    repo = makeRepo({ config: COUNTED_RESOURCE });
    const r = repo;
    const counter = join(r.dir.path, "counter");
    r.env.COUNTER = counter;
    const a = await start(r, ["login", "--title", "Fix the login form", "--brief", "-"], "Why\n");
    const tip = commitFile(r, a, "login.ts", "retry\n");
    const ledger = () => readFileSync(counter, "utf8").trim().split("\n");
    expect(ledger()).toEqual([`create ${a.id}`]);

    // Dirty (an untracked file counts): refused, naming how to commit; nothing changed.
    writeFileSync(join(a.path, "notes.txt"), "unsaved\n");
    const before = fleetSnapshot(r);
    const dirty = await berth(r, ["worktree", "park", a.id, "--yes", "--json"]);
    expect(dirty.code).toBe(1);
    expect(dirty.json.error.code).toBe("precondition_failed");
    expect(dirty.json.error.message).toContain("notes.txt");
    expect(dirty.json.error.next).toContain("git add -A && git commit -m 'work in progress'");
    expect(fleetSnapshot(r)).toBe(before);
    expect(ledger()).toEqual([`create ${a.id}`]);
    r.commit("notes", a.path);
    const head = r.git(["rev-parse", "HEAD"], a.path);
    expect(head).not.toBe(tip);

    // No terminal, no --yes: the plan, naming what is kept and destroyed; nothing changed.
    const unconfirmed = await berth(r, ["worktree", "park", a.id]);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain(`keeps     branch ${a.branch} at ${head.slice(0, 8)}`);
    expect(unconfirmed.stderr).toContain('keeps     its title "Fix the login form" and its brief');
    expect(unconfirmed.stderr).toContain("destroys  resources db");
    expect(unconfirmed.stderr).toContain("destroys  the checkout");
    expect(unconfirmed.stderr).toContain(`next: berth worktree park ${a.id} --yes`);
    const dry = await berth(r, ["worktree", "park", a.id, "--dry-run", "--json"]);
    expect(dry.json.plan.steps.map((s: { step: string }) => s.step)).toEqual([
      "mark parked",
      "destroy resource",
      "remove worktree",
      "keep branch",
    ]);
    expect(existsSync(a.path)).toBe(true);

    const parked = await berth(r, ["worktree", "park", a.id, "--yes", "--json"]);
    expect(parked.code).toBe(0);
    expect(parked.json.data).toMatchObject({
      id: a.id,
      branch: a.branch,
      head,
      title: "Fix the login form",
      has_brief: true,
      resources_destroyed: ["db"],
      worktree_removed: true,
      parked: true,
      resume: `berth start --from ${a.branch}`,
    });
    // Checkout gone, resources destroyed once, branch kept where it was.
    expect(existsSync(a.path)).toBe(false);
    expect(worktreePaths(r)).not.toContain(a.path);
    expect(ledger()).toEqual([`create ${a.id}`, `destroy ${a.id}`]);
    expect(r.git(["rev-parse", `refs/heads/${a.branch}`])).toBe(head);

    // Listed as parked (not abandoned), with its title; the human view says how to resume.
    const afterPark = await status(r);
    expect(afterPark.worktrees.map((w) => w.id)).toEqual(["repo"]);
    expect(afterPark.refs).toEqual([
      expect.objectContaining({
        branch: a.branch,
        tip: head,
        state: "parked",
        abandoned: false,
        title: "Fix the login form",
      }),
    ]);
    const human = await berth(r, ["status"]);
    expect(human.stdout).toContain(`parked: ${a.branch} (+2)`);
    expect(human.stdout).toContain(`resume it with: berth start --from ${a.branch}`);
    expect(human.stdout).not.toContain("abandoned");
    const described = await berth(r, ["describe", a.branch, "--json"]);
    expect(described.json.data).toMatchObject({
      id: a.id,
      path: null,
      parked: true,
      brief: "Why\n",
    });

    // Resume: the same branch (and id) back in a checkout, with its title; resources made again.
    const resumed = await berth(r, ["start", "--from", a.branch, "--json"]);
    expect(resumed.code).toBe(0);
    expect(resumed.json.data).toMatchObject({
      id: a.id,
      branch: a.branch,
      path: a.path,
      title: "Fix the login form",
      resumed: true,
    });
    expect(r.git(["rev-parse", "HEAD"], a.path)).toBe(head);
    expect(r.git(["branch", "--show-current"], a.path)).toBe(a.branch);
    expect(ledger()).toEqual([`create ${a.id}`, `destroy ${a.id}`, `create ${a.id}`]);
    const afterResume = await status(r);
    expect(afterResume.refs).toEqual([]);
    expect(afterResume.worktrees.find((w) => w.id === a.id)?.title).toBe("Fix the login form");
    expect((await berth(r, ["describe", a.id, "--json"])).json.data).toMatchObject({
      parked: false,
      brief: "Why\n",
    });

    // Park is logged like every effectful verb.
    const parks = logbookLines(r.path)
      .map((line) => JSON.parse(line))
      .filter((e) => e.event === "finish" && e.verb === "worktree park")
      .map((e) => e.outcome);
    expect(parks).toEqual(["refused", "refused", "ok"]);
  });

  it("a reclaimed stage keeps its title on its kept ref", async () => {
    repo = makeRepo();
    const r = repo;
    const a = await start(r, ["stage-a", "--title", "First stage"]);
    commitFile(r, a, "a.txt", "a\n");
    const b = await start(r, ["stage-b", "--from", a.branch, "--title", "Second stage"]);
    commitFile(r, b, "b.txt", "b\n");
    const reclaim = await berth(r, ["worktree", "prune", "--contained", "--yes", "--json"]);
    expect(reclaim.code).toBe(0);
    expect(existsSync(a.path)).toBe(false);
    const data = await status(r);
    expect(data.refs).toEqual([
      expect.objectContaining({
        branch: a.branch,
        state: "contained",
        contained_by: b.branch,
        title: "First stage",
      }),
    ]);
    expect(data.worktrees.find((w) => w.id === b.id)?.title).toBe("Second stage");
  });
});

describe("overlaps", () => {
  it("two berths editing src/a.ts: one entry naming both and the file, from one git log for any fleet size", async () => {
    repo = makeRepo();
    const r = repo;
    const a = await start(r, ["alpha"]);
    const b = await start(r, ["beta"]);
    const c = await start(r, ["gamma"]);
    commitFile(r, a, "src/a.ts", "a\n");
    commitFile(r, a, "notes-a.txt", "a only\n");
    commitFile(r, b, "src/a.ts", "b\n");
    commitFile(r, c, "src/c.ts", "c\n");
    // A stage on top of a shares a's commits, so it never overlaps a; a is now
    // a contained stage, whose work its container a2 carries: a2 is named, not a.
    const a2 = await start(r, ["alpha-2", "--from", a.branch]);
    commitFile(r, a2, "notes-a.txt", "a again\n");
    const counter = installGitCounter(r.dir.path, r.env);
    const measure = async () => {
      counter.reset();
      const data = await status(r, r.path, counter.env);
      const calls = counter.calls();
      const sub = gitSubcommand;
      return {
        data,
        statuses: calls.filter((args) => sub(args) === "status").length,
        logs: calls.filter((args) => sub(args) === "log").length,
        // Issue 19's integrated rule asks one merge-tree per unclassified berth with work; the rest is fixed.
        mergeTrees: calls.filter((args) => sub(args) === "merge-tree").length,
        others: calls.filter((args) => sub(args) !== "status" && sub(args) !== "merge-tree").length,
      };
    };

    const small = await measure();
    expect(small.data.overlaps).toEqual([
      { berths: [a2.id, b.id], branches: [a2.branch, b.branch], files: ["src/a.ts"] },
    ]);
    expect(small.statuses).toBe(5);
    expect(small.logs).toBe(1);
    expect(small.others).toBeLessThanOrEqual(9);

    // Three more berths, one of them a second writer of src/a.ts: still one git log.
    const d = await start(r, ["delta"]);
    commitFile(r, d, "src/a.ts", "d\n");
    for (const name of ["e1", "e2"]) commitFile(r, await start(r, [name]), `${name}.txt`, "e\n");
    const large = await measure();
    expect(large.statuses).toBe(8);
    expect(large.logs).toBe(1);
    expect(large.others).toBe(small.others);
    expect(large.mergeTrees).toBeLessThanOrEqual(large.statuses);
    expect(large.data.overlaps).toEqual([
      {
        berths: [a2.id, b.id, d.id],
        branches: [a2.branch, b.branch, d.branch],
        files: ["src/a.ts"],
      },
    ]);
    expect((await berth(r, ["status"])).stdout).toContain("change src/a.ts");

    // Inside a berth (--local scope): no overlaps read, no git log spent.
    counter.reset();
    const local = await runBerth(["status", "--json"], { cwd: a.path, env: counter.env });
    expect(local.json.data.scope).toBe("local");
    expect(local.json.data.overlaps).toEqual([]);
    expect(counter.calls().filter((args) => args[0] === "log")).toEqual([]);
  });
});
