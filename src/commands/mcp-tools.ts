import { isAbsolute } from "node:path";
import { z } from "zod";
import { type Context, processContext } from "../context.js";
import { EXIT_NOT_MET, type VerbResult } from "../result.js";
import { toEnvelope } from "../ui/envelope.js";
import { agentAcceptCommand } from "./accept.js";
import { awaitCommand } from "./await.js";
import { gateCommand } from "./gate.js";
import { interruptibleBy } from "./interrupt.js";
import { logbookCommand } from "./logbook.js";
import type { CommandOutcome } from "./outcome.js";
import { queueListCommand } from "./queue.js";
import { runVerb } from "./run-verb.js";
import { startCommand } from "./start.js";
import { statusCommand } from "./status.js";
import { updateCommand } from "./update.js";

/**
 * The tools `berth mcp` serves (spec section 12), declared: each is one CLI
 * verb, run through the one runner (logged with `surface: "mcp"`), returning
 * the verb's `--json` envelope as structured content and one line of text.
 * Input schemas are strict (an unknown or mistyped field is a tool error that
 * names it). There is deliberately no tool that drops, prunes or reclaims:
 * removing a berth stays a person's action (docs/decisions/0046).
 */

/** MCP clients cut a tool call at about 60 s: a wait answers before that, with a resume handle. */
export const AWAIT_CAP_S = 50;
const LOGBOOK_LIMIT = 100;

const path = z
  .string({ error: "path: expected an absolute path (a string)" })
  .refine(isAbsolute, { error: "path: expected an absolute path" })
  .optional()
  .describe("absolute path of the repository or berth to act in (default: the server's folder)");
const text = (field: string, what: string) =>
  z
    .string({ error: `${field}: expected a string` })
    .min(1, { error: `${field}: expected a non-empty string` })
    .describe(what);
const flag = (field: string, what: string) =>
  z
    .boolean({ error: `${field}: expected true or false` })
    .optional()
    .describe(what);

export interface ToolDeclaration {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  readOnly: boolean;
  /** May change something outside berth's own files (a trunk, a checkout, resources). */
  destructive: boolean;
  verb: string;
  target?: (args: Record<string, unknown>) => string | null | undefined;
  run(ctx: Context, args: Record<string, unknown>): Promise<CommandOutcome>;
  /** The one-line text summary of a completed call; `dryRun`: it ran nothing and changed nothing. */
  summary(envelope: Envelope, dryRun: boolean): string;
}

// biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb (spec section 4).
type Envelope = { ok: boolean; verb: string; data: any; error?: { code: string; message: string } };

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const fromOption = (a: Record<string, unknown>): { from?: string } => {
  const from = str(a.from);
  return from === undefined ? {} : { from };
};

