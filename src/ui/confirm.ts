import { createInterface } from "node:readline/promises";
import type { Context } from "../context.js";
import { UserError } from "../errors.js";
import type { PlanStep } from "../result.js";
import type { CommandLine } from "../text.js";

/**
 * The one `[y/N]` confirmation of destructive verbs (spec section 4). The
 * question goes to stderr and defaults to No. `--yes` answers it. With no
 * terminal to ask on and no `--yes`, the verb refuses with
 * `confirmation_required` and prints the plan, having changed nothing.
 */

/**
 * What a verb's confirmation shows and refuses with, declared once per verb
 * beside its command module and used by the CLI and the desk alike.
 */
export interface Confirmation {
  /** What will be kept and what destroyed, for a person (several lines). */
  planText: string;
  /** The same plan as data, for `--json`. */
  plan: PlanStep[];
  /** e.g. "Drop berth fix-login-3f2a1c?" */
  question: string;
  /** The command that runs it without asking, quoted with shellCommand. */
  yesCommand: CommandLine;

  data?: unknown;
}

export interface ConfirmRequest extends Confirmation {
  /** The verb as typed after `berth`, e.g. "worktree drop". */
  verb: string;
  /** `--yes` was given. */
  yes: boolean;
}

export async function confirmOrRefuse(
  ctx: Context,
  request: ConfirmRequest,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<void> {
  if (request.yes) return;
  if (!ctx.stdinIsTTY) {
    throw new UserError(
      "confirmation_required",
      `${request.planText.trimEnd()}\nThis needs confirmation and there is no terminal to ask on; nothing changed.`,
      { next: request.yesCommand, plan: { steps: request.plan }, data: request.data },
    );
  }
  const answer = await ask(ctx, input, `${request.planText.trimEnd()}\n${request.question} [y/N] `);
  if (/^\s*y(es)?\s*$/i.test(answer)) return;
  throw notConfirmed(request);
}

/** The refusal of a confirmation answered No (at the terminal or in the desk). */
export function notConfirmed(confirmation: Confirmation): UserError {
  return new UserError("confirmation_required", "Not confirmed; nothing changed.", {
    next: confirmation.yesCommand,
    plan: { steps: confirmation.plan },
    data: confirmation.data,
  });
}

async function ask(ctx: Context, input: NodeJS.ReadableStream, prompt: string): Promise<string> {
  const rl = createInterface({ input, output: ctx.stderr, terminal: false });
  try {
    ctx.stderr.write(prompt);
    // End of input (Ctrl-D) answers No.
    const line = await new Promise<string>((resolve) => {
      rl.once("line", resolve);
      rl.once("close", () => resolve(""));
    });
    return line;
  } finally {
    rl.close();
  }
}
