import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentJournal } from "../src/context.js";
import { readFleetActivity, type WorktreeActivity } from "../src/core/fleet/activity.js";
import { checkoutStates } from "../src/core/fleet/checkout-states.js";
import { readAncestry } from "../src/core/fleet/commit-graph.js";
import { classifyContainment } from "../src/core/fleet/containment.js";
import { isLanded } from "../src/core/fleet/landed.js";
import { surveyFleet, type WorktreeFacts } from "../src/core/fleet/survey.js";
import { openRepository } from "../src/core/repo/repository.js";
import { shellQuote } from "../src/text.js";
import { gitSubcommand, installGitCounter } from "./helpers/git-counter.js";
import { gitShim } from "./helpers/git-shim.js";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo, testContext } from "./helpers/repo.js";
import { assertJsonOutput } from "./helpers/schemas.js";

describe("survey cost (spec section 10)", () => {
  let repo: TestRepo;
  const ids: string[] = [];
  const paths: string[] = [];

  // One fleet for the whole file: 20 berths in trains of stages (so some are
  // contained), a few dirty, two with gate receipts, one unreadable checkout.
  beforeAll(async () => {
    repo = makeRepo();
    for (let i = 0; i < 20; i++) {
      const from = i % 4 === 0 ? [] : ["--from", `berth/${ids.at(-1)}`];
      const run = await runBerth(["start", `w${i}`, ...from, "--json"], {
        cwd: repo.path,
        env: repo.env,
      });
      expect(run.code).toBe(0);
      ids.push(run.json.data.id);
      paths.push(run.json.data.path);
      repo.commit(`work ${i}`, run.json.data.path);
    }
    for (const i of [3, 7]) {
      const gate = await runBerth(["gate", "--json"], { cwd: paths[i] as string, env: repo.env });
      expect(gate.code).toBe(0);
    }
    for (const i of [0, 5, 10]) writeFileSync(join(paths[i] as string, "dirty.txt"), "x");
    // A checkout git cannot read: its status fails inside a lane, not the survey.
    writeFileSync(join(paths[15] as string, ".git"), "gitdir: /nonexistent/admin\n");
  }, 180_000);
  afterAll(() => repo?.cleanup());

  it("status spends one git status per worktree plus at most 8 others, never per pair", async () => {
    const counter = installGitCounter(repo.dir.path, repo.env);
    const run = await runBerth(["status", "--json"], { cwd: repo.path, env: counter.env });
    expect(run.code).toBe(0);
    const rows = run.json.data.worktrees as { id: string; readable: boolean; clean: boolean }[];
    expect(rows).toHaveLength(21);
    const calls = counter.calls();
    const statuses = calls.filter((args) => gitSubcommand(args) === "status");
    expect(statuses).toHaveLength(21);
    const others = calls.filter((args) => gitSubcommand(args) !== "status").map(gitSubcommand);
    // rev-parse, worktree list, for-each-ref, rev-list, cat-file (receipts).
    expect(others.length).toBeLessThanOrEqual(8);
    expect(others).toContain("cat-file");
    // The landed (and containment) classification: one ancestry walk for the whole fleet.
    expect(others.filter((sub) => sub === "merge-base" || sub === "rev-list")).toEqual([
      "rev-list",
    ]);
    // The statuses really were read: dirty, clean and unreadable rows as made.
    const row = (i: number) => rows.find((r) => r.id === ids[i]);
    expect(row(0)).toMatchObject({ readable: true, clean: false });
    expect(row(1)).toMatchObject({ readable: true, clean: true });
    expect(row(15)).toMatchObject({ readable: false, clean: null });
    expect(
      (run.json.data.worktrees as { receipt: string }[]).filter((r) => r.receipt === "honored"),
    ).toHaveLength(2);
  });

  it("status's first four reads are forked by one sh, not by Node (git/run-group.ts)", async () => {
    const counter = installGitCounter(repo.dir.path, repo.env);
    const run = await runBerth(["status", "--json"], { cwd: paths[2] as string, env: counter.env });
    expect(run.code).toBe(0);
    const first = new Set(["rev-parse", "worktree", "for-each-ref"]);
    const early = counter
      .parents()
      .filter(({ args }) => first.has(gitSubcommand(args) ?? "") || args[0] === "status");
    // The status of the checkout berth runs in has no -C: the lanes' statuses do.
    expect(early.map(({ args }) => gitSubcommand(args)).sort()).toEqual(
      ["for-each-ref", "rev-parse", "status", "worktree"].sort(),
    );
    // Each git's parent is a subshell, and the four subshells belong to one sh.
    expect(early.map(({ command }) => command)).toEqual(["sh", "sh", "sh", "sh"]);
    expect(new Set(early.map(({ grandparent }) => grandparent)).size).toBe(1);
  });

  /**
   * A git that logs each call's first four words; a call whose first three
   * match `slow` (a case pattern) sleeps a second, runs `then` and logs "slow done".
   */
  function slowGit(
    name: string,
    slow: string,
    then = ":",
  ): { env: NodeJS.ProcessEnv; log: () => string[] } {
    const log = join(repo.dir.path, `${name}.log`);
    writeFileSync(log, "");
    const PATH = gitShim(
      repo.dir.path,
      name,
      [
        `printf '%s\\n' "$1 $2 $3 $4" >> '${log}'`,
        `case "$1 $2 $3" in ${slow}) sleep 1; ${then}; printf 'slow done\\n' >> '${log}';; esac`,
      ],
      repo.env.PATH,
    );
    return {
      env: { ...repo.env, PATH },
      log: () => readFileSync(log, "utf8").split("\n"),
    };
  }

  it("runs the integrated rule's git processes while the statuses run, not after the last", async () => {
    const git = slowGit("slow-status", shellQuote(`-C ${paths[19]} status`));
    const run = await runBerth(["status", "--json"], { cwd: repo.path, env: git.env });
    expect(run.code).toBe(0);
    const lines = git.log();
    const done = lines.indexOf("slow done");
    const diffTree = lines.findIndex((line) => line.startsWith("diff-tree "));
    expect(done).toBeGreaterThan(-1);
    expect(diffTree).toBeGreaterThan(-1);
    expect(diffTree).toBeLessThan(done);
  });

  it("starts the fleet's statuses before discovery answers, from the main checkout only", async () => {
    const git = slowGit("slow-discovery", "'rev-parse --path-format=absolute --git-common-dir'");
    const fromMain = await runBerth(["status", "--json"], { cwd: repo.path, env: git.env });
    expect(fromMain.code).toBe(0);
    const lines = git.log();
    const answered = lines.indexOf("slow done");
    expect(answered).toBeGreaterThan(-1);
    // The linked worktrees' statuses were started before rev-parse answered.
    const before = lines.slice(0, answered).filter((line) => /^-C \S+ status/.test(line));
    expect(before.length).toBeGreaterThan(0);
    // From a linked worktree status reads only that checkout: nothing is started for the fleet.
    const fromLinked = slowGit(
      "slow-discovery-linked",
      "'rev-parse --path-format=absolute --git-common-dir'",
    );
    const local = await runBerth(["status", "--json"], {
      cwd: paths[2] as string,
      env: fromLinked.env,
    });
    expect(local.code).toBe(0);
    expect(fromLinked.log().filter((line) => /^-C \S+ status/.test(line))).toEqual([]);
  });

  it("reads each checkout's operation in progress while the statuses run, not after the last", async () => {
    const gitFile = readFileSync(join(paths[5] as string, ".git"), "utf8");
    const mergeHead = join(gitFile.replace(/^gitdir: /, "").trim(), "MERGE_HEAD");
    // A merge begins in berth 5 while the slow status of berth 19 still runs.
    const git = slowGit("slow-merge", shellQuote(`-C ${paths[19]} status`), `: > '${mergeHead}'`);
    try {
      const during = await runBerth(["status", "--json"], { cwd: repo.path, env: git.env });
      expect(during.code).toBe(0);
      expect(git.log()).toContain("slow done");
      const row = (run: typeof during) =>
        (run.json.data.worktrees as { id: string; in_progress: string | null }[]).find(
          (r) => r.id === ids[5],
        );
      expect(row(during)?.in_progress).toBeNull();
      // It was read before the merge began, and the next survey sees it.
      const after = await runBerth(["status", "--json"], { cwd: repo.path, env: repo.env });
      expect(row(after)?.in_progress).toBe("merge");
    } finally {
      rmSync(mergeHead, { force: true });
    }
  });

  it("prune --dry-run classifies the same fleet at the survey's cost", async () => {
    const counter = installGitCounter(repo.dir.path, repo.env);
    const prune = await runBerth(["worktree", "prune", "--dry-run", "--json"], {
      cwd: repo.path,
      env: counter.env,
    });
    expect(prune.code).toBe(0);
    expect(prune.json.data.sections.contained.length).toBeGreaterThan(5);
    const calls = counter.calls();
    const statuses = calls.filter((args) => gitSubcommand(args) === "status");
    expect(statuses.length).toBeLessThanOrEqual(21);
    // Beyond the survey: one listing of ignored files per checkout the plan removes (what goes with it).
    const sections = prune.json.data.sections;
    const removals = sections.landed.length + sections.contained.length;
    const others = calls.filter((args) => gitSubcommand(args) !== "status").map(gitSubcommand);
    expect(others.filter((sub) => sub === "ls-files")).toHaveLength(removals);
    expect(others.length - removals).toBeLessThanOrEqual(8);
    expect(
      calls.map(gitSubcommand).filter((sub) => sub === "merge-base" || sub === "rev-list"),
    ).toEqual(["rev-list"]);
  });

  it("classifies the whole fleet with at most 3 git processes beyond the survey", async () => {
    const { ctx } = testContext(repo.path, repo.env, new Date().toISOString());
    ctx.journal = silentJournal;
    const savedPath = process.env.PATH;
    const savedHome = process.env.HOME;
    Object.assign(process.env, { HOME: repo.env.HOME });
    try {
      const fleet = await openRepository(ctx);
      const survey = await surveyFleet(fleet);
      const activity = await readFleetActivity(fleet, survey.worktrees, ctx.now());
      const counter = installGitCounter(repo.dir.path, repo.env);
      process.env.PATH = counter.env.PATH;
      const { trunk } = survey;
      const roots = [
        ...(trunk.tip ? [trunk.tip] : []),
        ...survey.branches.values(),
        ...survey.worktrees.flatMap((w) => (w.entry.head ? [w.entry.head] : [])),
      ];
      const ancestry = await readAncestry(fleet.location.cwd, roots);
      const landed = survey.worktrees.filter((w) =>
        isLanded(w.entry.head, w.marker, w.entry.branch, trunk, survey.trunkTips, ancestry),
      );
      const input = {
        survey: { ...survey, ancestry },
        activityOf: (w: WorktreeFacts) => activity.worktrees.get(w.entry.path) as WorktreeActivity,
        operationOf: checkoutStates().operation,
        now: ctx.now(),
      };
      const containment = classifyContainment(input);
      process.env.PATH = savedPath;
      expect(counter.calls().length).toBeLessThanOrEqual(3);
      expect(landed).toHaveLength(0);
      // It did the work: clean earlier stages of each train are contained in the next.
      const contained = [...containment.worktrees.values()].filter((v) => v.contained);
      expect(contained.length).toBeGreaterThanOrEqual(6);
    } finally {
      process.env.PATH = savedPath;
      process.env.HOME = savedHome;
    }
  });
});

