import type { QueueEntry } from "../../io/queue-store.js";
import { writeLandingRecord } from "../../io/unfinished-landing.js";
import type { VerbResult } from "../../result.js";
import { type AcceptData, applyAccept, planAccept } from "./accept.js";
import { type Lander, queueContext, updateEntry } from "./queue-lander.js";

/**
 * The last step of a queue landing through an integration (spec section 11,
 * ./queue-integrate.ts step 3), also taken when a lander that stopped after
 * the trunk moved is recovered (./queue-drain.ts).
 */

/** The trunk move that landed an integration commit. */
export interface IntegrationMove {
  /** What the entry's landed range starts from: the commit the integration was built on. */
  old: string;
  /** The integration commit. */
  new: string;
  trunk: string;
  /** The local trunk tip the move replaced (its compare-and-swap's old value): the landing line's old trunk. */
  replaced: string;
}

/**
 * After the trunk moved to an integration commit holding this entry: its own
 * landing record, then its berth finished like any landed berth.
 */
export async function finishEntry(
  lander: Lander,
  entry: QueueEntry,
  move: IntegrationMove,
  integration: VerbResult<AcceptData> | null,
): Promise<void> {
  const { repo } = lander;
  await updateEntry(lander, entry, { step: "finish" });
  // Accept's own unfinished-landing record: the finish below (or any later
  // `berth accept <branch>`) knows this berth landed, even with no commits of
  // its own, and records the landing once from it.
  await writeLandingRecord(repo.location.commonDir, {
    version: 1,
    id: entry.id,
    branch: entry.branch,
    path: entry.path ?? "",
    trunk: move.trunk,
    old: move.replaced,
    new: move.new,
    tip: entry.tip,
    validated_by: "gate",
    main_checkout: null,
    created_at: lander.ctx.now().toISOString(),
  });
  const hints: string[] = [];
  const ctx = queueContext(lander, entry);
  let finish: VerbResult<AcceptData> | null = null;
  let problem: string | null = null;
  try {
    const plan = await planAccept(ctx, { target: entry.id });
    if (plan.mode === "finish") finish = await applyAccept(ctx, plan, lander.options);
  } catch (error) {
    problem = `its berth was not torn down: ${(error as Error).message}`;
  }
  await updateEntry(lander, entry, {
    state: "landed",
    step: null,
    lander: null,
    // An integration that merged nothing: the (remote's) trunk already held the entry (decision 0064).
    landed: {
      old_trunk: move.old,
      new_trunk: move.new,
      via: move.old === move.new ? "contained" : "integration",
    },
  });
  if (finish?.data) {
    const data = finish.data;
    data.validated = { commit: move.new, by: "gate", checks: data.validated.checks };
    data.trunk = { name: move.trunk, old: move.old, new: move.new };
    data.resumed = false;
    data.gate = integration?.data?.gate ?? null;
    if (integration?.data) {
      // The integration berth's accept moved the trunk and brought the main checkout along.
      data.main_checkout = integration.data.main_checkout;
      data.landing.main_checkout_updated = integration.data.landing.main_checkout_updated;
    }
    finish.hints.push(...hints);
    if (problem !== null) finish.hints.push(problem);
    lander.results.set(entry.seq, { result: finish });
  } else {
    lander.results.set(entry.seq, problem === null ? {} : { error: new Error(problem) });
  }
}
