import { afterEach, describe, expect, it } from "vitest";
import { berthBranches } from "./helpers/fleet.js";
import {
  berthWith,
  checkedCommits,
  isAncestor,
  landedBranches,
  onlyFastForwards,
  queueFixture,
  recordingGate,
  tip,
  trunkHistory,
} from "./helpers/queue.js";
import { runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Batches (`[acceptance].batch`, spec section 11): the next N entries are
 * merged into one integration commit and gated once; a red batch is split
 * and re-gated until the failing entry stands alone.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

async function submitFour(r: TestRepo, env: NodeJS.ProcessEnv, bad: number | null) {
  const berths = [];
  for (let i = 0; i < 4; i++) {
    const files: Record<string, string> = { [`f${i}.txt`]: `${i}\n` };
    if (i === bad) files["bad.txt"] = "the gate rejects this\n";
    const b = await berthWith(r, env, `b${i}`, files);
    const run = await runBerth(["accept", b.id, "--no-wait", "--yes", "--json"], {
      cwd: r.path,
      env,
    });
    expect(run.json.data.queue.state).toBe("queued");
    berths.push(b);
  }
  return berths;
}

describe("batches", () => {
  it("batch = 4 with four non-conflicting entries: one integration commit, gated exactly once, lands all four", async () => {
    const fx = queueFixture(`${recordingGate()}\n[acceptance]\nbatch = 4\n`);
    repo = fx.repo;
    const { env, marker } = fx;
    const berths = await submitFour(repo, env, null);
    const tips = berths.map((b) => tip(repo as TestRepo, b.branch));
    const run = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.data.gate_runs).toBe(1);
    expect(checkedCommits(marker)).toEqual([tip(repo, "main")]);
    expect(run.json.data.decided.map((e: { state: string }) => e.state)).toEqual([
      "landed",
      "landed",
      "landed",
      "landed",
    ]);
    // One trunk move for the whole batch, a fast-forward.
    expect(trunkHistory(repo)).toHaveLength(2);
    expect(onlyFastForwards(repo)).toBe(true);
    for (const t of tips) expect(isAncestor(repo, t, "main")).toBe(true);
    const landings = await landedBranches(repo);
    for (const b of berths) expect(landings.filter((l) => l === b.branch)).toHaveLength(1);
    expect(berthBranches(repo)).toEqual([]);
  });

  it("one bad entry among four: bisection rejects only it, the three good ones land, and the gate runs are reported", async () => {
    const fx = queueFixture(`${recordingGate("! test -e bad.txt")}\n[acceptance]\nbatch = 4\n`);
    repo = fx.repo;
    const { env, marker } = fx;
    const berths = await submitFour(repo, env, 2);
    const run = await runBerth(["queue", "run", "--json"], { cwd: repo.path, env });
    expect(run.code, run.stderr).toBe(0);
    const states = Object.fromEntries(
      run.json.data.decided.map((e: { id: string; state: string }) => [e.id, e.state]),
    );
    expect(states).toEqual({
      [berths[0]?.id ?? ""]: "landed",
      [berths[1]?.id ?? ""]: "landed",
      [berths[2]?.id ?? ""]: "rejected",
      [berths[3]?.id ?? ""]: "landed",
    });
    // All four (red), the first pair (green, lands), the second pair (red), then each alone.
    expect(run.json.data.gate_runs).toBe(5);
    expect(checkedCommits(marker)).toHaveLength(5);
    const rejected = run.json.data.decided.find((e: { state: string }) => e.state === "rejected");
    expect(rejected.rejection).toMatchObject({ kind: "red", check: "record" });
    expect(isAncestor(repo, tip(repo, berths[2]?.branch ?? ""), "main")).toBe(false);
    expect(onlyFastForwards(repo)).toBe(true);
    // Every value the trunk took was gated (or is where it started).
    const [start, ...moves] = trunkHistory(repo);
    expect(start).toBeDefined();
    for (const oid of moves) expect(checkedCommits(marker)).toContain(oid);
    expect(berthBranches(repo)).toEqual([berths[2]?.branch]);
  });

  it("an accept whose own entry is rejected after it landed the entries ahead of it says the trunk moved, not that nothing landed", async () => {
    const fx = queueFixture(`${recordingGate("! test -e bad.txt")}\n[acceptance]\nbatch = 2\n`);
    repo = fx.repo;
    const { env } = fx;
    const r = repo;
    const good = await berthWith(r, env, "good", { "good.txt": "good\n" });
    const queued = await runBerth(["accept", good.id, "--no-wait", "--yes", "--json"], {
      cwd: r.path,
      env,
    });
    expect(queued.json.data.queue.state).toBe("queued");
    const goodTip = tip(r, good.branch);
    const bad = await berthWith(r, env, "bad", { "bad.txt": "the gate rejects this\n" });
    const before = tip(r, "main");
    const badTip = tip(r, bad.branch);

    // This accept drains the queue: the batch of both is red, the good entry lands alone, then its own is rejected.
    const run = await runBerth(["accept", bad.id, "--yes", "--json"], { cwd: r.path, env });
    expect(run.code).toBe(1);
    expect(isAncestor(r, goodTip, "main")).toBe(true);
    const after = tip(r, "main");
    expect(after).not.toBe(before);
    expect(run.json.error.message).not.toContain("Nothing landed:");
    expect(run.json.error.message).toContain(`Nothing of ${bad.id} landed`);
    expect(run.json.error.message).toContain(
      `main did move meanwhile, ${before.slice(0, 8)} → ${after.slice(0, 8)}`,
    );
    // Nothing of the rejected berth changed.
    expect(tip(r, bad.branch)).toBe(badTip);
    expect(isAncestor(r, badTip, "main")).toBe(false);
  });

  it("an accept stopped by a refusal after its drain landed the entry ahead of it does not say nothing changed", async () => {
    // Two ports, and a destroy that fails: the first berth lands but keeps its port, so the
    // integration checkout the second needs finds no free one.
    const config =
      '[worktree]\nport_span = 2\n\n[worktree.resources.db]\ncreate = "true"\ndestroy = "exit 1"\n';
    const fx = queueFixture(config);
    repo = fx.repo;
    const { env } = fx;
    const r = repo;
    const first = await berthWith(r, env, "first", { "first.txt": "1\n" });
    const second = await berthWith(r, env, "second", { "second.txt": "2\n" });
    await runBerth(["accept", first.id, "--no-wait", "--yes"], { cwd: r.path, env });
    const before = tip(r, "main");

    const run = await runBerth(["accept", second.id, "--yes"], { cwd: r.path, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("port band may be full");
    const after = tip(r, "main");
    expect(after).not.toBe(before);
    expect(run.stderr).not.toContain("Nothing changed");
    expect(run.stderr).toContain(`main moved ${before.slice(0, 8)} → ${after.slice(0, 8)}`);
    const text = await runBerth(["queue"], { cwd: r.path, env });
    expect(text.stdout).toMatch(/second-\S+ +\S+ +rejected/);
  });
});
