import { Writable } from "node:stream";
import type { Context } from "../context.js";
import type { DeskAction, DeskBerthItem } from "../core/desk/model.js";
import { applyAccept, planAccept } from "../core/landing/accept.js";
import { runGate } from "../core/landing/gate.js";
import { runUpdate } from "../core/landing/update.js";
import { applyDrop, planDrop } from "../core/lifecycle/drop.js";
import { applyPrune } from "../core/lifecycle/prune-apply.js";
import { measureIgnored, type PrunePlan, planPrune } from "../core/lifecycle/prune-plan.js";
import { createJournal, type RecordingJournal } from "../core/logbook/journal.js";
import { UserError } from "../errors.js";
import type { PlanStep, VerbResult } from "../result.js";
import { shellQuote, shortOid } from "../text.js";
import { acceptPlanText, renderAccept } from "../ui/accept-view.js";
import type { ActionProposal, ActionResult, ConfirmableAction } from "../ui/desk/types.js";
import { gateProgress, renderGate } from "../ui/gate-view.js";
import { pruneConfirmText, renderPruneResult } from "../ui/prune-view.js";
import { renderRefusal } from "../ui/refusal.js";
import { type Colors, colorsFor } from "../ui/style.js";
import { renderUpdate } from "../ui/update-view.js";
import { dropPlanText, renderDropResult } from "../ui/worktree-view.js";

/**
 * The desk's per-berth actions (spec section 8). Each one plans with the
 * same core function its CLI verb uses, shows that verb's exact command and
 * confirmation text, and on `y` applies with the same core function, in a
 * context whose output is captured for the desk's result pane and whose
 * journal writes the logbook exactly as the CLI invocation would (one
 * invocation per action, under the CLI verb's name, a declined confirmation
 * included). The desk is the confirmation, so the context has no terminal.
 */

export interface DeskActionEnvironment {
  /** The desk's own context: env, clock, debug. */
  base: Context;
  /** A folder of the repository that exists now (the desk's cwd, or the main checkout). */
  cwd(): string;
}

/** The CLI verb each action runs, as the logbook names it. */
const VERB_OF: Record<Exclude<DeskAction, "shell">, string> = {
  gate: "gate",
  update: "update",
  accept: "accept",
  reclaim: "worktree prune",
  drop: "worktree drop",
};

export async function proposeDeskAction(
  env: DeskActionEnvironment,
  action: Exclude<DeskAction, "shell">,
  item: DeskBerthItem,
): Promise<ActionProposal> {
  const verb = VERB_OF[action];
  const row = item.row;
  const inBerth = action === "gate" || action === "update";
  const capture = captureContext(env.base, inBerth ? row.path : env.cwd(), verb);
  const colors = colorsFor(env.base.stdoutIsTTY, env.base.env);
  const command = inBerth ? `cd ${shellQuote(row.path)} && berth ${verb}` : `berth ${verb}`;
  try {
    switch (action) {
      case "gate":
        return await proposeGate(capture, command, colors);
      case "update":
        return await proposeUpdate(capture, command, colors);
      case "accept":
        return await proposeAccept(capture, row.path, colors);
      case "reclaim":
        return await proposeReclaim(capture, item, colors);
      case "drop":
        return await proposeDrop(capture, row.path, colors);
    }
  } catch (error) {
    // The verb refused while planning: nothing changed, and the CLI would have said the same.
    return { kind: "refused", action, command, text: await capture.fail(error, colors) };
  }
}

async function proposeGate(
  capture: CapturedRun,
  command: string,
  c: Colors,
): Promise<ConfirmableAction> {
  const dry = await runGate(capture.ctx, { dryRun: true });
  const data = dry.data;
  const planText = [
    renderGate(dry, c).stdout.trimEnd(),
    `  ${c.green("keeps    ")} the checkout, its branch and its files (the checks only read them)`,
    `  ${c.yellow("writes   ")} a receipt for ${data ? shortOid(data.commit) : "HEAD"} when every check passes; a red gate deletes any receipt`,
  ].join("\n");
  return capture.confirmable("gate", command, null, planText, `Gate ${data?.branch ?? "it"}?`, {
    steps: dry.plan?.steps ?? [],
    apply: async (signal, progress) => {
      const result = await runGate(capture.ctx, {
        signal,
        onEvent: gateProgress(lineStream(progress), c),
      });
      return { result, human: renderGate(result, c) };
    },
  });
}

