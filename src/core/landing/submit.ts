import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { asApplied, type PlanApplyResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { type AcceptApplyOptions, type AcceptData, applyAccept, planAccept } from "./accept.js";

/**
 * The one place an agent surface (the MCP `accept` tool) hands a berth over
 * for landing, and the one place the authority to land is decided for it
 * (spec section 11): an agent's accept lands only with a grant. Today the
 * grant is the standing one, `[acceptance].pre_authorized = true`; without it
 * the berth is refused as `awaiting_approval`, naming the command a person
 * runs. The landing queue (issue 17) replaces the body with "submit to the
 * queue; land when granted" behind this same signature.
 *
 * Steps: plan the accept (every ordinary refusal first: dirty, locked,
 * behind, red receipt, ...); no grant -> refuse, nothing changed; grant ->
 * apply the accept as `berth accept --yes` would.
 */
export async function submitForLanding(
  ctx: Context,
  target: string | undefined,
  options: AcceptApplyOptions = {},
): Promise<PlanApplyResult<AcceptData>> {
  const plan = await planAccept(ctx, { target });
  if (!plan.repo.config.acceptance.pre_authorized) {
    const name = plan.data.path === null ? plan.data.branch : plan.data.id;
    throw new UserError(
      "awaiting_approval",
      `${plan.data.id} was not landed: an agent's accept lands only with a person's approval or a standing grant ([acceptance] pre_authorized = true in berth.toml). Nothing changed. A person approves by running: ${shellCommand(["berth", "accept", name])}`,
      {
        next: shellCommand(["berth", "accept", name]),
        data: plan.data,
        plan: { steps: plan.steps },
      },
    );
  }
  return asApplied(await applyAccept(ctx, plan, options));
}
