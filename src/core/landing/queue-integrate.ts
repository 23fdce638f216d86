import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { abortMerge, isMerging, listConflictedPaths, mergeCommit } from "../../git/merge.js";
import { resolveCommit } from "../../git/refs.js";
import { keepQueueLog, type QueueEntry } from "../../io/queue-store.js";
import type { VerbResult } from "../../result.js";
import { namingInstead, shellCommand } from "../../text.js";
import { commandEnvChanges } from "../berth/env.js";
import { cryptoHex, type RandomHex } from "../berth/identity.js";
import { startBerth } from "../lifecycle/start.js";
import { checkoutVariables } from "../repo/checkout.js";
import type { Repository } from "../repo/repository.js";
import { type AcceptData, type AcceptPlan, applyAccept, planAccept } from "./accept.js";
import { reproduceCommand } from "./gate-report.js";
import { removeIntegrationCheckout } from "./queue-discard.js";
import { finishEntry } from "./queue-finish.js";
import {
  countGate,
  type GroupOutcome,
  isRemoteFailure,
  type Lander,
  queueContext,
  refused,
  rejectEntry,
  rejectMoved,
  requeue,
  requeueAndThrow,
  setAsideInterrupted,
  updateEntry,
} from "./queue-lander.js";

/**
 * Landing one group of queue entries (spec section 11), every step recorded
 * in the entry before it is taken (invariant 7):
 *   1. fast-forward (`landFastForward`): a single stack that contains the
 *      trunk tip lands as accept always did (receipt or gate, then the
 *      compare-and-swap in ./accept-apply.ts); an entry whose tip is already
 *      on the trunk (carried there inside another landing) is only finished;
 *   2. integration (`integrate`): a throwaway integration berth made by
 *      `start` from the trunk tip (its resources and setup), the stacks
 *      merged into it (trunk first parent, `--no-ff`), a conflict rejecting
 *      only that entry; then that berth is accepted: the trunk's gate runs on
 *      exactly the merge commit and the trunk moves to it by compare-and-swap,
 *      the integration berth is torn down and its branch deleted;
 *   3. `finishEntry` (./queue-finish.ts): each landed entry's own landing record, then its berth
 *      is finished (teardown, branch) as a landed berth.
 * A red gate rejects a single entry; for a batch it answers "red" and the
 * caller bisects. A rejected entry's berth, branch and receipt are untouched.
 */

/**
 * A single stack containing the trunk tip: accept's own fast-forward landing.
 * Also a stack already on the trunk: accept finishes it, and the trunk did not move.
 */
export async function landFastForward(
  lander: Lander,
  entry: QueueEntry,
  trunk: string,
): Promise<GroupOutcome> {
  const ctx = queueContext(lander, entry);
  const taken = await updateEntry(lander, entry, {
    state: "gating",
    step: "fast_forward",
    lander: lander.me,
  });
  // Withdrawn or resubmitted since the drain read it: the next pass reads it as it is now.
  if (!taken) return "done";
  let plan: AcceptPlan | null = null;
  let result: VerbResult<AcceptData>;
  try {
    plan = await planAccept(ctx, { target: entry.id });
    if (plan.mode === "land" && plan.branchTip !== entry.tip) {
      await rejectMoved(lander, entry, plan.branchTip);
      return "done";
    }
    if (plan.mode === "integrate") return requeue(lander, [entry]);
    result = await applyAccept(ctx, plan, lander.options);
  } catch (error) {
    countGate(lander, [entry], plan?.data ?? null);
    if (error instanceof UserError && error.code === "moved") return requeue(lander, [entry]);
    if (isRemoteFailure(error)) return requeueAndThrow(lander, [entry], error);
    const message = (error as Error).message;
    await rejectEntry(lander, entry, refused(), message, { error });
    return "done";
  }
  countGate(lander, [entry], result.data ?? null);
  const data = result.data;
  if (data?.landing.trunk_landed) {
    await updateEntry(lander, entry, {
      state: "landed",
      step: null,
      lander: null,
      landed: {
        old_trunk: data.trunk.old,
        new_trunk: data.trunk.new,
        via: data.trunk.old === data.trunk.new ? "contained" : "fast_forward",
      },
    });
    lander.results.set(entry.seq, { result });
    return "done";
  }
  if (result.error?.code === "moved") return requeue(lander, [entry]);
  if (result.interrupted) return setAsideInterrupted(lander, [entry], result);
  const failed = data?.gate?.failures[0];
  // The gate's own words, without accept's "nothing landed" (the rejection says that itself).
  const validate = result.steps?.find(
    (step) => step.step === "validate" && step.outcome === "failed",
  );
  await rejectEntry(
    lander,
    entry,
    failed ? { kind: "red", files: [], check: failed.name } : refused(),
    failed
      ? `the trunk's gate is red: check "${failed.name}" failed on ${trunk}'s next commit`
      : (validate?.reason ?? result.error?.message ?? "not landed"),
    { result },
  );
  return "done";
}

