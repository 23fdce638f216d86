import type { Context } from "../../context.js";
import { isWaitingForSlot } from "../../io/gate-slots.js";
import {
  type OperationInProgress,
  type OperationKind,
  readOperationInProgress,
} from "../../io/in-progress.js";
import { type QueueState, readQueue } from "../../io/queue-store.js";
import type { VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { portFor } from "../berth/identity.js";
import { type RecentLanding, readRecentLandings } from "../landing/landings.js";
import { viewQueue } from "../landing/queue-entries.js";
import type { LastAction } from "../logbook/worktree-digest.js";
import { openRepository } from "../repo/repository.js";
import { createTrunkHint, type Trunk } from "../repo/trunk.js";
import type { FleetActivity } from "./activity.js";
import type { ContainmentEvidence, KeptRef } from "./containment.js";
import { readFleet } from "./reading.js";
import type { ReceiptState, ReceiptView } from "./receipt-state.js";
import type { FleetSurvey, WorktreeFacts } from "./survey.js";

export type WorktreeState =
  | "main"
  | "active"
  | "landed"
  | "contained"
  | "detached"
  | "broken"
  | "unreadable"
  | "prunable"
  | "locked";

export type { ReceiptState } from "./receipt-state.js";

/** One row of `berth status --json` (spec section 5). */
export interface StatusRow {
  id: string;
  path: string;
  branch: string | null;
  head: string | null;
  is_main: boolean;
  is_current: boolean;
  locked: boolean;
  prunable: boolean;
  readable: boolean | null;
  clean: boolean | null;
  changed_files: number | null;
  ahead: number | null;
  behind: number | null;
  port: number | null;
  receipt: ReceiptState;
  /** Checks the receipt records; 0 = "no checks declared" (it proves a clean tree only); null = no receipt. */
  receipt_checks: number | null;
  last_activity: string | null;
  running: string | null;
  /** The newest finished verb about this worktree per the logbook. */
  last_action: LastAction | null;
  state: WorktreeState;
  /** The containment evidence for `state: "contained"` rows; null otherwise. */
  contained: ContainmentEvidence | null;
  /** A git operation stopped half-way there (merge, rebase, am, cherry-pick, revert), or null. */
  in_progress: OperationKind | null;
  /** Its newest landing-queue entry (spec section 11), or null when it was never submitted. */
  queue: StatusQueueEntry | null;
}

export interface StatusQueueEntry {
  state: QueueState;
  position: number | null;
  reason: string | null;
}

export interface StatusData {
  trunk: { name: string | null; tip: string | null };
  /** "fleet" from the main checkout or with --all; "local" for one berth. */
  scope: "fleet" | "local";
  worktrees: StatusRow[];
  /** Branches under the prefix with no checkout and unlanded commits (kept refs). */
  refs: KeptRef[];
  /** Landings of the last 24 hours per the landing log, newest first. */
  landings: RecentLanding[];
}

export interface StatusOptions {
  /** Only the checkout berth runs in. */
  local?: boolean;
  /** The whole fleet, even from inside a berth. */
  all?: boolean;
}

/** Pure observation: reads git and files, writes nothing. */
export async function readStatus(
  ctx: Context,
  options: StatusOptions,
): Promise<VerbResult<StatusData>> {
  const repo = await openRepository(ctx);
  // The main checkout and a bare repository's own folder (no checkout) see the fleet.
  const inMain = repo.location.toplevel === repo.mainPath || repo.location.toplevel === null;
  const scope = options.all || (!options.local && inMain) ? "fleet" : "local";
  // A file read beside the survey's git processes; it costs the survey nothing.
  const landingsRead = readRecentLandings(repo.location.commonDir, ctx.now());
  const { survey, inScope, receipts, activity, containment } = await readFleet(repo, {
    now: () => ctx.now(),
    ...(scope === "fleet" ? {} : { readStatusOf: (w) => w.isCurrent }),
    inScope: (w) => scope === "fleet" || w.isCurrent,
    receipts: true,
  });
  const landings = await landingsRead;
  const queue = new Map(
    viewQueue(await readQueue(repo.location.commonDir)).map((e) => [
      e.branch,
      { state: e.state, position: e.position, reason: e.reason },
    ]),
  );
  const rows = await Promise.all(
    inScope.map(async (w) => {
      const verdict = containment.worktrees.get(w.entry.path);
      const evidence = verdict?.contained ? verdict.evidence : null;
      const row = withActivity(
        toStatusRow(survey, w, receipts.get(w.entry.path), evidence),
        activity,
      );
      row.queue = (row.branch === null ? undefined : queue.get(row.branch)) ?? null;
      if (w.adminDir !== null && (await isWaitingForSlot(w.adminDir))) {
        row.running = "gate (waiting for a slot)";
      }
      return row;
    }),
  );
  const hints: string[] = inProgressHints(rows, inScope);
  if (survey.trunk.tip === null) hints.push(missingTrunkHint(survey.trunk));
  // A branch a live checkout is rebasing is held by it (its HEAD is detached meanwhile): never abandoned.
  const rebasing = new Set(
    survey.worktrees.flatMap((w) => {
      const branch = operationOf(w)?.branch;
      return branch ? [branch] : [];
    }),
  );
  if (activity.logbook === "unreadable") {
    hints.push("the logbook could not be read: running and last_action are unknown");
  }
  return {
    ok: true,
    verb: "status",
    data: {
      trunk: { name: survey.trunk.name, tip: survey.trunk.tip },
      scope,
      worktrees: rows,
      refs: scope === "fleet" ? containment.refs.filter((r) => !rebasing.has(r.branch)) : [],
      landings,
    },
    hints,
  };
}

function missingTrunkHint(trunk: Trunk): string {
  if (trunk.name === null) {
    return "no trunk found (no origin/HEAD, main or master): set [repository].trunk in berth.toml";
  }
  const create = createTrunkHint(trunk);
  if (create !== null) return `${create} (ahead/behind are unknown meanwhile)`;
  return `trunk ${trunk.name} does not exist yet; ahead/behind are unknown`;
}

export function toStatusRow(
  survey: FleetSurvey,
  w: WorktreeFacts,
  receipt?: ReceiptView,
  contained: ContainmentEvidence | null = null,
): StatusRow {
  const { config } = survey.repo;
  const id = w.marker?.id ?? basenameOf(w.entry.path);
  return {
    id,
    path: w.entry.path,
    branch: w.entry.branch,
    head: w.entry.head,
    is_main: w.isMain,
    is_current: w.isCurrent,
    locked: w.entry.locked,
    prunable: w.entry.prunable,
    readable: w.readable,
    clean: w.status ? w.status.changedFiles === 0 : null,
    changed_files: w.status ? w.status.changedFiles : null,
    ahead: w.ahead,
    behind: w.behind,
    port: w.marker
      ? portFor(w.marker.id, config.worktree.port_base, config.worktree.port_span)
      : null,
    receipt: receipt?.state ?? "missing",
    receipt_checks: receipt?.receipt ? receipt.receipt.checks.length : null,
    last_activity: null,
    running: null,
    last_action: null,
    state: classifyState(w, survey, contained !== null),
    contained,
    in_progress: operationOf(w)?.kind ?? null,
    queue: null,
  };
}

/** The git operation stopped half-way in a worktree (io/in-progress.ts), or null. */
function operationOf(w: WorktreeFacts): OperationInProgress | null {
  return w.adminDir === null || w.entry.prunable ? null : readOperationInProgress(w.adminDir);
}

/** A hint per worktree with an operation in progress: what it is and the commands that end it. */
function inProgressHints(
  rows: readonly StatusRow[],
  worktrees: readonly WorktreeFacts[],
): string[] {
  const hints: string[] = [];
  for (const w of worktrees) {
    const op = operationOf(w);
    if (op === null) continue;
    const name = rows.find((r) => r.path === w.entry.path)?.id ?? w.entry.path;
    const inTree = (args: string[]) => shellCommand(["git", "-C", w.entry.path, ...args.slice(1)]);
    hints.push(
      `${name}: a ${op.kind}${op.branch ? ` of ${op.branch}` : ""} is in progress; ` +
        `continue it with ${inTree(op.continueArgs)}, or abort it with ${inTree(op.abortArgs)}`,
    );
  }
  return hints;
}

/** The row's `running`, `last_action` and `last_activity`, from the activity reader. */
export function withActivity(row: StatusRow, activity: FleetActivity): StatusRow {
  const facts = activity.worktrees.get(row.path);
  if (facts === undefined) return row;
  return {
    ...row,
    last_activity: facts.lastActivity?.toISOString() ?? null,
    running: facts.running,
    last_action: facts.lastAction,
  };
}

/** The single state a row shows, most urgent first. */
export function classifyState(
  w: WorktreeFacts,
  survey: FleetSurvey,
  contained = false,
): WorktreeState {
  if (w.isMain) return "main";
  if (w.entry.prunable) return "prunable";
  if (w.readable === false) return "unreadable";
  if (w.entry.locked) return "locked";
  // Its ready marker still names its branch: await and accept find it by id and path.
  if (w.marker !== null && w.entry.detached) return "detached";
  if (w.landed) return "landed";
  if (contained) return "contained";
  if (isBroken(w, survey)) return "broken";
  return "active";
}

/** A berth whose checkout no longer matches what berth made: on another branch, or an unborn one. */
function isBroken(w: WorktreeFacts, survey: FleetSurvey): boolean {
  if (w.marker === null) return false;
  if (w.entry.branch === null) return true;
  return w.entry.branch !== w.marker.branch || !survey.branches.has(w.entry.branch);
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