describe("large output", () => {
  let repo: TestRepo | undefined;
  afterAll(() => repo?.cleanup());

  it("prints a whole status --json document through a slow pipe", () => {
    repo = makeRepo();
    // Long worktree paths make a document well past a pipe's 64 KiB buffer.
    const deep = join(
      repo.dir.path,
      ...Array.from({ length: 12 }, (_, i) => String.fromCharCode(97 + i).repeat(200)),
    );
    mkdirSync(deep, { recursive: true });
    for (let i = 0; i < 24; i++) {
      repo.git(["worktree", "add", "-q", "-b", `long-${i}`, join(deep, `wt${i}`)]);
    }
    // The reader starts once berth has exited, or after 2 s if berth is still
    // waiting for it: a berth that exits with output still queued loses it.
    const done = join(repo.dir.path, "berth-exited");
    const stdout = execFileSync(
      "sh",
      [
        "-c",
        '("$0" "$1" status --json; touch "$2") | (i=0; while [ ! -e "$2" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i+1)); done; cat)',
        process.execPath,
        BERTH_BIN,
        done,
      ],
      { cwd: repo.path, env: repo.env, encoding: "utf8", maxBuffer: 1 << 24 },
    );
    expect(stdout.length).toBeGreaterThan(65_536);
    assertJsonOutput(["status", "--json"], stdout, 0);
    expect(JSON.parse(stdout).data.worktrees).toHaveLength(25);
  });
});
