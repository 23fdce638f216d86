import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "./helpers/processes.js";
import { berthWith, queueFixture, tip } from "./helpers/queue.js";
import { BERTH_BIN, collectRun, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * What lands is what was submitted (spec sections 4 and 11): an accept
 * confirms one tip, and a commit made on the berth while its gate runs is
 * not that tip. And an interrupted accept judged nothing: its entry is
 * withdrawn, never recorded as a rejection (a conflict or a red gate).
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** `berth queue run --json` in the background; its result once it exits. */
function queueRunInBackground(r: TestRepo, env: NodeJS.ProcessEnv) {
  const lander = spawn(process.execPath, [BERTH_BIN, "queue", "run", "--json"], {
    cwd: r.path,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collectRun(lander);
}

describe("the tip an accept submitted", () => {
  it("a commit made on the berth while its gate runs does not land, and the refusal says the berth moved", async () => {
    // The check itself commits: the berth moves under every gate the queue would run.
    const fx = queueFixture(
      `[gate]\nchecks = [{ name = "commits", run = "git commit -q --allow-empty -m from-check" }]\n`,
    );
    repo = fx.repo;
    const { env } = fx;
    const berth = await berthWith(repo, env, "grows", { "grows.txt": "work\n" });
    const submitted = tip(repo, berth.branch);
    const trunkBefore = tip(repo, "main");

    const run = await runBerth(["accept", berth.id, "--yes", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("moved");
    expect(run.json.error.message).toContain("moved since it was submitted");
    expect(run.json.error.message).not.toContain("kept moving");
    expect(run.json.data.queue).toMatchObject({ state: "rejected", rejection: { kind: "moved" } });
    expect(tip(repo, "main")).toBe(trunkBefore);
    // One gate ran, on the submitted tip: the queue did not go round gating each new commit.
    expect(repo.git(["rev-list", "--count", `${submitted}..${berth.branch}`])).toBe("1");
    expect(existsSync(berth.path)).toBe(true);
  });
});

describe("an interrupted accept", () => {
  it("withdraws its entry (not a rejection), lands nothing and leaves the berth as it was", async () => {
    const started = "started";
    const fx = queueFixture(
      `[gate]\nchecks = [{ name = "slow", run = 'touch "$MARKER.${started}"; sleep 30' }]\n`,
    );
    repo = fx.repo;
    const { env, marker } = fx;
    const berth = await berthWith(repo, env, "stopped", { "stopped.txt": "work\n" });
    const tipBefore = tip(repo, berth.branch);
    const trunkBefore = tip(repo, "main");

    const child = spawn(process.execPath, [BERTH_BIN, "accept", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collectRun(child);
    await waitFor("the gate's check to start", () => existsSync(`${marker}.${started}`), 20_000);
    child.kill("SIGTERM");
    const run = await done;
    expect(run.code).not.toBe(0);
    expect(run.json.ok).toBe(false);
    expect(run.json.error.message).toContain("interrupted");
    expect(run.json.error.message).not.toContain("..");
    expect(run.json.data.queue).toMatchObject({ state: "withdrawn", rejection: null });

    expect(tip(repo, "main")).toBe(trunkBefore);
    expect(tip(repo, berth.branch)).toBe(tipBefore);
    expect(existsSync(berth.path)).toBe(true);
    const queue = await runBerth(["queue", "--json"], { cwd: repo.path, env });
    expect(queue.json.data.entries.at(-1)).toMatchObject({ state: "withdrawn" });
    // Not "rejected": nothing judged it.
    const awaited = await runBerth(
      ["await", "--landed", berth.branch, "--timeout", "0", "--json"],
      {
        cwd: repo.path,
        env,
      },
    );
    expect(awaited.json.data.reason).not.toBe("rejected");
    expect(readFileSync(join(berth.path, "stopped.txt"), "utf8")).toBe("work\n");
  });
});

describe("a lander in the logbook", () => {
  it("queue run writes its begin as it starts draining, before its gates finish", async () => {
    const fx = queueFixture(
      `[gate]\nchecks = [{ name = "slow", run = 'touch "$MARKER.started"; sleep 3' }]\n`,
    );
    repo = fx.repo;
    const { env, marker } = fx;
    const berth = await berthWith(repo, env, "queued", { "queued.txt": "work\n" });
    const submitted = await runBerth(["accept", berth.id, "--yes", "--no-wait", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(submitted.code, submitted.stderr).toBe(0);

    const done = queueRunInBackground(repo, env);
    await waitFor("the gate's check to start", () => existsSync(`${marker}.started`), 20_000);
    const during = await runBerth(["logbook", "--json", "--verb", "queue run"], {
      cwd: repo.path,
      env,
    });
    const events = during.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line).event);
    expect(events).toEqual(["begin"]);
    expect((await done).code).toBe(0);
    const after = await runBerth(["logbook", "--json", "--verb", "queue run"], {
      cwd: repo.path,
      env,
    });
    expect(
      after.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).event),
    ).toEqual(["begin", "finish"]);
  });
});

describe("the queue's integration checkout", () => {
  it("cannot be dropped or parked while the lander gates in it; the landing goes on", async () => {
    const fx = queueFixture(
      `[gate]\nchecks = [{ name = "slow", run = 'touch "$MARKER.$(basename "$PWD")"; sleep 2' }]\n`,
    );
    repo = fx.repo;
    const { env, marker } = fx;
    const x = await berthWith(repo, env, "x", { "x.txt": "x\n" });
    const y = await berthWith(repo, env, "y", { "y.txt": "y\n" });
    for (const b of [x, y]) {
      const submitted = await runBerth(["accept", b.id, "--yes", "--no-wait"], {
        cwd: repo.path,
        env,
      });
      expect(submitted.code, submitted.stderr).toBe(0);
    }
    const done = queueRunInBackground(repo, env);
    // y lands second, through an integration commit gated in the queue's own checkout.
    const integrationId = () =>
      repo?.git(["worktree", "list"]).match(/integrate-[0-9]+-[0-9a-f]+/)?.[0] ?? null;
    await waitFor(
      "the integration checkout's gate",
      () => integrationId() !== null && existsSync(`${marker}.${integrationId()}`),
      30_000,
    );
    const id = integrationId() as string;
    for (const verb of [["drop", "--force"], ["park"]]) {
      const run = await runBerth(
        ["worktree", verb[0] as string, id, ...verb.slice(1), "--yes", "--json"],
        {
          cwd: repo.path,
          env,
        },
      );
      expect(run.code, verb.join(" ")).toBe(1);
      expect(run.json.error.message).toContain("the landing queue's integration checkout");
    }
    const landed = await done;
    expect(landed.code, landed.stderr).toBe(0);
    expect(landed.json.data.decided.map((e: { state: string }) => e.state)).toEqual([
      "landed",
      "landed",
    ]);
  });
});
