import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import type { QueueEntry } from "../../io/queue-store.js";
import { asApplied, type PlanApplyResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { type AcceptApplyOptions, type AcceptData, type AcceptPlan, planAccept } from "./accept.js";
import { finishLanding, landSubmitted } from "./accept-queued.js";
import { submitEntry } from "./queue.js";
import { viewEntry } from "./queue-entries.js";

/**
 * The one place an agent surface (the MCP `accept` tool) hands a berth over
 * for landing (spec sections 11 and 12): agents submit, people approve.
 * Steps:
 *   1. plan the accept (every ordinary refusal first: dirty, locked,
 *      integrated, red receipt, ...); nothing is submitted on a refusal;
 *   2. submit the stack to the landing queue with no confirmation of its
 *      own: the entry's authority is a standing grant (`[acceptance]
 *      pre_authorized`, or a `berth queue approve` given before), else none;
 *   3. without authority the entry waits as `awaiting_approval` (shown in
 *      status, `berth queue` and the desk) and the answer is
 *      `awaiting_approval`, naming the command a person runs to land it;
 *      with authority the queue lands it as `berth accept` would.
 * Finishing a landing that already moved the trunk (mode "finish") tears a
 * berth down without moving the trunk: that too needs the standing grant.
 */
export async function submitForLanding(
  ctx: Context,
  target: string | undefined,
  options: AcceptApplyOptions = {},
): Promise<PlanApplyResult<AcceptData>> {
  const plan = await planAccept(ctx, { target });
  if (plan.mode === "finish") {
    if (!plan.repo.config.acceptance.pre_authorized) throw await awaitingApproval(plan, null);
    return asApplied(await finishLanding(ctx, plan, options));
  }
  return handOver(ctx, plan, options, "an agent's accept");
}

/**
 * Steps 2 and 3 for a planned accept that brings no confirmation: an
 * agent's, or `berth accept` with no terminal to ask on and no `--yes`
 * (docs/decisions/0076). `who` names it in the answer.
 */
export async function handOver(
  ctx: Context,
  plan: AcceptPlan,
  options: AcceptApplyOptions,
  who: string,
): Promise<PlanApplyResult<AcceptData>> {
  const entry = await submitEntry(ctx, plan, false);
  if (entry.state === "awaiting_approval") throw await awaitingApproval(plan, entry, who);
  return asApplied(await landSubmitted(ctx, plan, entry, options));
}

async function awaitingApproval(
  plan: AcceptPlan,
  entry: QueueEntry | null,
  who = "an agent's accept",
): Promise<UserError> {
  const { data } = plan;
  const name = data.path === null ? data.branch : data.id;
  const view = entry === null ? null : await viewEntry(plan.repo.location.commonDir, entry);
  const person = shellCommand(["berth", "accept", name]);
  const message =
    entry === null
      ? `${data.id} is already on ${data.trunk.name}; only its teardown is left, and ${who} does that only with a standing grant ([acceptance] pre_authorized = true in berth.toml). Nothing changed. A person finishes it by running: ${person}`
      : `${data.id} was not landed: ${who} lands only with a person's approval or a standing grant ([acceptance] pre_authorized = true in berth.toml, or berth queue approve); it waits in the landing queue as awaiting_approval (entry ${entry.seq}). The trunk and the berth are unchanged. A person approves by running, on a terminal: ${person}`;
  return new UserError("awaiting_approval", message, {
    next: person,
    data: { ...data, queue: view },
    plan: { steps: plan.steps },
  });
}
