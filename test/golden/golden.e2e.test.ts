/**
 * Golden test: every verb's `--json` output, through the built binary
 * (`npm run build` first), on fixture repositories, compared with the
 * committed documents under test/golden/expected/ (one per scenario: the
 * command, where it ran, the exit code and the parsed JSON).
 *
 * Only what differs between two runs is normalised (see golden.ts): the temp
 * root, berth ids' random part, merge commits whose message names such an id,
 * times, recovery ref stamps, timings, ports, pids, hosts, invocation ids.
 *
 * Regenerate after an intended change, then review the diff (`git diff test/golden`):
 *   npm run build && BERTH_GOLDEN_UPDATE=1 npx vitest run test/golden
 * That writes the files instead of comparing, formats them with Biome, and
 * deletes files no scenario wrote any more.
 */
import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, type ExpectStatic, it, type TestContext } from "vitest";
import { makeRepo } from "../helpers/repo.js";
import {
  formatExpectations,
  Golden,
  RECORDED,
  type RecordOptions,
  removeStale,
  staleExpectations,
  UPDATING,
} from "./golden.js";

/** A fixture repository for one test (removed when it finishes) and its recorder. */
function fixture(t: TestContext, config?: string) {
  const repo = makeRepo(config === undefined ? {} : { config });
  t.onTestFinished(() => repo.cleanup());
  // MARKER: where resource commands write; LC_ALL: git's messages in one language everywhere.
  const env = { ...repo.env, MARKER: join(repo.dir.path, "marker"), LC_ALL: "C" };
  const g = new Golden(repo, env);
  /** Runs and records one scenario and compares it with its expectation (a readable diff). */
  const check = async (name: string, args: string[], options: RecordOptions = {}) => {
    const { actual, expected, run } = await g.record(name, args, options);
    t.expect.soft(actual, name).toEqual(expected);
    return run;
  };
  return { repo, g, check, expect: t.expect as ExpectStatic };
}

const RESOURCE = `[worktree.resources.db]
create = 'echo "create $BERTH_ID" >> "$MARKER"'
destroy = 'echo "destroy $BERTH_ID" >> "$MARKER"'
ensure = 'echo "ensure $BERTH_ID" >> "$MARKER"'
`;

const TWO_CHECKS = `[gate]
checks = [
  { name = "lint", run = "true" },
  { name = "test", run = "test ! -e broken", after = ["lint"] },
]
`;

