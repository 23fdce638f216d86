import type { Context } from "../context.js";
import { parseHookPayload } from "../core/agents/hook-payload.js";
import { berthWorkflow, readSessionPlace } from "../core/agents/session-start.js";
import { setupWorktree } from "../core/lifecycle/converge-setup.js";
import { applyDrop, planDrop } from "../core/lifecycle/drop.js";
import { startBerth } from "../core/lifecycle/start.js";
import { UserError } from "../errors.js";
import { asApplied, success } from "../result.js";
import { shellCommand } from "../text.js";
import { renderStart } from "../ui/start-view.js";
import { renderDropResult, renderWorktreeSetup } from "../ui/worktree-view.js";
import type { CommandOutcome } from "./outcome.js";
import { runVerb } from "./run-verb.js";

/**
 * `berth hook ...` (spec section 12): what an agent harness runs at its own
 * lifecycle events, with the event's JSON on stdin. Each hook runs the real
 * verb through the one runner, logged with `surface: "hook"`, and keeps to the
 * harness's stdout contract: the create hook prints only the berth's path, and
 * every story or refusal goes to stderr.
 */

/**
 * A harness pipes its event's JSON to a hook; a terminal on stdin means a
 * person ran it by hand, who would not mean a random berth made (create) or
 * a refusal about a missing field (remove): the refusal names the verb for
 * people, and nothing changes.
 */
function refuseTerminal(ctx: Context, event: string, verb: readonly string[], usage: string): void {
  if (!ctx.stdinIsTTY) return;
  throw new UserError(
    "usage",
    `this is what Claude Code runs at ${event}, with the event's JSON on stdin, and stdin here is a terminal; nothing changed. By hand: berth ${usage}.`,
    { next: shellCommand(["berth", ...verb, "--help"]) },
  );
}

/** Claude Code `WorktreeCreate`: start a berth named as the harness asked; stdout is its path alone. */
export async function hookWorktreeCreateCommand(
  ctx: Context,
  stdin: string | null,
): Promise<CommandOutcome> {
  refuseTerminal(ctx, "WorktreeCreate", ["start"], "start [name]");
  const payload = parseHookPayload(stdin);
  const here = payload.cwd === null ? ctx : { ...ctx, cwd: payload.cwd };
  return runVerb("start", here, { surface: "hook" }, async (inner) => {
    const result = await startBerth(inner, { name: payload.name ?? undefined });
    return { result, human: (c) => renderStart(result, c) };
  });
}

/**
 * Claude Code `WorktreeRemove`: drop the berth without `--force`. A berth
 * holding work (uncommitted changes, commits not on the trunk, a verb in
 * flight) is kept, and the refusal says so and why.
 */
export async function hookWorktreeRemoveCommand(
  ctx: Context,
  stdin: string | null,
): Promise<CommandOutcome> {
  refuseTerminal(ctx, "WorktreeRemove", ["worktree", "drop"], "worktree drop <berth>");
  const payload = parseHookPayload(stdin);
  const target = payload.worktreePath;
  if (target === null) {
    throw new UserError("usage", 'stdin has no "worktree_path"; nothing changed.');
  }
  const here = payload.cwd === null ? ctx : { ...ctx, cwd: payload.cwd };
  return runVerb("worktree drop", here, { surface: "hook", target }, async (inner) => {
    const plan = await planDrop(inner, { target, force: false }).catch((error: unknown) => {
      throw keptRefusal(error);
    });
    // The harness removing its own worktree is the confirmation; work is never discarded here.
    const result = asApplied(await applyDrop(inner, plan));
    return { result, human: (c) => ({ stderr: renderDropResult(result, c) }) };
  });
}

function keptRefusal(error: unknown): unknown {
  if (!(error instanceof UserError) || error.code !== "precondition_failed") return error;
  return new UserError("precondition_failed", `kept: ${error.message}`, {
    next: error.next,
    data: error.data,
  });
}

export interface SessionStartData {
  checkout: "berth" | "main" | "other";
  id: string | null;
  path: string;
  /** What the agent is told (stdout: the harness adds it to the session's context). */
  advice: string;
}

/**
 * Session start: in a berth, run its convergent setup (`berth worktree setup`)
 * and remind the agent of the workflow; in the main checkout, tell it to start
 * a berth. stdout is the advice, which Claude Code adds to the session.
 */
export async function hookSessionStartCommand(
  ctx: Context,
  stdin: string | null,
): Promise<CommandOutcome> {
  const payload = parseHookPayload(stdin);
  const here = payload.cwd === null ? ctx : { ...ctx, cwd: payload.cwd };
  const place = await readSessionPlace(here);
  if (place.kind !== "berth") {
    const advice =
      place.kind === "main"
        ? `This is the main checkout (${place.path}); do not edit here. Start a berth for your work and work in the folder it prints: ${shellCommand(["berth", "start", "<name>"])}`
        : `${place.path} is a checkout berth did not make. To work in a berth: ${shellCommand(["berth", "start", "<name>"])}`;
    const data: SessionStartData = { checkout: place.kind, id: null, path: place.path, advice };
    return {
      result: success("hook session-start", data),
      human: () => ({ stdout: `${advice}\n` }),
    };
  }
  const setup = await runVerb("worktree setup", here, { surface: "hook" }, async (inner) => {
    const result = await setupWorktree(inner, { dryRun: false });
    return { result, human: (c) => ({ stderr: renderWorktreeSetup(result, c) }) };
  });
  if (!setup.result.ok) return setup;
  const workflow = berthWorkflow(place.id).join(", then ");
  const landing = place.mayLand
    ? "A person has let it land once green: your accept lands it."
    : "Your accept submits it; a person approves the landing.";
  const where = `You are in berth ${place.id} (${place.branch ?? "detached"}) at ${place.path}; its setup has run.`;
  const advice =
    place.mend === null
      ? `${where} Commit your work here, then: ${workflow}. ${landing}`
      : `${where} Before you commit, mend it: ${place.mend}. Then commit your work here, then: ${workflow}. ${landing}`;
  const data: SessionStartData = { checkout: "berth", id: place.id, path: place.path, advice };
  return {
    result: success("hook session-start", data, { hints: setup.result.hints }),
    human: (c, e) => ({ stdout: `${advice}\n`, stderr: setup.human(c, e).stderr ?? "" }),
  };
}
