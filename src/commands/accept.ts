import type { Context } from "../context.js";
import { type AcceptData, type AcceptPlan, planAccept } from "../core/landing/accept.js";
import { acceptFromQueue, finishLanding, submitAndLand } from "../core/landing/accept-queued.js";
import { handOver, submitForLanding } from "../core/landing/submit.js";
import { hasGrant } from "../io/queue-grants.js";
import { asApplied, type PlanApplyResult, plannedResult } from "../result.js";
import { shellCommand } from "../text.js";
import { acceptPlanText, renderAccept } from "../ui/accept-view.js";
import { type Confirmation, confirmOrRefuse } from "../ui/confirm.js";
import { gateProgress } from "../ui/gate-view.js";
import { renderEntries } from "../ui/queue-view.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth accept`'s confirmation, in the CLI and in the desk. */
export function acceptConfirmation(plan: AcceptPlan, c: Colors): Confirmation {
  const { data } = plan;
  return {
    question:
      plan.mode === "finish" ? `Finish accepting ${data.id}?` : `Land ${data.id} and tear it down?`,
    yesCommand: shellCommand([
      "berth",
      "accept",
      data.path === null ? data.branch : data.id,
      "--yes",
    ]),
    planText: acceptPlanText(data, c, plan.mode === "integrate"),
    plan: plan.steps,
    data,
  };
}

const NO_ONE_TO_ASK = "an accept with no terminal to confirm on and no --yes";

export function acceptOutcome(result: PlanApplyResult<AcceptData>): CommandOutcome {
  return { result, human: (c) => renderAccept(result, c) };
}

/**
 * Plan, confirm (unless `--yes` or a standing grant; with no terminal the
 * stack is handed over as an agent's accept is), then submit the stack
 * to the landing queue and drain it until this entry is decided; `--no-wait`
 * submits and returns (without a confirmation the entry awaits approval).
 * Finishing a landing that already moved the trunk needs no queue.
 */
export async function acceptCommand(
  ctx: Context,
  target: string | undefined,
  options: { yes?: boolean; dryRun?: boolean; wait?: boolean },
): Promise<CommandOutcome> {
  const plan = await planAccept(ctx, { target });
  if (options.dryRun) {
    return acceptOutcome(plannedResult("accept", plan.data, plan.steps, { hints: plan.hints }));
  }
  const granted =
    options.yes === true ||
    plan.repo.config.acceptance.pre_authorized ||
    // A grant lets a submission land; finishing one (no queue) needs a person, as for an agent.
    (plan.mode !== "finish" && hasGrant(plan.repo.location.commonDir, plan.data.id));
  const noWait = options.wait === false && plan.mode !== "finish";
  // With no one to ask, an accept that would land is handed over as an agent's is (0076).
  const handedOver = !granted && !noWait && !ctx.stdinIsTTY && plan.mode !== "finish";
  if (!granted && !noWait && !handedOver) {
    await confirmOrRefuse(ctx, {
      verb: "accept",
      yes: false,
      ...acceptConfirmation(plan, colorsFor(ctx.stderrIsTTY, ctx.env)),
    });
  }
  const confirmed = options.yes === true || (!granted && !noWait && !handedOver);
  if (noWait) {
    const submitted = await acceptFromQueue(ctx, plan, confirmed);
    return {
      result: submitted,
      human: (c) => ({
        stdout: submitted.data?.queue ? renderEntries([submitted.data.queue], c) : "",
      }),
    };
  }
  // A gate's checks run in their own process groups: forward an interrupt to them.
  const result = await withInterrupt((signal) => {
    const applyOptions = {
      signal,
      onEvent: ctx.stderrIsTTY ? gateProgress(ctx.stderr, colorsFor(true, ctx.env)) : undefined,
    };
    if (plan.mode === "finish") return finishLanding(ctx, plan, applyOptions);
    return handedOver
      ? handOver(ctx, plan, applyOptions, NO_ONE_TO_ASK)
      : submitAndLand(ctx, plan, confirmed, applyOptions);
  });
  return acceptOutcome(asApplied(result));
}

/**
 * An agent's accept (the MCP tool): submitted without a confirmation of its
 * own (core/landing/submit.ts), and interrupted as `berth accept` is, so an
 * interrupt stops its gate and withdraws its entry.
 */
export async function agentAcceptCommand(
  ctx: Context,
  target: string | undefined,
): Promise<CommandOutcome> {
  return acceptOutcome(await withInterrupt((signal) => submitForLanding(ctx, target, { signal })));
}
