import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { withFleetLock } from "../../io/lock.js";
import {
  appliedResult,
  type PlanApplyResult,
  type PlanStep,
  plannedResult,
  type StepOutcome,
} from "../../result.js";
import { shellCommand } from "../../text.js";
import { describeFailure, ensureResources, readOwnedEntries } from "../berth/resources.js";
import { describeSetupFailure, runSetupEnsure } from "../berth/setup-steps.js";
import { readCurrentBerth } from "../repo/current-berth.js";
import { openRepository } from "../repo/repository.js";

/**
 * `berth worktree setup`: re-runs convergent setup in the current berth.
 * Every declared resource ends up existing (recorded ones run their `ensure`,
 * missing ones are created through the ledger), then `[worktree.setup].ensure`
 * runs. Safe to repeat; nothing is undone on failure, because whatever was
 * created is recorded and owned by the berth.
 */

export interface WorktreeSetupData {
  id: string;
  path: string;
  /** Resources that had no ledger entry and were created. */
  created: string[];
  /** Resources whose ensure command ran. */
  ensured: string[];
  /** `[worktree.setup].ensure` commands that ran. */
  setup_ensure: string[];
}

export async function setupWorktree(
  ctx: Context,
  options: { dryRun: boolean },
): Promise<PlanApplyResult<WorktreeSetupData>> {
  const repo = await openRepository(ctx);
  const { owner } = await readCurrentBerth(repo, "worktree setup");
  const { entries } = await readOwnedEntries(repo, owner.adminKey, owner.id);
  const recorded = new Set(entries.map((e) => e.resource));
  const plan: PlanStep[] = [];
  for (const resource of repo.config.worktree.resources) {
    if (!recorded.has(resource.name)) {
      plan.push({
        step: "create resource",
        target: resource.name,
        detail: "not in the ledger yet",
      });
    } else if (resource.ensure.trim() !== "") {
      plan.push({ step: "ensure resource", target: resource.name });
    }
  }
  for (const command of repo.config.worktree.setup.ensure) {
    plan.push({ step: "run setup ensure", target: command });
  }
  const data: WorktreeSetupData = {
    id: owner.id,
    path: owner.path,
    created: [],
    ensured: [],
    setup_ensure: [],
  };
  if (options.dryRun) return plannedResult("worktree setup", data, plan);

  ctx.journal.begin({ branch: owner.branch, path: owner.path });
  const steps: StepOutcome[] = [];
  const resources = await withFleetLock(repo.location.commonDir, "worktree setup", () =>
    ensureResources(repo, ctx, owner),
  );
  data.created = resources.created;
  data.ensured = resources.ensured;
  for (const name of resources.created)
    steps.push({ step: "create resource", target: name, outcome: "done" });
  for (const name of resources.ensured)
    steps.push({ step: "ensure resource", target: name, outcome: "done" });
  const hints = [...resources.warnings];
  if (resources.failure) {
    throw new UserError(
      "precondition_failed",
      `Setup of ${owner.id} stopped: ${describeFailure(resources.failure)}\nFix the command in berth.toml, then run setup again.`,
      {
        next: shellCommand(["berth", "worktree", "setup"]),
        data,
        nothingChanged: resources.created.length === 0 && resources.ensured.length === 0,
      },
    );
  }
  // Outside the lock: these change only this berth's checkout (docs/decisions/0007).
  const ensure = await runSetupEnsure(repo, ctx, owner);
  data.setup_ensure = ensure.ran;
  for (const command of ensure.ran)
    steps.push({ step: "run setup ensure", target: command, outcome: "done" });
  if (ensure.failure) {
    throw new UserError(
      "precondition_failed",
      `Setup of ${owner.id} stopped: ${describeSetupFailure(ensure.failure)}\nFix the command in berth.toml, then run setup again.`,
      {
        next: shellCommand(["berth", "worktree", "setup"]),
        data,
        nothingChanged: false,
      },
    );
  }
  return appliedResult("worktree setup", data, plan, steps, { hints });
}
