import { type Context, silentJournal } from "../../context.js";
import { withFleetLock } from "../../io/lock.js";
import { changeEntry, readQueue } from "../../io/queue-store.js";
import { shellCommand } from "../../text.js";
import { surveyFleet } from "../fleet/survey.js";
import { deleteBranch } from "../lifecycle/branch-deletion.js";
import { teardownTargetOf } from "../lifecycle/removal-facts.js";
import { applyTeardown } from "../lifecycle/teardown.js";
import type { Repository } from "../repo/repository.js";

/**
 * Removing a throwaway integration checkout (spec section 11), the one place:
 *   1. THE teardown, forced (nothing in it is anyone's work): its resources,
 *      then its checkout;
 *   2. its branch by compare-and-swap, with no recovery ref: its merge
 *      commit proved nothing worth keeping, so a rejection changes no ref;
 *   3. when the teardown stops (a resource's destroy failed), the checkout
 *      stays with what it still owns (invariant 5: never a removed checkout
 *      with live resources) and the entries it was made for record it as
 *      their `leftover`: the rejection says so (teardown_failed, not "nothing
 *      changed"), `berth queue` shows it, and `berth queue run` removes it
 *      once the destroy works (`completeLeftovers`).
 * Returns null when the checkout is gone (or was never made), else why not.
 */
export async function removeIntegrationCheckout(
  repo: Repository,
  ctx: Context,
  id: string,
): Promise<string | null> {
  const queueCtx: Context = { ...ctx, cwd: repo.mainPath, journal: silentJournal };
  try {
    const survey = await surveyFleet(repo, { readStatusOf: () => false });
    const berth = survey.worktrees.find((w) => w.marker?.id === id);
    const target = berth === undefined ? null : teardownTargetOf(berth);
    if (berth === undefined || target === null) return null;
    const branch = berth.entry.branch;
    const head = berth.entry.head;
    return await withFleetLock(repo.location.commonDir, "queue run", async () => {
      const teardown = await applyTeardown(repo, queueCtx, target, {
        force: true,
        requireClean: false,
      });
      if (!teardown.ok) return teardown.failure?.reason ?? "the teardown stopped";
      if (branch !== null && head !== null) {
        await deleteBranch(repo.mainPath, repo.location.commonDir, branch, head);
      }
      return null;
    });
  } catch (error) {
    return (error as Error).message;
  }
}

/** What a rejected entry's submitter is told about its leftover integration checkout. */
export function leftoverSentence(leftover: { id: string; reason: string }): string {
  return `its integration checkout ${leftover.id} was kept because its teardown stopped (${leftover.reason}); fix the destroy command in berth.toml, then ${shellCommand(["berth", "queue", "run"])} removes it`;
}

/**
 * `berth queue run`'s first step: every recorded leftover integration
 * checkout is removed again; an entry whose checkout is gone forgets it.
 * Returns a hint for each one still left.
 */
export async function completeLeftovers(repo: Repository, ctx: Context): Promise<string[]> {
  const commonDir = repo.location.commonDir;
  const hints: string[] = [];
  const tried = new Map<string, string | null>();
  for (const entry of await readQueue(commonDir)) {
    const leftover = entry.leftover;
    if (leftover === undefined || leftover === null) continue;
    if (!tried.has(leftover.id)) {
      const why = await removeIntegrationCheckout(repo, ctx, leftover.id);
      tried.set(leftover.id, why);
      if (why !== null)
        hints.push(`${entry.id}: ${leftoverSentence({ id: leftover.id, reason: why })}`);
    }
    const why = tried.get(leftover.id) ?? null;
    await changeEntry(commonDir, entry.seq, "queue run", (now) => ({
      ...now,
      leftover: why === null ? null : { id: leftover.id, reason: why },
      updated_at: ctx.now().toISOString(),
    }));
  }
  return hints;
}
