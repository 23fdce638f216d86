import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { withFleetLock } from "../../io/lock.js";
import {
  appliedResult,
  type PlanApplyResult,
  type PlanStep,
  type StepOutcome,
} from "../../result.js";
import { shellCommand } from "../../text.js";
import {
  describeFailure,
  destroyLedgerEntries,
  type ResourceOwner,
  readOwnedEntries,
} from "../berth/resources.js";
import { readCurrentBerth } from "../repo/current-berth.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { plannedDestroys } from "./removal-facts.js";

/**
 * `berth worktree teardown`: destroys the current berth's resources through
 * the ledger (reverse creation order) and keeps its checkout and branch.
 * `berth worktree setup` creates them again.
 */

export interface WorktreeTeardownData {
  id: string;
  path: string;
  /** Recorded resources, in the order they will be destroyed. */
  resources: string[];
  destroyed: string[];
}

export interface WorktreeTeardownPlan {
  repo: Repository;
  owner: ResourceOwner;
  data: WorktreeTeardownData;
  steps: PlanStep[];
  hints: string[];
}

export async function planWorktreeTeardown(ctx: Context): Promise<WorktreeTeardownPlan> {
  const repo = await openRepository(ctx);
  const { owner } = await readCurrentBerth(repo, "worktree teardown");
  const { resources: newestFirst, problems } = await plannedDestroys(repo, owner);
  const hints = problems.map((p) => `unreadable ledger entry, left alone: ${p}`);
  return {
    repo,
    owner,
    data: { id: owner.id, path: owner.path, resources: newestFirst, destroyed: [] },
    steps: newestFirst.map((name) => ({ step: "destroy resource", target: name })),
    hints,
  };
}

export async function applyWorktreeTeardown(
  ctx: Context,
  plan: WorktreeTeardownPlan,
): Promise<PlanApplyResult<WorktreeTeardownData>> {
  const { repo, owner, data } = plan;
  if (data.resources.length === 0) {
    return appliedResult("worktree teardown", data, plan.steps, [], {
      hints: [...plan.hints, "no resources are recorded for this berth; nothing to destroy"],
    });
  }
  ctx.journal.begin({ branch: owner.branch, path: owner.path });
  const steps: StepOutcome[] = [];
  await withFleetLock(repo.location.commonDir, "worktree teardown", async () => {
    // Only what the plan listed, as the ledger records it now.
    const planned = new Set(data.resources);
    const { entries } = await readOwnedEntries(repo, owner.adminKey, owner.id);
    const outcome = await destroyLedgerEntries(
      repo,
      ctx,
      entries.filter((e) => planned.has(e.resource)),
    );
    data.destroyed = outcome.destroyed;
    for (const name of outcome.destroyed)
      steps.push({ step: "destroy resource", target: name, outcome: "done" });
    for (const name of data.resources) {
      if (!planned.has(name) || outcome.destroyed.includes(name)) continue;
      if (!entries.some((e) => e.resource === name)) {
        steps.push({
          step: "destroy resource",
          target: name,
          outcome: "skipped",
          reason: "changed since the plan: no longer recorded",
        });
      }
    }
    if (outcome.failure) {
      const reason = describeFailure(outcome.failure);
      steps.push({
        step: "destroy resource",
        target: outcome.failure.resource,
        outcome: "failed",
        reason,
      });
      throw new UserError(
        "teardown_failed",
        `Teardown of ${owner.id}'s resources stopped: ${reason}\nIts ledger still records what was not destroyed. Fix what resource ${outcome.failure.resource}'s destroy needs (berth runs the command its ledger recorded, not berth.toml's), then run teardown again.`,
        {
          next: shellCommand(["berth", "worktree", "teardown"]),

          data,
          nothingChanged: outcome.destroyed.length === 0,
        },
      );
    }
  });
  return appliedResult("worktree teardown", data, plan.steps, steps, {
    hints: [
      ...plan.hints,
      "the checkout and branch are kept; berth worktree setup creates the resources again",
    ],
  });
}
