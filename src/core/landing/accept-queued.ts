import type { Context } from "../../context.js";
import type { QueueEntry } from "../../io/queue-store.js";
import type { ResultError, VerbResult } from "../../result.js";
import { commandSequence, shellCommand, shortOid } from "../../text.js";
import {
  type AcceptApplyOptions,
  type AcceptData,
  type AcceptPlan,
  applyAccept,
} from "./accept.js";
import type { GateData } from "./gate.js";
import { landUntilDecided, submitEntry } from "./queue.js";
import { leftoverSentence } from "./queue-discard.js";
import { sayingTheTrunkMoved, settleAbandonedEntry, trunkMovedFrom } from "./queue-drain.js";
import { type QueueEntryView, viewEntry } from "./queue-entries.js";

/**
 * `berth accept` through the landing queue (spec section 11): the stack is
 * submitted, then this process lands (or waits for the lander that holds
 * the queue lock) until its own entry is decided, and answers as accept
 * always did: landed (the trunk moved; the berth torn down), or refused
 * with why and nothing of the berth changed. `data.queue` is the entry.
 */

/** `--no-wait`: submit and return; `data.queue` is the entry (nothing landed yet). */
export async function acceptFromQueue(
  ctx: Context,
  plan: AcceptPlan,
  confirmed: boolean,
): Promise<VerbResult<AcceptData>> {
  const entry = await submitEntry(ctx, plan, confirmed);
  const hints =
    entry.state === "awaiting_approval"
      ? [`${entry.id} waits for approval: ${shellCommand(["berth", "queue", "approve", entry.id])}`]
      : [`it lands when a lander drains the queue: ${shellCommand(["berth", "queue", "run"])}`];
  const view = await viewEntry(plan.repo.location.commonDir, entry);
  return {
    ok: true,
    verb: "accept",
    data: { ...plan.data, queue: view },
    plan: { steps: plan.steps },
    steps: [{ step: "submit", target: entry.id, outcome: "done", reason: entry.state }],
    hints,
  };
}

export async function submitAndLand(
  ctx: Context,
  plan: AcceptPlan,
  confirmed: boolean,
  options: AcceptApplyOptions,
): Promise<VerbResult<AcceptData>> {
  return landSubmitted(ctx, plan, await submitEntry(ctx, plan, confirmed), options);
}

/**
 * Finishes a landing an earlier run began (finish mode), then the queue
 * entry a killed lander left for it.
 */
export async function finishLanding(
  ctx: Context,
  plan: AcceptPlan,
  options: AcceptApplyOptions,
): Promise<VerbResult<AcceptData>> {
  const result = await applyAccept(ctx, plan, options);
  if (result.ok) await settleAbandonedEntry(ctx, plan.repo, plan.data.id);
  return result;
}

/** Drains the queue until the submitted entry is decided, and answers as accept. */
export async function landSubmitted(
  ctx: Context,
  plan: AcceptPlan,
  submitted: QueueEntry,
  options: AcceptApplyOptions,
): Promise<VerbResult<AcceptData>> {
  const { entry, result, error } = await landUntilDecided(ctx, plan.repo, submitted, options);
  const view: QueueEntryView | null = await viewEntry(plan.repo.location.commonDir, entry);
  if (entry.state === "landed") {
    if (result?.data) {
      const landed = result.data;
      landed.queue = view ?? null;
      if (entry.integration !== null) {
        // Landed through an integration berth (via "integration", or "contained" when the
        // remote's trunk already held it): the finish saw the berth already on the trunk, so
        // what landed is what the plan listed.
        landed.commits = plan.data.commits;
        landed.commit_count = plan.data.commit_count;
        landed.stages = plan.data.stages;
        landed.validated.checks = landed.gate?.checks.length ?? null;
      }
      return result;
    }
    // Another lander decided it: what this process knows is the entry.
    const data: AcceptData = { ...plan.data, queue: view ?? null };
    if (entry.landed) {
      data.trunk = { ...data.trunk, old: entry.landed.old_trunk, new: entry.landed.new_trunk };
      data.validated = { ...data.validated, commit: entry.landed.new_trunk };
    }
    data.landing = { ...data.landing, trunk_landed: true };
    if (error !== undefined) {
      // It landed, but its berth could not be finished: what is left is accept's to finish.
      return {
        ok: false,
        verb: "accept",
        data,
        steps: [],
        hints: [],
        error: {
          code: "partial",
          message: `${data.branch} has landed on ${data.trunk.name}, but ${(error as Error).message}`,
          next: shellCommand(["berth", "accept", data.branch]),
        },
      };
    }
    return { ok: true, verb: "accept", data, steps: [], hints: [] };
  }
  const trunk = plan.data.trunk;
  const movedTo = await trunkMovedFrom(plan.repo, trunk.name, trunk.old);
  if (entry.state === "rejected" && error !== undefined && result === undefined) {
    throw sayingTheTrunkMoved(error, trunk.name, trunk.old, movedTo);
  }
  const data: AcceptData = {
    ...plan.data,
    gate: result?.data?.gate ?? null,
    queue: view ?? null,
  };
  return {
    ok: false,
    verb: "accept",
    data,
    plan: { steps: plan.steps },
    steps: result?.steps ?? [],
    hints: result?.hints ?? [],
    ...(result?.interrupted ? { interrupted: true } : {}),
    error: rejectionError(plan, entry, data.gate, movedTo),
  };
}