async function proposeUpdate(
  capture: CapturedRun,
  command: string,
  c: Colors,
): Promise<ConfirmableAction> {
  const dry = await runUpdate(capture.ctx, { dryRun: true });
  const data = dry.data;
  const planText = [
    renderUpdate(dry, c).stdout.trimEnd(),
    `  ${c.green("keeps    ")} untracked files; a conflicted merge is aborted and the branch stays as it is`,
    `  ${c.yellow("changes  ")} branch ${data?.branch ?? "?"} (a fast-forward or a merge commit), then runs [worktree.setup].ensure`,
  ].join("\n");
  return capture.confirmable("update", command, null, planText, `Update ${data?.branch ?? "it"}?`, {
    steps: dry.plan?.steps ?? [],
    apply: async () => {
      const result = await runUpdate(capture.ctx, {});
      return { result, human: renderUpdate(result, c) };
    },
  });
}

async function proposeAccept(
  capture: CapturedRun,
  path: string,
  c: Colors,
): Promise<ConfirmableAction> {
  const plan = await planAccept(capture.ctx, { target: path });
  const name = plan.data.path === null ? plan.data.branch : plan.data.id;
  return capture.confirmable(
    "accept",
    `berth accept ${name} --yes`,
    null,
    acceptPlanText(plan.data, c),
    plan.mode === "land"
      ? `Land ${plan.data.id} and tear it down?`
      : `Finish accepting ${plan.data.id}?`,
    {
      steps: plan.steps,
      data: plan.data,
      apply: async (signal, progress) => {
        const result = await applyAccept(capture.ctx, plan, {
          signal,
          onEvent: gateProgress(lineStream(progress), c),
        });
        return { result, human: renderAccept(result, c) };
      },
    },
  );
}

/**
 * The per-berth reclaim (ADR 0225): the prune plan's contained row for this
 * one berth, applied through the same `applyPrune` with the contained
 * section only, so it re-validates right before acting and never deletes a ref.
 */
async function proposeReclaim(
  capture: CapturedRun,
  item: DeskBerthItem,
  c: Colors,
): Promise<ConfirmableAction> {
  const plan = await planPrune(capture.ctx);
  const candidate = plan.sections.contained.find((r) => r.path === item.row.path);
  if (candidate === undefined) {
    throw new UserError(
      "precondition_failed",
      `${item.row.id} is no longer contained (a commit, a file, a verb in flight, or a moved container); nothing changed.`,
      { next: "berth worktree prune --dry-run (lists what is contained now)" },
    );
  }
  const steps: PlanStep[] = [
    {
      step: "reclaim contained berth",
      target: candidate.path,
      detail: `${candidate.branch} at ${shortOid(candidate.tip)} is inside ${candidate.container} at ${shortOid(candidate.container_tip)} (+${candidate.container_ahead}); the branch ref is kept`,
    },
  ];
  const onlyThis: PrunePlan = {
    ...plan,
    sections: { stale: [], landed: [], orphaned: [], contained: [candidate] },
    steps,
  };
  const ignored = await measureIgnored([candidate.path]);
  return capture.confirmable(
    "reclaim",
    "berth worktree prune --contained --yes",
    `the desk reclaims ${candidate.id} alone; the command reclaims every contained berth and also prunes stale, landed and orphaned items`,
    pruneConfirmText(onlyThis.sections, true, ignored, c),
    `Reclaim ${candidate.id} (branch ${candidate.branch} is kept)?`,
    {
      steps,
      apply: async () => {
        const result = await applyPrune(capture.ctx, onlyThis, { contained: true });
        return { result, human: { stdout: renderPruneResult(result, c, false) } };
      },
    },
  );
}

/** Planned as `--force` would plan it; the command and the note say `--force` only when work would be lost. */
async function proposeDrop(
  capture: CapturedRun,
  path: string,
  c: Colors,
): Promise<ConfirmableAction> {
  const plan = await planDrop(capture.ctx, { target: path, force: true });
  const { data } = plan;
  return capture.confirmable(
    "drop",
    `berth worktree drop ${data.id}${data.forced ? " --force" : ""} --yes`,
    data.forced
      ? "this drop discards work (listed below), so the CLI needs --force; a recovery ref keeps its commits"
      : null,
    dropPlanText(data, c),
    data.forced ? `Drop ${data.id} and discard its work?` : `Drop ${data.id}?`,
    {
      steps: plan.steps,
      data,
      apply: async () => {
        const result = await applyDrop(capture.ctx, plan);
        return { result, human: { stdout: renderDropResult(result, c) } };
      },
    },
  );
}