export const TOOLS: readonly ToolDeclaration[] = [
  {
    name: "start",
    title: "Start a berth",
    description:
      "Create a berth: a git worktree on its own branch forked from the trunk, with its port and resources. Returns its id, branch and path; work (and run the other tools) with path set to it.",
    input: z.strictObject({
      path,
      name: text("name", "what the work is about; becomes the berth id").optional(),
      from: text("from", "fork from this branch, tag or commit instead of the trunk").optional(),
    }),
    readOnly: false,
    destructive: false,
    verb: "start",
    run: (ctx, a) => startCommand(ctx, str(a.name), fromOption(a)),
    summary: (e) =>
      `started ${e.data.id} on ${e.data.branch} at ${e.data.path} (port ${e.data.port})`,
  },
  {
    name: "status",
    title: "Survey the fleet",
    description:
      "Observe the fleet (from the main checkout) or one berth (from inside it): every worktree's state, cleanliness, ahead/behind, receipt. Changes nothing.",
    input: z.strictObject({
      path,
      all: flag("all", "the whole fleet, even from inside a berth"),
      local: flag("local", "only the checkout at path"),
    }),
    readOnly: true,
    destructive: false,
    verb: "status",
    run: (ctx, a) => statusCommand(ctx, { all: a.all === true, local: a.local === true }),
    summary: (e) =>
      `${e.data.worktrees.length} worktree(s) on trunk ${e.data.trunk.name ?? "(unknown)"}: ${summarizeStates(e.data.worktrees)}`,
  },
  {
    name: "gate",
    title: "Gate the berth",
    description:
      "Run the declared checks in the berth at path and record a receipt when green. Refuses a dirty tree or a branch behind the trunk (then run update).",
    input: z.strictObject({ path, dry_run: flag("dry_run", "list the checks, run nothing") }),
    readOnly: false,
    destructive: false,
    verb: "gate",
    run: (ctx, a) => gateCommand(ctx, { dryRun: a.dry_run === true }),
    summary: (e, dryRun) =>
      dryRun
        ? `dry run: would gate ${e.data?.branch ?? "the berth"} with ${e.data?.checks.length ?? 0} check(s); nothing ran`
        : `gate green on ${e.data?.branch ?? "the berth"}`,
  },
  {
    name: "update",
    title: "Update the berth",
    description:
      "Merge the trunk (or from) into the berth at path. A conflict is aborted and its files listed; nothing is left half-merged.",
    input: z.strictObject({
      path,
      from: text("from", "merge this branch, tag or commit instead of the trunk").optional(),
    }),
    readOnly: false,
    destructive: false,
    verb: "update",
    run: (ctx, a) => updateCommand(ctx, fromOption(a)),
    summary: (e) =>
      e.data?.up_to_date === true
        ? `${e.data.branch} is already up to date with ${e.data.merged_from}; nothing merged`
        : `updated ${e.data?.branch ?? "the berth"}`,
  },
  {
    name: "accept",
    title: "Submit the berth for landing",
    description:
      "Submit the berth to the landing queue. It lands only with a grant ([acceptance] pre_authorized = true, or a person's berth queue approve); otherwise its entry waits as awaiting_approval (error.code) and a person lands it with the command in error.next. Follow it with the queue tool or await landed.",
    input: z.strictObject({
      path,
      berth: text("berth", "a berth id, path or branch (default: the berth at path)").optional(),
    }),
    readOnly: false,
    destructive: true,
    verb: "accept",
    target: (a) => str(a.berth),
    run: (ctx, a) => agentAcceptCommand(ctx, str(a.berth)),
    summary: (e) => `landed ${e.data?.id ?? "the berth"}`,
  },
  {
    name: "await",
    title: "Wait for a condition",
    description: `Wait until a berth is green, a branch has landed, or the trunk moved, for at most ${AWAIT_CAP_S} s. Not met: met is false and data.resume is a handle; call again with resume to continue the same wait.`,
    input: z.strictObject({
      path,
      green: text("green", "until this berth has an honored receipt for its tip").optional(),
      landed: text("landed", "until this berth's tip is reachable from the trunk").optional(),
      trunk_moved: flag("trunk_moved", "until the trunk's tip differs from its tip now"),
      resume: text("resume", "continue an earlier wait (its data.resume)").optional(),
      timeout_s: z
        .number({ error: "timeout_s: expected a number of seconds" })
        .int({ error: "timeout_s: expected a whole number of seconds" })
        .min(0, { error: "timeout_s: expected 0 or more" })
        .max(AWAIT_CAP_S, { error: `timeout_s: expected at most ${AWAIT_CAP_S}` })
        .optional()
        .describe(`seconds to wait (default and most: ${AWAIT_CAP_S}; 0 checks once)`),
    }),
    readOnly: false,
    destructive: false,
    verb: "await",
    target: (a) => str(a.green) ?? str(a.landed) ?? (a.trunk_moved === true ? null : undefined),
    run: (ctx, a) =>
      awaitCommand(ctx, {
        green: str(a.green),
        landed: str(a.landed),
        trunkMoved: a.trunk_moved === true ? true : undefined,
        resume: str(a.resume),
        timeout: String(typeof a.timeout_s === "number" ? a.timeout_s : AWAIT_CAP_S),
      }),
    summary: (e) =>
      e.data?.met
        ? `met: ${e.data.condition}`
        : `not met yet; call await again with resume "${e.data?.resume}"`,
  },
  {
    name: "queue",
    title: "Read the landing queue",
    description:
      "The landing queue in order: each entry's berth, state (awaiting_approval, queued, integrating, gating, landed, rejected, withdrawn), position and why a rejected one was rejected. Changes nothing.",
    input: z.strictObject({ path }),
    readOnly: true,
    destructive: false,
    verb: "queue",
    target: () => null,
    run: (ctx) => queueListCommand(ctx),
    summary: (e) => {
      const open = e.data.entries.filter((q: { position: number | null }) => q.position !== null);
      return `${e.data.entries.length} landing-queue entr${e.data.entries.length === 1 ? "y" : "ies"}, ${open.length} still to be decided`;
    },
  },
  {
    name: "logbook",
    title: "Read the logbook",
    description: `The newest logbook events (begin/finish of every verb), at most ${LOGBOOK_LIMIT} unless limit says otherwise. Changes nothing.`,
    input: z.strictObject({
      path,
      branch: text("branch", "only events about this branch").optional(),
      verb: text("verb", 'only this verb (e.g. "start", "worktree drop")').optional(),
      since: text("since", "only events since an ISO time or an age like 30m, 2h, 3d").optional(),
      limit: z
        .number({ error: "limit: expected a number" })
        .int({ error: "limit: expected a whole number" })
        .min(1, { error: "limit: expected at least 1" })
        .max(1000, { error: "limit: expected at most 1000" })
        .optional()
        .describe(`newest events to return (default ${LOGBOOK_LIMIT})`),
    }),
    readOnly: true,
    destructive: false,
    verb: "logbook",
    run: async (ctx, a) => {
      const outcome = await logbookCommand(ctx, {
        branch: str(a.branch),
        verb: str(a.verb),
        since: str(a.since),
      });
      const data = outcome.result.data as { events: unknown[] } | null;
      const limit = typeof a.limit === "number" ? a.limit : LOGBOOK_LIMIT;
      if (data !== null) data.events = data.events.slice(-limit);
      return outcome;
    },
    summary: (e) => `${e.data.events.length} logbook event(s)`,
  },
];