/**
 * Merges the group onto `trunkTip` (the trunk's tip, or the remote's trunk
 * when it is ahead: ./queue-drain.ts) in an integration berth, gates it
 * there, lands it through THE trunk move (./trunk-move.ts, by accept).
 */
export async function integrate(
  lander: Lander,
  entries: QueueEntry[],
  trunk: string,
  trunkTip: string,
): Promise<GroupOutcome> {
  const ctx = queueContext(lander, null);
  const group: QueueEntry[] = [];
  for (const entry of entries) {
    const taken = await updateEntry(lander, entry, {
      state: "integrating",
      step: "checkout",
      lander: lander.me,
      integration: { id: null, trunk_tip: trunkTip, commit: null },
    });
    // One withdrawn or resubmitted since the drain read it is left to the next pass.
    if (taken) group.push(entry);
  }
  const first = group[0];
  if (first === undefined) return "done";
  let checkout: { id: string; path: string };
  try {
    const started = await startBerth(ctx, {
      name: integrationIdPrefix(first.seq).slice(0, -1),
      from: trunkTip,
      random: suffixFrom(first.tip),
    });
    if (!started.ok || started.data === undefined || started.data === null) {
      throw new Error(started.error?.message ?? "start failed");
    }
    checkout = started.data;
  } catch (error) {
    const why = `the integration checkout could not be set up: ${(error as Error).message}`;
    for (const entry of group) await rejectEntry(lander, entry, refused(), why, { error });
    return "done";
  }
  const merged: QueueEntry[] = [];
  for (const entry of group) {
    await updateEntry(lander, entry, {
      step: "merge",
      integration: { id: checkout.id, trunk_tip: trunkTip, commit: null },
    });
    const attempt = await mergeCommit(
      checkout.path,
      entry.tip,
      `Integrate ${entry.branch} into ${trunk}`,
      { noFastForward: true },
    );
    if (attempt.merged) {
      merged.push(entry);
      continue;
    }
    const files = await listConflictedPaths(checkout.path).catch(() => []);
    if (await isMerging(checkout.path)) await abortMerge(checkout.path);
    await rejectEntry(
      lander,
      entry,
      { kind: "conflict", files, check: null },
      files.length > 0
        ? `it conflicts with ${trunk}: ${files.join(", ")}`
        : `it does not merge with ${trunk}: ${attempt.output}`,
    );
  }
  if (merged.length === 0) {
    await discardIntegration(lander, checkout.id, group);
    return "done";
  }
  const commit = await resolveCommit(checkout.path, "HEAD");
  if (commit === null) throw new Error("the integration checkout has no HEAD");
  for (const entry of merged) {
    await updateEntry(lander, entry, {
      state: "gating",
      step: "gate",
      integration: { id: checkout.id, trunk_tip: trunkTip, commit },
    });
  }
  let plan: AcceptPlan | null = null;
  let applied: VerbResult<AcceptData>;
  try {
    // The integration berth is accepted like any berth: the trunk's gate, then the compare-and-swap.
    plan = await planAccept(ctx, { target: checkout.id });
    applied = await applyAccept(ctx, plan, { ...lander.options, integration: true });
  } catch (error) {
    countGate(lander, merged, plan?.data ?? null);
    await discardIntegration(lander, checkout.id, merged);
    if (error instanceof UserError && error.code === "moved") return requeue(lander, merged);
    const shown = inTermsOf(first, checkout.id, error);
    if (isRemoteFailure(shown)) return requeueAndThrow(lander, merged, shown);
    const why = `the integration commit could not land: ${(shown as Error).message}`;
    for (const entry of merged) await rejectEntry(lander, entry, refused(), why, { error: shown });
    return "done";
  }
  countGate(lander, merged, applied.data ?? null);
  if (!applied.data?.landing.trunk_landed) {
    await keepIntegrationFailures(lander, first, applied);
    await discardIntegration(lander, checkout.id, merged);
    if (applied.error?.code === "moved") return requeue(lander, merged);
    if (applied.interrupted) return setAsideInterrupted(lander, merged, applied);
    const failed = applied.data?.gate?.failures[0];
    if (failed !== undefined && merged.length > 1) {
      await requeue(lander, merged);
      return "red";
    }
    for (const entry of merged) {
      await rejectEntry(
        lander,
        entry,
        failed ? { kind: "red", files: [], check: failed.name } : refused(),
        failed
          ? `the trunk's gate is red on the integration commit ${commit.slice(0, 12)}: check "${failed.name}" failed`
          : renamed(first, checkout.id, applied.error?.message ?? "not landed"),
        { result: applied },
      );
    }
    return "done";
  }
  const replaced = applied.data.trunk.old;
  for (const entry of merged) {
    await finishEntry(lander, entry, { old: trunkTip, new: commit, trunk, replaced }, applied);
  }
  return "done";
}

