import type { Context } from "../../context.js";
import { shortOid } from "../../text.js";
import type { Repository } from "../repo/repository.js";
import type { ContainedRow, PruneReading } from "./prune-plan.js";
import { changedSincePlan, plannedTeardownTarget } from "./removal-facts.js";
import { applyTeardown, type TeardownResult } from "./teardown.js";

/**
 * The contained reclaim (ADR 0225): remove a spent stage's checkout and its
 * per-berth state through the shared teardown, and nothing else. This module
 * deliberately imports nothing that can move or delete a ref: the branch ref
 * is the recovery guarantee, and test/reclaim.test.ts fails if that changes.
 */

export type ReclaimOutcome =
  | { done: true; teardown: TeardownResult }
  | { done: false; reason: string; teardown: TeardownResult | null };

/**
 * Re-validates one planned candidate against a fresh reading of the fleet
 * (still contained: clean, idle, same tip, container still strictly ahead),
 * then tears it down; the teardown re-checks clean and HEAD once more right
 * before it destroys anything.
 */
export async function reclaimContained(
  ctx: Context,
  repo: Repository,
  planned: ContainedRow,
  live: PruneReading,
): Promise<ReclaimOutcome> {
  const now = live.sections.contained.find((row) => row.path === planned.path);
  const why = revalidate(planned, now);
  if (why !== null) return { done: false, reason: changedSincePlan(why), teardown: null };
  const teardown = await applyTeardown(repo, ctx, plannedTeardownTarget(planned), {
    force: false,
    requireClean: true,
    expectHead: planned.tip,
    housekeeping: true,
  });
  if (teardown.ok) return { done: true, teardown };
  const reason =
    teardown.failure?.stage === "changed"
      ? changedSincePlan(teardown.failure.reason)
      : (teardown.failure?.reason ?? "teardown failed");
  return { done: false, reason, teardown };
}

function revalidate(planned: ContainedRow, now: ContainedRow | undefined): string | null {
  if (now === undefined)
    return "no longer contained (a commit, a file, a verb in flight, or a moved container)";
  if (now.tip !== planned.tip) return `its tip moved to ${shortOid(now.tip)}`;
  if (now.id !== planned.id || now.admin_key !== planned.admin_key)
    return "it is a different berth now";
  return null;
}
