import type { Context } from "../context.js";
import { approveEntry, listQueue, runQueue, withdrawEntry } from "../core/landing/queue.js";
import { shellCommand } from "../text.js";
import type { Confirmation } from "../ui/confirm.js";
import { gateProgress } from "../ui/gate-view.js";
import { renderEntries, renderQueue, renderQueueRun } from "../ui/queue-view.js";
import { colorsFor } from "../ui/style.js";
import { withInterrupt } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";

/** `berth queue [approve|withdraw <berth> | run]`: the landing queue (spec section 11). */

export async function queueListCommand(ctx: Context): Promise<CommandOutcome> {
  const result = await listQueue(ctx);
  return { result, human: (c) => ({ stdout: result.data ? renderQueue(result.data, c) : "" }) };
}

export async function queueRunCommand(ctx: Context): Promise<CommandOutcome> {
  const result = await withInterrupt((signal) =>
    runQueue(ctx, {
      signal,
      onEvent: ctx.stderrIsTTY ? gateProgress(ctx.stderr, colorsFor(true, ctx.env)) : undefined,
    }),
  );
  return {
    result,
    human: (c) => ({ stdout: result.data ? renderQueueRun(result.data, c) : "" }),
  };
}

export async function queueApproveCommand(ctx: Context, target: string): Promise<CommandOutcome> {
  const result = await approveEntry(ctx, target);
  return {
    result,
    human: (c) => ({
      stdout: result.data?.grant
        ? `${result.data.grant} may land once it is submitted and green (${shellCommand(["berth", "queue", "withdraw", result.data.grant])} takes that back).\n`
        : renderEntries(result.data?.entry ? [result.data.entry] : [], c),
    }),
  };
}

export async function queueWithdrawCommand(ctx: Context, target: string): Promise<CommandOutcome> {
  const result = await withdrawEntry(ctx, target);
  return {
    result,
    human: (c) => ({
      stdout: result.data?.grant
        ? `${result.data.grant}'s standing grant is withdrawn: its next submission waits for a person's approval.\n`
        : renderEntries(result.data?.entry ? [result.data.entry] : [], c),
    }),
  };
}

/** The desk's confirmation of approve and withdraw: one line, the command that does it. */
export function queueConfirmation(question: string, args: string[]): Confirmation {
  return { question, yesCommand: shellCommand(args), planText: `${question}\n`, plan: [] };
}
