import { Writable } from "node:stream";
import type { Context } from "../context.js";
import type { DeskAction, DeskBerthItem } from "../core/desk/model.js";
import { type CommandLine, commandSequence, shellCommand } from "../text.js";
import { type Confirmation, notConfirmed } from "../ui/confirm.js";
import type { ActionProposal, ActionResult } from "../ui/desk/types.js";
import { type Colors, colorsFor } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";

/**
 * How the desk runs one of its per-berth actions: as one invocation of the
 * CLI verb, through the CLI's own runner (run-verb.ts: logbook begin and
 * finish under the verb's name, refusals and failures rendered as the CLI
 * renders them). The verb plans, the desk shows the verb's confirmation and
 * waits for the answer, and `y` applies; `n` refuses exactly as the CLI's
 * confirmation does. The desk is the confirmation, so the context has no
 * terminal, and everything the verb prints is captured for the result pane.
 */

export interface DeskActionEnvironment {
  /** The desk's own context: env, clock, debug. */
  base: Context;
  /** A folder of the repository that exists now (the desk's cwd, or the main checkout). */
  cwd(): string;
}

/** A desk action, declared: which verb it is, where it runs, and how it plans. */
export interface DeskVerb {
  /** The CLI verb, as the logbook names it. */
  verb: string;
  /** Runs in the berth's folder (its command is `cd <path> && ...`), else in the desk's. */
  inBerth: boolean;
  plan(ctx: Context, item: DeskBerthItem, c: Colors): Promise<PlannedAction>;
}

/** A planned action: the verb's confirmation, and how to apply what was planned. */
export interface PlannedAction {
  confirmation: Confirmation;
  /** Where the desk's run differs in scope from the command, said plainly; else null. */
  note: string | null;
  /** `progress` receives the verb's progress output (gate checks) as it comes. */
  apply(signal: AbortSignal, progress: NodeJS.WritableStream): Promise<CommandOutcome>;
}

type Answer = { yes: true; signal: AbortSignal; progress: (line: string) => void } | { yes: false };

export async function runDeskAction(
  env: DeskActionEnvironment,
  action: Exclude<DeskAction, "shell">,
  declared: DeskVerb,
  item: DeskBerthItem,
): Promise<ActionProposal> {
  // Imported the way cli-execute.ts imports it: the runner is in the core, loaded once.
  const { humanOutput, runVerb } = await import("./run-verb.js");
  const { base } = env;
  const c = colorsFor(base.stdoutIsTTY, base.env);
  const inFolder = (command: CommandLine) =>
    declared.inBerth ? commandSequence(shellCommand(["cd", item.row.path]), command) : command;
  const capture = captureContext(base, declared.inBerth ? item.row.path : env.cwd());
  const text = (outcome: CommandOutcome): string => {
    const error = outcome.result.error;
    // The verb names its next step for a person standing in the berth; the desk's person is not.
    if (declared.inBerth && error?.next) error.next = inFolder(error.next);
    const printed = humanOutput(outcome, { stdout: c, stderr: c });
    return `${capture.output()}${printed.stdout}${printed.stderr}`;
  };

  return new Promise<ActionProposal>((propose, fail) => {
    let proposed = false;
    let answer: (value: Answer) => void = () => undefined;
    const answered = new Promise<Answer>((resolve) => {
      answer = resolve;
    });
    const run = runVerb(declared.verb, capture.ctx, {}, async (ctx) => {
      const planned = await declared.plan(ctx, item, c);
      const command = inFolder(planned.confirmation.yesCommand);
      proposed = true;
      propose({
        kind: "confirm",
        action,
        command,
        note: planned.note,
        planText: planned.confirmation.planText,
        question: planned.confirmation.question,
        async apply(signal, progress): Promise<ActionResult> {
          answer({ yes: true, signal, progress });
          return run.then(
            (outcome) => ({ ok: outcome.result.ok, text: text(outcome) }),
            (error: unknown) => ({ ok: false, text: String(error) }),
          );
        },
        async decline() {
          answer({ yes: false });
          await run.catch(() => undefined);
        },
      });
      const reply = await answered;
      if (!reply.yes) throw notConfirmed({ ...planned.confirmation, yesCommand: command });
      return planned.apply(reply.signal, lineStream(reply.progress));
    });
    // The verb refused (or failed) while planning: nothing changed, and the CLI would have said the same.
    run.then(
      (outcome) => {
        if (proposed) return;
        // As the CLI would be run for it: in the berth, or naming the berth.
        const verb = ["berth", ...declared.verb.split(" ")];
        const command = declared.inBerth
          ? inFolder(shellCommand(verb))
          : shellCommand([...verb, item.row.id]);

        propose({ kind: "refused", action, command, text: text(outcome) });
      },
      (error: unknown) => {
        if (!proposed) fail(error);
      },
    );
  });
}

/** One action = one CLI invocation: a context in the given folder, its output captured. */
function captureContext(base: Context, cwd: string): { ctx: Context; output(): string } {
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
  return { ctx, output: () => captured.join("") };
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