interface Applied {
  result: VerbResult;
  human: { stdout?: string; stderr?: string };
}

interface ConfirmSpec {
  steps: PlanStep[];
  data?: unknown;
  apply(signal: AbortSignal, progress: (line: string) => void): Promise<Applied>;
}

interface CapturedRun {
  ctx: Context;
  confirmable(
    action: DeskAction,
    command: string,
    note: string | null,
    planText: string,
    question: string,
    spec: ConfirmSpec,
  ): ConfirmableAction;
  /** Finishes the invocation as failed or refused and renders it as the CLI would. */
  fail(error: unknown, c: Colors): Promise<string>;
}

/**
 * One action = one CLI invocation: a context in the berth (gate, update) or
 * the desk's folder, its output captured, a journal under the verb's name.
 */
function captureContext(base: Context, cwd: string, verb: string): CapturedRun {
  const captured: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      captured.push(String(chunk));
      done();
    },
  });
  const ctx: Context = {
    ...base,
    cwd,
    stdout: sink,
    stderr: sink,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    stdinIsTTY: false,
  };
  const journal: RecordingJournal = createJournal(ctx, verb);
  ctx.journal = journal;
  let finished = false;
  const finish = async (result: VerbResult, thrown?: unknown) => {
    if (finished) return;
    finished = true;
    await journal.finish(result, thrown);
  };

  const fail = async (error: unknown, c: Colors): Promise<string> => {
    const { result, text } = failure(verb, error, c, base.debug);
    await finish(result, error);
    return `${captured.join("")}${text}`;
  };

  return {
    ctx,
    fail,
    confirmable(action, command, note, planText, question, spec) {
      return {
        kind: "confirm",
        action,
        command,
        note,
        planText,
        question,
        async apply(signal, progress): Promise<ActionResult> {
          const c = colorsFor(base.stdoutIsTTY, base.env);
          try {
            const { result, human } = await spec.apply(signal, progress);
            await finish(result);
            const text = [
              human.stdout ?? "",
              human.stderr ?? "",
              ...result.hints.map((h) => `hint: ${h}\n`),
            ].join("");
            return { ok: result.ok, text: `${captured.join("")}${text}` };
          } catch (error) {
            return { ok: false, text: await fail(error, c) };
          }
        },
        async decline() {
          const error = new UserError("confirmation_required", "Not confirmed; nothing changed.", {
            next: command,
            plan: { steps: spec.steps },
            data: spec.data,
          });
          await finish(failure(verb, error, colorsFor(false, base.env), base.debug).result, error);
        },
      };
    },
  };
}

/** A thrown refusal or failure, as cli.ts turns it into a result and a message. */
function failure(
  verb: string,
  error: unknown,
  c: Colors,
  debug: boolean,
): { result: VerbResult; text: string } {
  if (error instanceof UserError) {
    const resultError = {
      code: error.code,
      message: error.message,
      ...(error.next === undefined ? {} : { next: error.next }),
    };
    return {
      result: { ok: false, verb, data: error.data ?? null, hints: [], error: resultError },
      text: renderRefusal(verb, resultError, error.nothingChanged, c),
    };
  }
  const err = error instanceof Error ? error : new Error(String(error));
  return {
    result: {
      ok: false,
      verb,
      data: null,
      hints: [],
      error: { code: "internal", message: err.message },
    },
    text: `${c.red(`berth ${verb}: unexpected failure:`)} ${err.message}\n${debug ? `${err.stack ?? ""}\n` : ""}`,
  };
}

/** A stream that hands each complete line to `onLine` (gate progress into the desk). */
function lineStream(onLine: (line: string) => void): NodeJS.WritableStream {
  let pending = "";
  return new Writable({
    write(chunk, _encoding, done) {
      pending += String(chunk);
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) onLine(line);
      done();
    },
  });
}