/**
 * Why the queue did not land the entry, as accept's refusal. A conflict and a
 * red gate on an integration commit are the queue's rejections (`rejected`,
 * spec section 4); a red gate on the berth's own tip, landing by
 * fast-forward, is accept's own `gate_failed`, as without a queue.
 */
function rejectionError(
  plan: AcceptPlan,
  entry: QueueEntry,
  gate: GateData | null,
  trunkMovedTo: string | null,
): ResultError {
  const { data } = plan;
  const trunk = data.trunk.name;
  // Not "nothing landed" when other entries landed meanwhile: the trunk is not what it was.
  const otherLandings =
    trunkMovedTo === null
      ? ""
      : ` ${trunk} did move meanwhile, ${shortOid(data.trunk.old)} → ${shortOid(trunkMovedTo)}: the queue landed other entries (berth queue lists them).`;
  const unchanged =
    trunkMovedTo === null
      ? `Nothing landed: ${trunk}, ${data.id}, its branch and its receipt are unchanged.`
      : `Nothing of ${data.id} landed: it, its branch and its receipt are unchanged.${otherLandings}`;
  // A clause of the message: a reason that is a sentence of its own loses its full stop.
  const reason = (entry.reason ?? entry.state).replace(/\.$/, "");
  if (entry.state === "rejected" && entry.leftover) {
    // Not "nothing changed": a checkout the queue made is still there (invariant 5 keeps it).
    return {
      code: "teardown_failed",
      message: `The landing queue rejected ${data.id}: ${reason}. ${unchanged} But ${leftoverSentence(entry.leftover)}.`,
      next: shellCommand(["berth", "queue", "run"]),
    };
  }
  const inBerth = (verb: string) =>
    commandSequence(
      shellCommand(["cd", data.path ?? plan.repo.mainPath]),
      shellCommand(["berth", "update"]),
      shellCommand(["berth", verb]),
    );
  if (entry.state === "withdrawn") {
    return {
      code: "precondition_failed",
      message: `${data.id} was withdrawn from the landing queue${reason === "withdrawn" ? "" : ` (${reason})`}. ${unchanged}`,
      next: shellCommand(["berth", "accept", data.id]),
    };
  }
  switch (entry.rejection?.kind) {
    case "conflict":
      return {
        code: "rejected",
        message: `The landing queue rejected ${data.id}: ${reason}. ${unchanged}`,
        next: inBerth("gate"),
      };
    case "red":
      return {
        code: gate !== null && gate.commit === entry.tip ? "gate_failed" : "rejected",
        message: `The landing queue rejected ${data.id}: ${reason}. ${unchanged}`,
        next: inBerth("gate"),
      };
    case "moved":
      return {
        code: "moved",
        // Its branch may be what moved: berth changed nothing, but not everything is as it was.
        message: `The landing queue rejected ${data.id}: ${reason}. ${trunkMovedTo === null ? "Nothing landed" : `Nothing of ${data.id} landed`}, and berth changed nothing of ${data.id}.${otherLandings}`,
        next: shellCommand(["berth", "accept", data.id]),
      };
    default:
      return {
        code: "precondition_failed",
        message: `The landing queue rejected ${data.id}: ${reason}. ${unchanged}`,
        next: shellCommand(["berth", "queue"]),
      };
  }
}
