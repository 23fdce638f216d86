import { existsSync } from "node:fs";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { type Grant, readGrants, takeGrant, writeGrant } from "../../io/queue-grants.js";
import {
  type Authority,
  changeEntry,
  decidedArchivePath,
  isBeingLanded,
  isFinal,
  type QueueEntry,
  type QueueState,
  RECENT_DECIDED,
  readQueue,
  readQueueFiles,
  submitEntryFor,
} from "../../io/queue-store.js";
import type { VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { classifyState } from "../fleet/status.js";
import { surveyFleet } from "../fleet/survey.js";
import { resolveTarget } from "../repo/berth-target.js";
import { openRepository, type Repository } from "../repo/repository.js";
import type { AcceptApplyOptions, AcceptData, AcceptPlan } from "./accept.js";
import { grantRefusal } from "./grant-rule.js";
import { completeLeftovers } from "./queue-discard.js";
import { acquireQueueLock, type DrainReport, drainQueue } from "./queue-drain.js";
import { type QueueEntryView, viewEntry, viewQueue } from "./queue-entries.js";
import type { Lander } from "./queue-lander.js";

export { type QueueEntryView, viewQueue };

/**
 * The landing queue as verbs see it (spec section 11): submitting a berth's
 * stack (accept), listing (`berth queue`), `approve` and `withdraw`, and
 * draining (`queue run`, and accept waiting for its own entry). Landing
 * itself is ./queue-drain.ts and ./queue-integrate.ts.
 *
 * Authority, the one place it is decided: a person's confirmation (`--yes`,
 * the `[y/N]`, the desk's approve key), `[acceptance].pre_authorized`, or a
 * `queue approve` given before the entry existed (a standing grant, kept
 * under `queue/grants/`). An entry without any waits as `awaiting_approval`.
 */

export interface QueueData {
  entries: QueueEntryView[];
  /** Standing grants: berths a person let land once submitted and green. */
  grants: Grant[];
}

export interface QueueRunData extends QueueData {
  /** Entries this run decided. */
  decided: QueueEntryView[];
  /** Gate runs this run made (a batch gated once counts once). */
  gate_runs: number;
}

/** Puts an accept plan's stack in the queue (or refreshes the berth's open entry). */
export async function submitEntry(
  ctx: Context,
  plan: AcceptPlan,
  confirmed: boolean,
): Promise<QueueEntry> {
  const { repo, data } = plan;
  const commonDir = repo.location.commonDir;
  // A submission takes up (and ends) a grant given before it, whatever authority it brings.
  const grant = await takeGrant(commonDir, data.id);
  const authority: Authority | null = confirmed
    ? "confirmed"
    : repo.config.acceptance.pre_authorized
      ? "pre_authorized"
      : grant
        ? "approved"
        : null;
  const now = ctx.now().toISOString();
  const tip = data.validated.commit;
  const state: QueueState = authority === null ? "awaiting_approval" : "queued";
  const refresh = (entry: QueueEntry): QueueEntry | null => {
    // Being landed: that landing answers this submission too.
    if (entry.state !== "queued" && entry.state !== "awaiting_approval") return null;
    // A confirmation (or an approval) is for the tip it was given at (decision 0069).
    const kept = entry.tip === tip ? (authority ?? entry.authority) : authority;
    const waits: QueueState = kept === null ? "awaiting_approval" : "queued";
    return { ...entry, tip, path: data.path, authority: kept, state: waits, updated_at: now };
  };
  return submitEntryFor(commonDir, data.id, "accept", refresh, (seq) => ({
    version: 1,
    seq,
    id: data.id,
    branch: data.branch,
    path: data.path,
    tip,
    state,
    authority,
    submitted_at: now,
    updated_at: now,
    lander: null,
    step: null,
    integration: null,
    reason: null,
    rejection: null,
    landed: null,
    gate_runs: 0,
  }));
}

/**
 * Drains the queue until `entry` is decided: whoever holds the queue lock
 * lands; waiting, this process checks whether another lander decided it.
 */
export async function landUntilDecided(
  ctx: Context,
  repo: Repository,
  entry: QueueEntry,
  options: AcceptApplyOptions,
): Promise<{ entry: QueueEntry; result?: VerbResult<AcceptData>; error?: unknown }> {
  const commonDir = repo.location.commonDir;
  const results: Lander["results"] = new Map();
  const current = async () =>
    (await readQueue(commonDir)).find((e) => e.seq === entry.seq) ?? entry;
  for (;;) {
    const now = await current();
    if (isFinal(now) || now.state === "awaiting_approval") return { entry: now };
    const held = await acquireQueueLock(repo, "accept", async () => isFinal(await current()));
    if (held === null) continue;
    try {
      await drainQueue(ctx, repo, { ...options, own: entry.seq }, results);
    } finally {
      await held.release();
    }
    const decided = await current();
    const mine = results.get(entry.seq);
    if (isFinal(decided) || decided.state === "awaiting_approval") {
      return { entry: decided, ...mine };
    }
  }
}

/** `berth queue run`: drain it, waiting for a lander already at work. */
export async function runQueue(
  ctx: Context,
  options: AcceptApplyOptions,
): Promise<VerbResult<QueueRunData>> {
  const repo = await openRepository(ctx);
  const held = await acquireQueueLock(repo, "queue run");
  // Begun as the drain starts, not with its finish: status's `running` and a killed lander's
  // traces read it (the lander works at the main checkout; what it lands is each entry's).
  ctx.journal.begin({ branch: null, path: repo.mainPath, target: null });
  let report: DrainReport;
  let hints: string[];
  try {
    // Integration checkouts an earlier rejection could not remove go first.
    hints = await completeLeftovers(repo, ctx);
    report = await drainQueue(ctx, repo, options);
  } finally {
    await held?.release();
  }
  const entries = viewQueue(await readQueue(repo.location.commonDir));
  const data: QueueRunData = {
    entries,
    grants: await readGrants(repo.location.commonDir),
    decided: viewQueue(report.decided).map((e) => ({ ...e, position: null })),
    gate_runs: report.gate_runs,
  };
  return { ok: true, verb: "queue run", data, steps: [], hints };
}

export async function listQueue(ctx: Context): Promise<VerbResult<QueueData>> {
  const repo = await openRepository(ctx);
  const commonDir = repo.location.commonDir;
  const files = await readQueueFiles(commonDir);
  const data = { entries: viewQueue(files.entries), grants: await readGrants(commonDir) };
  const archive = decidedArchivePath(commonDir);
  const hints = existsSync(archive)
    ? [
        `older decided entries (more than a day old, beyond the last ${RECENT_DECIDED}) are in ${archive}`,
      ]
    : [];
  if (files.unreadable.length > 0) {
    hints.push(
      `berth cannot read ${files.unreadable.length} entry file(s), left as they are (a newer berth's, or edited by hand): ${files.unreadable.join(", ")}`,
    );
  }
  return { ok: true, verb: "queue", data, steps: [], hints };
}

/** The berth's open entry, by id, branch or branch without its prefix. */
async function openEntryOf(repo: Repository, target: string): Promise<QueueEntry | undefined> {
  return (await entriesOf(repo, target)).find((e) => !isFinal(e));
}

/** Every queue entry of `target` (an id, or its branch with or without refs/heads/), oldest first. */
async function entriesOf(repo: Repository, target: string): Promise<QueueEntry[]> {
  const prefix = repo.config.repository.branch_prefix;
  const names = new Set([target, `${prefix}${target}`, target.replace(/^refs\/heads\//, "")]);
  return (await readQueue(repo.location.commonDir)).filter(
    (e) => names.has(e.id) || names.has(e.branch),
  );
}

/** The berth id a grant for `target` (an id, or its branch with or without refs/heads/) is filed under. */
function grantIdOf(repo: Repository, target: string): string {
  const branch = target.replace(/^refs\/heads\//, "");
  const prefix = repo.config.repository.branch_prefix;
  return prefix !== "" && branch.startsWith(prefix) ? branch.slice(prefix.length) : branch;
}

/** `berth queue approve <berth>`: the entry may land (now, or once submitted and green). */
export async function approveEntry(
  ctx: Context,
  target: string,
): Promise<VerbResult<{ entry: QueueEntryView | null; grant: string | null }>> {
  const repo = await openRepository(ctx);
  const entry = await openEntryOf(repo, target);
  if (entry === undefined) {
    // Land when green: a standing grant the berth's submission picks up.
    const survey = await surveyFleet(repo, { readStatusOf: () => false });
    const berth = resolveTarget(survey, repo.location.cwd, target, "queue approve");
    const id = berth.marker?.id;
    if (id === undefined) {
      throw new UserError("unknown_target", `${target} is not a berth.`, {
        next: shellCommand(["berth", "status"]),
      });
    }
    const refusal = grantRefusal(id, classifyState(berth, survey), survey.trunk.name);
    if (refusal !== null) {
      throw new UserError("precondition_failed", `${refusal}.`, {
        next: shellCommand(["berth", "worktree", "prune", "--dry-run"]),
      });
    }
    await writeGrant(repo.location.commonDir, { id, at: ctx.now().toISOString() });
    return {
      ok: true,
      verb: "queue approve",
      data: { entry: null, grant: id },
      steps: [
        { step: "grant", target: id, outcome: "done", reason: "lands once submitted and green" },
      ],
      hints: [],
    };
  }
  const updated_at = ctx.now().toISOString();
  const changed = await changeEntry(repo.location.commonDir, entry.seq, "queue approve", (now) =>
    now.authority === null && !isFinal(now)
      ? {
          ...now,
          authority: "approved",
          state: now.state === "awaiting_approval" ? "queued" : now.state,
          updated_at,
        }
      : null,
  );
  const view = await viewEntry(repo.location.commonDir, changed?.entry ?? entry);
  return {
    ok: true,
    verb: "queue approve",
    data: { entry: view, grant: null },
    steps: [{ step: "approve", target: entry.id, outcome: "done" }],
    hints: [shellCommand(["berth", "queue", "run"])],
  };
}

/**
 * `berth queue withdraw <berth>`: the entry leaves the queue, or (no entry)
 * its standing grant is taken back; the berth is untouched.
 */
export async function withdrawEntry(
  ctx: Context,
  target: string,
): Promise<VerbResult<{ entry: QueueEntryView | null; grant: string | null }>> {
  const repo = await openRepository(ctx);
  const entries = await entriesOf(repo, target);
  const open = entries.find((e) => !isFinal(e));
  // As the desk says it: a landed or rejected entry is why nothing waits.
  const newest = entries.at(-1)?.state;
  const noEntry = new UserError(
    "unknown_target",
    `${target} has no entry waiting in the landing queue${newest ? ` (it is ${newest})` : ""} and no standing grant.`,
    { next: shellCommand(["berth", "queue"]) },
  );
  if (open === undefined) {
    const id = grantIdOf(repo, target);
    if (!(await takeGrant(repo.location.commonDir, id))) throw noEntry;
    return {
      ok: true,
      verb: "queue withdraw",
      data: { entry: null, grant: id },
      steps: [{ step: "withdraw grant", target: id, outcome: "done" }],
      hints: [],
    };
  }
  const updated_at = ctx.now().toISOString();
  // Under the entry lock the lander takes entries up with: the withdrawal is
  // either before it took this one (which then never lands) or refused.
  const changed = await changeEntry(repo.location.commonDir, open.seq, "queue withdraw", (now) => {
    if (isBeingLanded(now) || isFinal(now)) throw notWithdrawable(now);
    return { ...now, state: "withdrawn", reason: "withdrawn", updated_at };
  });
  if (changed === null) throw noEntry;
  const view = await viewEntry(repo.location.commonDir, changed.entry);
  return {
    ok: true,
    verb: "queue withdraw",
    data: { entry: view, grant: null },
    steps: [{ step: "withdraw", target: open.id, outcome: "done" }],
    hints: [],
  };
}

function notWithdrawable(entry: QueueEntry): UserError {
  const why = isBeingLanded(entry)
    ? `is being landed now (${entry.state})`
    : `was decided meanwhile (${entry.state})`;
  return new UserError(
    "precondition_failed",
    `${entry.id} ${why}; it can no longer be withdrawn. Nothing changed.`,
    { next: shellCommand(["berth", "queue"]), nothingChanged: true },
  );
}
