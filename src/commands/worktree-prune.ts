import type { Context } from "../context.js";
import { applyPrune, hasWork, type PruneData } from "../core/lifecycle/prune-apply.js";
import {
  type ContainedRow,
  measureIgnored,
  type PrunePlan,
  planPrune,
} from "../core/lifecycle/prune-plan.js";
import { UserError } from "../errors.js";
import type { DiskUsage } from "../io/disk-usage.js";
import { asApplied, type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand, shortOid } from "../text.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { pruneConfirmText, renderPruneResult } from "../ui/prune-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth worktree prune`'s confirmation: what is kept and destroyed, with the ignored files that go. */
export function pruneConfirmation(
  plan: PrunePlan,
  contained: boolean,
  ignored: DiskUsage,
  data: PruneData,
  c: Colors,
): Confirmation {
  return {
    question: contained ? "Prune, and reclaim the contained berths?" : "Prune?",
    yesCommand: shellCommand([
      "berth",
      "worktree",
      "prune",
      ...(contained ? ["--contained"] : []),
      "--yes",
    ]),
    planText: pruneConfirmText(plan.sections, contained, ignored, c),
    plan: plan.steps,
    data,
  };
}

/** One contained berth's reclaim: the prune plan narrowed to its contained row. */
export interface ReclaimPlan {
  plan: PrunePlan;
  candidate: ContainedRow;
  ignored: DiskUsage;
}

/**
 * The desk's per-berth reclaim (ADR 0225): planned as prune plans it, applied
 * through the same `applyPrune` with the contained section only, so it
 * re-validates right before acting and never deletes a ref.
 */
export async function planReclaim(ctx: Context, path: string, id: string): Promise<ReclaimPlan> {
  const plan = await planPrune(ctx);
  const candidate = plan.sections.contained.find((r) => r.path === path);
  if (candidate === undefined) {
    throw new UserError(
      "precondition_failed",
      `${id} is no longer contained (a commit, a file, a verb in flight, or a moved container); nothing changed. berth worktree prune --dry-run lists what is contained now.`,
      { next: shellCommand(["berth", "worktree", "prune", "--dry-run"]) },
    );
  }
  const steps = [
    {
      step: "reclaim contained berth",
      target: candidate.path,
      detail: `${candidate.branch} at ${shortOid(candidate.tip)} is inside ${candidate.container} at ${shortOid(candidate.container_tip)} (+${candidate.container_ahead}); the branch ref is kept`,
    },
  ];
  return {
    plan: {
      ...plan,
      sections: { stale: [], landed: [], orphaned: [], contained: [candidate] },
      steps,
    },
    candidate,
    ignored: await measureIgnored([candidate.path]),
  };
}

/** The reclaim's confirmation: the command is the fleet-wide one (the desk says how it differs). */
export function reclaimConfirmation(reclaim: ReclaimPlan, c: Colors): Confirmation {
  const { candidate, plan } = reclaim;
  return {
    question: `Reclaim ${candidate.id} (branch ${candidate.branch} is kept)?`,
    yesCommand: shellCommand(["berth", "worktree", "prune", "--contained", "--yes"]),
    planText: pruneConfirmText(plan.sections, true, reclaim.ignored, c),
    plan: plan.steps,
  };
}

export async function applyReclaim(ctx: Context, reclaim: ReclaimPlan): Promise<CommandOutcome> {
  return pruneOutcome(asApplied(await applyPrune(ctx, reclaim.plan, { contained: true })));
}

export function pruneOutcome(result: PlanApplyResult<PruneData>): CommandOutcome {
  return { result, human: (c) => ({ stdout: renderPruneResult(result, c) }) };
}

export async function worktreePruneCommand(
  ctx: Context,
  options: { contained?: boolean; yes?: boolean; dryRun?: boolean },
): Promise<CommandOutcome> {
  const contained = options.contained === true;
  const plan = await planPrune(ctx);
  const planned: PruneData = {
    sections: plan.sections,
    contained_included: contained,
    applied: [],
    skipped: [],
  };
  if (options.dryRun || !hasWork(plan.sections, contained)) {
    // Nothing to apply is a plan too: it changes nothing.
    const result = plannedResult("worktree prune", planned, plan.steps, { hints: plan.hints });
    if (!options.dryRun && plan.sections.contained.length > 0) {
      result.hints.push(
        "contained berths are offered, not reclaimed: berth worktree prune --contained",
      );
    }
    return pruneOutcome(result);
  }
  const removed = [
    ...plan.sections.landed.flatMap((r) => (r.kind === "worktree" ? [r.path] : [])),
    ...(contained ? plan.sections.contained.map((r) => r.path) : []),
  ];
  const ignored = await measureIgnored(removed);
  await confirmOrRefuse(ctx, {
    verb: "worktree prune",
    yes: options.yes === true,
    ...pruneConfirmation(plan, contained, ignored, planned, colorsFor(ctx.stderrIsTTY, ctx.env)),
  });
  return pruneOutcome(asApplied(await applyPrune(ctx, plan, { contained })));
}