// Each test builds its own fixture, so they run side by side; the generous timeout
// is for a loaded 2-core machine, where each test's many processes queue for CPU.
const SCENARIOS = "golden --json output";
describe.concurrent(SCENARIOS, { timeout: 180_000 }, () => {
  it("init: fresh, then refuses to overwrite", async (t) => {
    const { check } = fixture(t);
    await check("init-fresh", ["init", "--json"]);
    await check("init-refuses-overwrite", ["init", "--json"]);
  });

  it("start: plain, named, normalised name, --from a branch, --dry-run, unknown --from", async (t) => {
    const { repo, check } = fixture(t);
    repo.git(["checkout", "-q", "-b", "base"]);
    repo.write("base.txt", "base\n");
    repo.commit("base work");
    repo.git(["checkout", "-q", "main"]);
    await check("start-plain", ["start", "--json"]);
    await check("start-named", ["start", "feature", "--json"]);
    await check("start-name-normalised", ["start", "Fix: Upload/Retry!!", "--json"]);
    await check("start-from-branch", ["start", "stacked", "--from", "base", "--json"]);
    await check("start-dry-run", ["start", "preview", "--dry-run", "--json"]);
    await check("start-refuses-unknown-from", ["start", "x", "--from", "nope", "--json"]);
  });

  it("status: main checkout, inside a berth, --all, --local", async (t) => {
    const { repo, g, check } = fixture(t);
    const clean = await g.start("clean");
    const dirty = await g.start("dirty");
    writeFileSync(join(dirty.path, "notes.txt"), "work in progress\n");
    writeFileSync(join(dirty.path, "dirty.txt"), "edited\n");
    await check("status-main", ["status", "--json"]);
    await check("status-in-berth", ["status", "--json"], { cwd: clean.path });
    await check("status-in-berth-all", ["status", "--all", "--json"], { cwd: clean.path });
    await check("status-in-berth-local", ["status", "--local", "--json"], { cwd: dirty.path });
    await check("status-main-local", ["status", "--local", "--json"], { cwd: repo.path });
  });

  it("gate: --dry-run, green, red, refusal on a dirty tree; status with receipts; logbook", async (t) => {
    const { g, check } = fixture(t, TWO_CHECKS);
    const green = await g.start("green");
    const red = await g.start("red", { file: "broken" });
    const messy = await g.start("messy");
    writeFileSync(join(messy.path, "untracked.txt"), "new\n");
    await check("gate-dry-run", ["gate", "--dry-run", "--json"], { cwd: green.path });
    await check("gate-green", ["gate", "--json"], { cwd: green.path });
    await check("gate-red", ["gate", "--json"], { cwd: red.path });
    await check("gate-refuses-dirty", ["gate", "--json"], { cwd: messy.path });
    await check("gate-status-receipts", ["status", "--json"]);
    await check("logbook", ["logbook", "--json"], { jsonl: true });
    await check("logbook-verb-gate", ["logbook", "--verb", "gate", "--json"], { jsonl: true });
  });

  it("update: up to date, --dry-run, a real merge, refusal with tracked changes", async (t) => {
    const { repo, g, check } = fixture(t);
    const berth = await g.start("topic");
    await check("update-up-to-date", ["update", "--json"], { cwd: berth.path });
    repo.write("trunk.txt", "trunk moved\n");
    repo.commit("trunk work");
    await check("update-dry-run", ["update", "--dry-run", "--json"], { cwd: berth.path });
    // git's merge message names the berth's branch, random id included: the merge commit differs per run.
    await check("update-merge", ["update", "--json"], {
      cwd: berth.path,
      volatileOids: () => [repo.git(["rev-parse", "HEAD"], berth.path)],
    });
    writeFileSync(join(berth.path, "topic.txt"), "edited\n");
    await check("update-refuses-tracked-changes", ["update", "--json"], { cwd: berth.path });
  });

  it("accept and await: dry run, --green met, landing, --landed met, --trunk-moved not met, refusals", async (t) => {
    const config = `[gate]\nchecks = [{ name = "ok", run = "true" }]\n`;
    const { repo, g, check, expect } = fixture(t, config);
    const berth = await g.start("landing");
    const behind = await g.start("behind");
    const gated = await g.berth(["gate", "--json"], berth.path);
    expect(gated.code).toBe(0);
    await check("accept-dry-run", ["accept", "--dry-run", "--json"], { cwd: berth.path });
    await check("await-green-met", ["await", "--green", berth.branch, "--timeout", "0", "--json"]);
    await check("accept-lands", ["accept", "--yes", "--json"], { cwd: berth.path });
    await check("await-landed-met", ["await", "--landed", berth.branch, "--json"]);
    // From a berth, where berth update can take the new trunk: the hint says so.
    await check("await-landed-met-in-a-berth", ["await", "--landed", berth.branch, "--json"], {
      cwd: behind.path,
    });
    await check("await-trunk-moved-not-met", [
      "await",
      "--trunk-moved",
      "--timeout",
      "0",
      "--json",
    ]);
    await check("await-unknown-target", [
      "await",
      "--green",
      "berth/nope",
      "--timeout",
      "0",
      "--json",
    ]);
    // Behind the trunk: the queue lands it through an integration commit whose message names the berth.
    await check("accept-integrates-behind", ["accept", behind.id, "--yes", "--json"], {
      cwd: repo.path,
      volatileOids: () => {
        const merge = repo.git(["rev-parse", "main"]);
        return [merge, merge.slice(0, 8)];
      },
    });
    const dirty = await g.start("dirty");
    writeFileSync(join(dirty.path, "untracked.txt"), "new\n");
    await check("accept-refuses-dirty", ["accept", "--yes", "--json"], { cwd: dirty.path });
  });

  it("the landing queue: --no-wait awaiting approval, queue, approve (an entry, a grant), withdraw, run", async (t) => {
    const config = `[gate]\nchecks = [{ name = "ok", run = "true" }]\n`;
    const { g, check } = fixture(t, config);
    const one = await g.start("one");
    const two = await g.start("two");
    await check("accept-no-wait-awaits-approval", ["accept", one.id, "--no-wait", "--json"]);
    await check("queue-list", ["queue", "--json"]);
    await check("queue-approve", ["queue", "approve", one.id, "--json"]);
    await check("queue-approve-grant", ["queue", "approve", two.id, "--json"]);
    await check("accept-no-wait-granted", ["accept", two.id, "--no-wait", "--json"]);
    await check("queue-withdraw", ["queue", "withdraw", two.id, "--json"]);
    await check("queue-run", ["queue", "run", "--json"]);
    await check("queue-withdraw-refuses-decided", ["queue", "withdraw", one.id, "--json"]);
  });

  it("worktree setup and teardown", async (t) => {
    const { g, check } = fixture(t, `${RESOURCE}\n[worktree.setup]\nensure = ["true"]\n`);
    const berth = await g.start("res");
    await check("worktree-setup", ["worktree", "setup", "--json"], { cwd: berth.path });
    await check("worktree-teardown-dry-run", ["worktree", "teardown", "--dry-run", "--json"], {
      cwd: berth.path,
    });
    await check("worktree-teardown-refuses-unconfirmed", ["worktree", "teardown", "--json"], {
      cwd: berth.path,
    });
    await check("worktree-teardown", ["worktree", "teardown", "--yes", "--json"], {
      cwd: berth.path,
    });
  });

  it("worktree drop: --dry-run, refusal for unlanded commits, --force --yes", async (t) => {
    const { g, check } = fixture(t, RESOURCE);
    const berth = await g.start("doomed");
    await check("drop-dry-run", ["worktree", "drop", berth.id, "--dry-run", "--json"]);
    await check("drop-refuses-unlanded", ["worktree", "drop", berth.id, "--json"]);
    await check("drop-force", ["worktree", "drop", berth.id, "--force", "--yes", "--json"]);
  });

  it("worktree prune: landed + contained plan, confirmation, --yes, --contained --yes", async (t) => {
    const { repo, g, check } = fixture(t, `${RESOURCE}\n[logbook]\nenabled = false\n`);
    const done = await g.start("done");
    repo.git(["merge", "-q", "--ff-only", done.branch]);
    const a = await g.start("a");
    const b = await g.start("b", { from: a.branch });
    const c = await g.start("c", { from: b.branch });
    // Contained needs idle stages: with the logbook off, their admin dirs two hours old.
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    for (const berth of [done, a, b, c]) {
      utimesSync(repo.git(["rev-parse", "--absolute-git-dir"], berth.path), old, old);
    }
    await check("prune-dry-run", ["worktree", "prune", "--dry-run", "--json"]);
    await check("prune-refuses-unconfirmed", ["worktree", "prune", "--contained", "--json"]);
    await check("prune-yes", ["worktree", "prune", "--yes", "--json"]);
    await check("prune-contained-yes", ["worktree", "prune", "--contained", "--yes", "--json"]);
    await check("prune-status-kept-refs", ["status", "--json"]);
  });

  it("titles and briefs, park and resume, overlaps", async (t) => {
    const { repo, g, check } = fixture(t, RESOURCE);
    const started = await check("start-titled", [
      "start",
      "shelf",
      "--title",
      "Shelved idea",
      "--json",
    ]);
    const shelf = started.json.data as { id: string; branch: string; path: string };
    repo.write("shelf.txt", "shelf\n", shelf.path);
    repo.commit("shelf", shelf.path);
    await check("describe-set-title", ["describe", shelf.id, "--title", "Shelved, v2", "--json"]);
    await check("park-dry-run", ["worktree", "park", shelf.id, "--dry-run", "--json"]);
    await check("park-refuses-unconfirmed", ["worktree", "park", shelf.id, "--json"]);
    await check("park-yes", ["worktree", "park", shelf.id, "--yes", "--json"]);
    await check("status-parked", ["status", "--json"]);
    await check("describe-parked", ["describe", shelf.branch, "--json"]);
    await check("start-resume", ["start", "--from", shelf.branch, "--json"]);
    await g.start("left", { file: "shared.txt" });
    await g.start("right", { file: "shared.txt" });
    await check("status-overlaps", ["status", "--json"]);
  });

  it("desk without a terminal, a usage error, outside a repository", async (t) => {
    const { repo, check } = fixture(t);
    await check("desk-refuses-without-tty", ["desk", "--json"]);
    await check("usage-error", ["start", "--bogus", "--json"]);
    await check("not-a-repository", ["status", "--json"], { cwd: repo.dir.home });
  });
});

describe("golden expectations", () => {
  afterAll(() => {
    if (UPDATING) formatExpectations();
  });

  it("has no expectation file that no scenario wrote", (t) => {
    // Only meaningful when every scenario ran (not under a -t filter) and passed.
    const scenarios = t.task.file.tasks.find((task) => task.name === SCENARIOS);
    const tests = scenarios?.type === "suite" ? scenarios.tasks : [];
    if (tests.length === 0 || tests.some((task) => task.result?.state !== "pass")) {
      t.skip();
      return;
    }
    if (UPDATING) removeStale(RECORDED);
    t.expect(staleExpectations(RECORDED)).toEqual([]);
  });
});