function summarizeStates(rows: readonly { state: string }[]): string {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.state, (counts.get(row.state) ?? 0) + 1);
  return [...counts].map(([state, n]) => `${n} ${state}`).join(", ");
}

/** A tool call's world: the folder it names, no terminal, and stdout kept clear for the protocol. */
function toolContext(path: string | undefined): Context {
  // Assigned, not spread: a spread would read the current folder, which a call naming its path never needs.
  return Object.assign(processContext(false, path), {
    stdout: process.stderr,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    stdinIsTTY: false,
  });
}

export interface ToolAnswer {
  envelope: Envelope & Record<string, unknown>;
  text: string;
  /** A refusal or failure the agent must handle (an unmet wait and a pending approval are answers). */
  isError: boolean;
}

/**
 * Every tool that runs project commands or lands does so through its verb's
 * own interrupt (`withInterrupt`, as on the CLI): the server's when its
 * client goes away (mcp.ts), or the client's cancellation of this call
 * (`cancel`), stops it as a Ctrl-C stops the CLI verb.
 */
export async function callTool(
  tool: ToolDeclaration,
  args: Record<string, unknown>,
  cancel?: AbortSignal,
): Promise<ToolAnswer> {
  const ctx = toolContext(str(args.path));
  const outcome = await interruptibleBy(cancel, () =>
    runVerb(
      tool.verb,
      ctx,
      {
        surface: "mcp",
        dryRun: args.dry_run === true,
        // undefined: the subject's branch, as the CLI logs a verb with no berth argument.
        target: tool.target === undefined ? undefined : tool.target(args),
      },
      (inner) => tool.run(inner, args),
    ),
  );
  const result: VerbResult = outcome.result;
  const envelope = toEnvelope(result) as ToolAnswer["envelope"];
  const code = result.error?.code;
  const answered = result.exitCode === EXIT_NOT_MET || code === "awaiting_approval";
  return {
    envelope,
    text:
      result.ok || result.exitCode === EXIT_NOT_MET
        ? tool.summary(envelope, result.dryRun === true)
        : refusalLine(envelope),
    isError: !result.ok && !answered,
  };
}

function refusalLine(envelope: Envelope & { error?: { next?: string } }): string {
  const error = envelope.error;
  if (error === undefined) return `${envelope.verb} failed`;
  const next = error.next ? ` (next: ${error.next})` : "";
  return `${envelope.verb} refused (${error.code}): ${error.message.split("\n")[0]}${next}`;
}
