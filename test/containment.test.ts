import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { WorktreeActivity } from "../src/core/fleet/activity.js";
import { checkoutStates } from "../src/core/fleet/checkout-states.js";
import {
  classifyContainment,
  type FleetContainment,
  nearestLiveContainer,
} from "../src/core/fleet/containment.js";
import type { FleetSurvey } from "../src/core/fleet/survey.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";
import { stopAnAm } from "./helpers/stopped-am.js";
import { type StartedBerth, startWithCommit, surveyFrom } from "./helpers/train.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const NOW = new Date("2026-06-01T12:00:00Z");
type ActivityView = Pick<WorktreeActivity, "running" | "gitActivity">;
const LONG_AGO: ActivityView = { running: null, gitActivity: new Date("2026-06-01T09:00:00Z") };

function classify(
  survey: FleetSurvey,
  options: { logbookEnabled?: boolean; activity?: (path: string) => ActivityView } = {},
): FleetContainment {
  return classifyContainment({
    survey,
    activityOf: (w) => {
      const view = options.activity?.(w.entry.path) ?? LONG_AGO;
      return {
        ...view,
        lastAction: null,
        lastActivity: view.gitActivity,
        signal: options.logbookEnabled ? "logbook" : "git",
      };
    },
    operationOf: checkoutStates().operation,
    now: NOW,
  });
}

async function train(r: TestRepo): Promise<[StartedBerth, StartedBerth, StartedBerth]> {
  const a = await startWithCommit(r, "a");
  const b = await startWithCommit(r, "b", a);
  const c = await startWithCommit(r, "c", b);
  return [a, b, c];
}

describe("containment predicate", () => {
  it("finds each spent stage of a train inside its nearest descendant", async () => {
    repo = makeRepo();
    const [a, b, c] = await train(repo);
    const result = classify(await surveyFrom(repo));
    const tip = (p: string) => repo?.git(["rev-parse", "HEAD"], p);
    expect(result.worktrees.get(a.path)).toEqual({
      contained: true,
      evidence: {
        container: b.branch,
        container_tip: tip(b.path),
        tip: tip(a.path),
        container_ahead: 1,
        container_has_checkout: true,
      },
    });
    expect(result.worktrees.get(b.path)).toMatchObject({
      contained: true,
      evidence: { container: c.branch, container_ahead: 1 },
    });
    expect(result.worktrees.get(c.path)).toMatchObject({ contained: false });
    expect(result.worktrees.get(repo.path)).toEqual({
      contained: false,
      reason: "the main checkout",
    });
  });

  it("never offers twins with equal tips", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const twin = await startWithCommit(repo, "twin", a, 0);
    const result = classify(await surveyFrom(repo));
    expect(result.worktrees.get(a.path)?.contained).toBe(false);
    expect(result.worktrees.get(twin.path)?.contained).toBe(false);
  });

  it.each([
    ["a modified tracked file", (p: string) => writeFileSync(join(p, "a-0.txt"), "edited\n")],
    ["an untracked file", (p: string) => writeFileSync(join(p, "new.txt"), "new\n")],
  ])("never offers a stage with %s", async (_label, dirty) => {
    repo = makeRepo();
    const [a] = await train(repo);
    dirty(a.path);
    const result = classify(await surveyFrom(repo));
    expect(result.worktrees.get(a.path)).toEqual({
      contained: false,
      reason: "uncommitted or untracked files",
    });
  });

  it("withholds a stage with a verb in flight (logbook on) or recent git activity (logbook off)", async () => {
    repo = makeRepo();
    const [a, b] = await train(repo);
    const survey = await surveyFrom(repo);
    const inFlight = classify(survey, {
      logbookEnabled: true,
      activity: (p) => (p === a.path ? { running: "gate", gitActivity: null } : LONG_AGO),
    });
    expect(inFlight.worktrees.get(a.path)).toMatchObject({ contained: false });
    expect(inFlight.worktrees.get(b.path)).toMatchObject({ contained: true });

    const tenMinutesAgo = new Date(NOW.getTime() - 10 * 60 * 1000);
    const recent = classify(survey, {
      logbookEnabled: false,
      activity: (p) => (p === a.path ? { running: null, gitActivity: tenMinutesAgo } : LONG_AGO),
    });
    expect(recent.worktrees.get(a.path)).toEqual({
      contained: false,
      reason: "active within the last hour",
    });

    const unknown = classify(survey, {
      activity: (p) => (p === a.path ? { running: null, gitActivity: null } : LONG_AGO),
    });
    expect(unknown.worktrees.get(a.path)?.contained).toBe(false);
  });

  it("withholds a stage with a git operation stopped half-way, whatever the logbook says", async () => {
    repo = makeRepo();
    const [a, b] = await train(repo);
    stopAnAm(repo, a.path);
    const result = classify(await surveyFrom(repo), { logbookEnabled: true });
    expect(result.worktrees.get(a.path)).toEqual({
      contained: false,
      reason: "an am is in progress",
    });
    expect(result.worktrees.get(b.path)).toMatchObject({ contained: true });
  });

  it("never offers the checkout running the scan, nor a locked one", async () => {
    repo = makeRepo();
    const [a, b] = await train(repo);
    repo.git(["worktree", "lock", b.path]);
    const result = classify(await surveyFrom(repo, a.path));
    expect(result.worktrees.get(a.path)).toEqual({
      contained: false,
      reason: "the checkout running the scan",
    });
    expect(result.worktrees.get(b.path)).toEqual({ contained: false, reason: "locked" });
  });

  it("classifies kept refs by their live container, and abandoned ones without", async () => {
    repo = makeRepo();
    const [a, b, c] = await train(repo);
    repo.git(["worktree", "remove", a.path]);
    repo.git(["worktree", "remove", b.path]);
    const kept = classify(await surveyFrom(repo)).refs;
    expect(kept.map((r) => [r.branch, r.contained_by, r.abandoned])).toEqual([
      [a.branch, c.branch, false],
      [b.branch, c.branch, false],
    ]);
    expect(kept[0]).toMatchObject({ ahead: 1, container_ahead: 2 });

    repo.git(["worktree", "remove", c.path]);
    repo.git(["branch", "-D", c.branch]);
    const abandoned = classify(await surveyFrom(repo)).refs;
    expect(abandoned.map((r) => [r.branch, r.contained_by, r.abandoned])).toEqual([
      [a.branch, null, true],
      [b.branch, null, true],
    ]);
  });

  it("points a branch with no checkout at its nearest container that has one", async () => {
    repo = makeRepo();
    const [a, b, c] = await train(repo);
    repo.git(["worktree", "remove", a.path]);
    repo.git(["worktree", "remove", b.path]);
    const survey = await surveyFrom(repo);
    // B is nearer to A, but it has no checkout any more: C is the live container.
    expect(nearestLiveContainer(survey, a.branch)).toMatchObject({
      container: c.branch,
      container_ahead: 2,
      container_has_checkout: true,
    });
    expect(nearestLiveContainer(survey, c.branch)).toBeNull();
    expect(nearestLiveContainer(survey, "berth/no-such-branch")).toBeNull();
  });

  it("never offers a landed stage", async () => {
    repo = makeRepo();
    const [a] = await train(repo);
    const aTip = repo.git(["rev-parse", "HEAD"], a.path);
    repo.git(["merge", "-q", "--ff-only", aTip]);
    const result = classify(await surveyFrom(repo));
    expect(result.worktrees.get(a.path)?.contained).toBe(false);
  });
});
