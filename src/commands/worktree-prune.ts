import type { Context } from "../context.js";
import { applyPrune, hasWork, type PruneData } from "../core/lifecycle/prune-apply.js";
import { measureIgnored, planPrune } from "../core/lifecycle/prune-plan.js";
import type { VerbResult } from "../result.js";
import { confirmOrRefuse } from "../ui/confirm.js";
import { pruneConfirmText, renderPruneResult } from "../ui/prune-view.js";
import { colorsFor } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";

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
    const result: VerbResult<PruneData> = {
      ok: true,
      verb: "worktree prune",
      data: planned,
      plan: { steps: plan.steps },
      hints: plan.hints,
    };
    if (!options.dryRun && plan.sections.contained.length > 0) {
      result.hints.push(
        "contained berths are offered, not reclaimed: berth worktree prune --contained",
      );
    }
    return { result, human: (c) => ({ stdout: renderPruneResult(result, c, true) }) };
  }
  const removed = [
    ...plan.sections.landed.flatMap((r) => (r.kind === "worktree" ? [r.path] : [])),
    ...(contained ? plan.sections.contained.map((r) => r.path) : []),
  ];
  const ignored = await measureIgnored(removed);
  await confirmOrRefuse(ctx, {
    verb: "worktree prune",
    yes: options.yes === true,
    planText: pruneConfirmText(
      plan.sections,
      contained,
      ignored,
      colorsFor(ctx.stderrIsTTY, ctx.env),
    ),
    plan: plan.steps,
    question: contained ? "Prune, and reclaim the contained berths?" : "Prune?",
    yesCommand: `berth worktree prune${contained ? " --contained" : ""} --yes`,
    data: planned,
  });
  const result = await applyPrune(ctx, plan, { contained });
  return { result, human: (c) => ({ stdout: renderPruneResult(result, c, false) }) };
}