/**
 * A red integration gate's failures, made to outlive the integration
 * checkout, which is removed next: each failed check's log is kept in the
 * queue's folder, and its reproduce line runs the check in the berth that
 * led the group, once the trunk is merged there (the refusal's next does the
 * same with `berth update` and `berth gate`), with that berth's BERTH_*
 * variables, as its own gate would. The checkout's own path would name a
 * folder that is gone.
 */
async function keepIntegrationFailures(
  lander: Lander,
  leader: QueueEntry,
  applied: VerbResult<AcceptData>,
): Promise<void> {
  const gate = applied.data?.gate;
  const path = leader.path ?? lander.repo.mainPath;
  const marker = leader.path === null ? null : { id: leader.id };
  const variables = checkoutVariables(
    lander.repo,
    { path, branch: leader.branch, marker },
    gate?.trunk ?? null,
  );
  const environment = commandEnvChanges(lander.ctx.env, variables);
  for (const failure of gate?.failures ?? []) {
    if (failure.log !== null) {
      failure.log = await keepQueueLog(lander.repo.location.commonDir, leader.seq, failure.log);
    }
    failure.reproduce = reproduceCommand(
      path,
      failure.command,
      environment,
      shellCommand(["berth", "update"]),
    );
  }
}

/**
 * An integration berth's refusal, as its submitter reads it: accept's refusals
 * name the berth they were about, and `berth accept <integration berth>` (or
 * `berth queue withdraw` of it) would name a throwaway checkout that is gone
 * by then. The person acts on their own berth (the group's first entry).
 */
function inTermsOf(leader: QueueEntry, integrationId: string, error: unknown): unknown {
  if (!(error instanceof UserError)) return error;
  const next = error.next && namingInstead(error.next, integrationId, leader.id);
  return new UserError(error.code, renamed(leader, integrationId, error.message), {
    next,
    data: error.data,
    plan: error.plan,
    nothingChanged: error.nothingChanged,
    cause: error,
  });
}

function renamed(leader: QueueEntry, integrationId: string, text: string): string {
  return text.replaceAll(`berth accept ${integrationId}`, `berth accept ${leader.id}`);
}

/** The id of the integration berth for the group led by entry `seq` starts with this. */
export function integrationIdPrefix(seq: number): string {
  return `integrate-${seq}-`;
}

/**
 * The integration berth's id suffix: from the entry's tip first (the same
 * entry gets the same checkout name, so its merge commit is reproducible),
 * random if that id is taken.
 */
function suffixFrom(tip: string): RandomHex {
  let calls = 0;
  return (digits) => (calls++ === 0 ? tip.slice(0, digits) : cryptoHex(digits));
}

/**
 * Removes a throwaway integration checkout (./queue-discard.ts); one that
 * stays (its teardown stopped) is recorded on the entries it was made for.
 */
export async function discardIntegration(
  lander: Lander,
  id: string,
  owners: readonly QueueEntry[],
): Promise<void> {
  const why = await removeIntegrationCheckout(lander.repo, lander.ctx, id);
  if (why === null) return;
  lander.ctx.stderr.write(`berth: the integration checkout ${id} was not removed: ${why}\n`);
  for (const entry of owners) await updateEntry(lander, entry, { leftover: { id, reason: why } });
}

/** Whether `commit` is on the trunk now. */
export async function onTrunkNow(
  repo: Repository,
  trunk: string,
  commit: string,
): Promise<boolean> {
  return isAncestor(repo.mainPath, commit, `refs/heads/${trunk}`).catch(() => false);
}
