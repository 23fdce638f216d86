import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import type { StatusSummary } from "../../git/parse.js";
import { readBriefRecords } from "../../io/briefs.js";
import type { OperationInProgress, OperationKind } from "../../io/in-progress.js";
import { readGrants } from "../../io/queue-grants.js";
import type { VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { portFor } from "../berth/identity.js";
import { type RecentLanding, readRecentLandings } from "../landing/landings.js";
import { readQueueByBranch, type StatusQueueEntry } from "../landing/queue-entries.js";
import type { LastAction } from "../logbook/worktree-digest.js";
import { openRepository } from "../repo/repository.js";
import { createTrunkHint, originCopyFix, type Trunk } from "../repo/trunk.js";
import type { FleetActivity } from "./activity.js";
import { type CheckoutStates, checkoutStates, describeOperation } from "./checkout-states.js";
import { longWalkHint } from "./commit-graph.js";
import type { ContainmentEvidence } from "./containment.js";
import { heldBranches } from "./held-branches.js";
import { leftFolderHints } from "./left-folders.js";
import { brokenHints, isBrokenBerth, prunableHints, unreadableHints } from "./mend-hints.js";
import type { Overlap } from "./overlaps.js";
import { readFleet } from "./reading.js";
import type { ReceiptState, ReceiptView } from "./receipt-state.js";
import { type RemoteBerth, readRemoteBerths } from "./remote-berths.js";
import { remoteTrunkHint } from "./remote-trunk-hint.js";
import { takeStatusReads } from "./status-reads.js";
import { type StatusRef, statusRefs } from "./status-refs.js";
import type { FleetSurvey, PendingSurvey, WorktreeFacts, WorktreeSkeleton } from "./survey.js";

export type WorktreeState =
  | "main"
  | "active"
  | "landed"
  | "integrated"
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
  /** The berth's one-line title (`berth start --title`, `berth describe`); null when none. */
  title: string | null;
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
  /** A standing grant (`berth queue approve` before submission) waits for its next submission. */
  granted: boolean;
}

export interface StatusData {
  trunk: { name: string | null; tip: string | null };
  /** "fleet" from the main checkout or with --all; "local" for one berth. */
  scope: "fleet" | "local";
  worktrees: StatusRow[];
  /** Branches under the prefix with no checkout and unlanded commits (kept refs), and parked branches. */
  refs: StatusRef[];
  /** Landings of the last 24 hours per the landing log, newest first. */
  landings: RecentLanding[];
  /** Unlanded berths changing the same files (fleet scope only; empty for one berth). */
  overlaps: Overlap[];
  /** With --remote only: berth branches on the [remote] no local checkout holds. */
  remote_refs?: RemoteBerth[];
}

export type { RefState, StatusRef } from "./status-refs.js";

export interface StatusOptions {
  /** Only the checkout berth runs in. */
  local?: boolean;
  /** The whole fleet, even from inside a berth. */
  all?: boolean;
  /** Also the berth branches on the [remote] (fetches; spec section 13). */
  remote?: boolean;
}

/**
 * A table drawn while the survey runs (status on a terminal): told the rows
 * as they become known. The rows are previews; the verb's result is the answer.
 */
export interface StatusProgress {
  /** Every row in scope before any `git status` is in: ids, branches, ports. */
  skeleton(trunk: StatusData["trunk"], rows: StatusRow[]): void;
  /** A row again, once its `git status` is in (its tree columns are then known). */
  row(row: StatusRow): void;
}

/** Pure observation: reads git and files, writes nothing. */
export async function readStatus(
  ctx: Context,
  options: StatusOptions,
  progress?: StatusProgress,
): Promise<VerbResult<StatusData>> {
  // Every scope wants the status of the checkout berth runs in, the worktree
  // list and the branches: they start beside discovery (git finds the
  // checkout itself), or were started by the CLI's entry (status-reads.ts).
  const { currentStatus, location, lists, early } = takeStatusReads(ctx.cwd, options);
  const repo = await openRepository(ctx, location);
  // The main checkout and a bare repository's own folder (no checkout) see the fleet.
  const inMain = repo.location.toplevel === repo.mainPath || repo.location.toplevel === null;
  const scope = options.all || (!options.local && inMain) ? "fleet" : "local";
  const inScope = (w: WorktreeSkeleton) => scope === "fleet" || w.isCurrent;
  const checkouts = checkoutStates();
  // A file read beside the survey's git processes; it costs the survey nothing.
  const landingsRead = readRecentLandings(repo.location.commonDir, ctx.now());
  const reading = await readFleet(repo, {
    now: () => ctx.now(),
    ...(scope === "fleet" ? {} : { readStatusOf: (w) => w.isCurrent }),
    inScope,
    receipts: true,
    overlaps: scope === "fleet",
    operationOf: checkouts.operation,
    currentStatus,
    lists,
    ...(scope === "fleet" ? { early } : {}),
    ...statusHooks(checkouts, inScope, progress),
  });
  const { survey, receipts, activity, containment, overlaps } = reading;
  const landings = await landingsRead;
  // Files only: one readdir and a small read per record.
  const records = readBriefRecords(repo.location.commonDir);
  const checkedOut = new Set(
    survey.worktrees.flatMap((w) => (w.entry.branch ? [w.entry.branch] : [])),
  );
  const remoteRefs =
    options.remote === true ? await remoteBerths(repo, survey.trunk.name, checkedOut) : null;
  const [queue, grants] = await Promise.all([
    readQueueByBranch(repo.location.commonDir),
    readGrants(repo.location.commonDir),
  ]);
  const granted = new Set(grants.map((g) => g.id));
  const rows = await Promise.all(
    reading.inScope.map(async (w) => {
      const verdict = containment.worktrees.get(w.entry.path);
      const evidence = verdict?.contained ? verdict.evidence : null;
      const row = withActivity(
        toStatusRow(survey, w, checkouts.operation(w), receipts.get(w.entry.path), evidence),
        activity,
      );
      // The main checkout is no berth (describe refuses it): a record on the trunk is not its title.
      row.title =
        w.isMain || w.entry.branch === null ? null : (records.get(w.entry.branch)?.title ?? null);
      row.queue = (row.branch === null ? undefined : queue.get(row.branch)) ?? null;
      row.granted = w.marker !== null && granted.has(w.marker.id);
      if (await checkouts.waitingForSlot(w)) {
        row.running = "gate (waiting for a slot)";
      }
      return row;
    }),
  );
  const hints: string[] = inProgressHints(rows, reading.inScope, checkouts);
  hints.push(...brokenHints(rows, reading.inScope, survey.branches));
  hints.push(...unreadableHints(rows, reading.inScope, repo.location));
  hints.push(...prunableHints(rows, reading.inScope));
  const unregistered = unregisteredHint(repo.location.toplevel, scope, survey.worktrees);
  if (unregistered !== null) hints.push(unregistered);
  if (scope === "fleet") {
    hints.push(
      ...leftFolderHints(
        repo,
        survey.worktrees.map((w) => w.entry.path),
      ),
    );
  }
  if (survey.trunk.tip === null) hints.push(missingTrunkHint(survey.trunk));
  // A branch a checkout holds (held-branches.ts) is no kept ref, let alone abandoned work to resume.
  const held = heldBranches(survey.worktrees, checkouts.operation);
  if (activity.logbook === "unreadable") {
    hints.push("the logbook could not be read: running and last_action are unknown");
  }
  if (overlaps?.unreadable) {
    hints.push("git could not list the berths' changed files: overlaps are unknown");
  }
  const walk = longWalkHint(survey.ancestry, repo.location.commonDir);
  if (walk !== null) hints.push(walk);
  const remoteTrunk = await remoteTrunkHint(repo, survey, remoteRefs !== null);
  if (remoteTrunk !== null) hints.push(remoteTrunk);
  return {
    ok: true,
    verb: "status",
    data: {
      trunk: { name: survey.trunk.name, tip: survey.trunk.tip },
      scope,
      worktrees: rows,
      refs:
        scope === "fleet"
          ? statusRefs(survey, containment.refs, records).filter((r) => !held.has(r.branch))
          : [],
      landings,
      overlaps: overlaps?.groups ?? [],
      ...(remoteRefs === null ? {} : { remote_refs: remoteRefs }),
    },
    hints,
  };
}

/** --remote: needs [remote].name; a fleet without one never touches the network. */
async function remoteBerths(
  repo: Awaited<ReturnType<typeof openRepository>>,
  trunk: string | null,
  checkedOut: Set<string>,
): Promise<RemoteBerth[]> {
  if (repo.config.remote.name === null) {
    throw new UserError("precondition_failed", "--remote needs [remote].name in berth.toml.", {
      next: shellCommand(["berth", "status"]),
    });
  }
  return readRemoteBerths(repo, trunk, checkedOut);
}

/**
 * A checkout git does not list where it is: its folder was moved with a plain
 * `mv`, so git's record still names the old place. Its own status would
 * otherwise be an empty table.
 */
function unregisteredHint(
  toplevel: string | null,
  scope: StatusData["scope"],
  worktrees: readonly WorktreeSkeleton[],
): string | null {
  if (scope !== "local" || toplevel === null || worktrees.some((w) => w.isCurrent)) return null;
  return `git does not have this checkout (${toplevel}) registered here: was its folder moved? ${shellCommand(["git", "-C", toplevel, "worktree", "repair"])} records where it is now`;
}

function missingTrunkHint(trunk: Trunk): string {
  if (trunk.name === null) {
    return "no trunk found (no origin/HEAD, main or master): set [repository].trunk in berth.toml";
  }
  const create = createTrunkHint(trunk);
  if (create !== null) return `${create} (ahead/behind are unknown meanwhile)`;
  const copy = originCopyFix(trunk);
  if (copy !== null) return `trunk ${trunk.name} does not exist: ${copy}`;
  return `trunk ${trunk.name} does not exist yet; ahead/behind are unknown`;
}

/**
 * The survey's hooks: once the worktrees are known, the checkouts' own
 * states are read (checkout-states.ts), and a progress view, if any, is fed
 * the skeleton (with any status already in), then each row as its status
 * arrives. Rows are made by toStatusRow, as the final ones are.
 */
function statusHooks(
  checkouts: CheckoutStates,
  inScope: (w: WorktreeSkeleton) => boolean,
  progress: StatusProgress | undefined,
): {
  onSkeleton: (pending: PendingSurvey) => void;
  onStatus?: (path: string, status: StatusSummary | null) => void;
} {
  const readStates = (p: PendingSurvey) => checkouts.readAll(p.worktrees.filter(inScope));
  if (progress === undefined) return { onSkeleton: readStates };
  let pending: PendingSurvey | null = null;
  const byPath = new Map<string, WorktreeSkeleton>();
  const arrived = new Map<string, StatusSummary | null>();
  const rowOf = (p: PendingSurvey, w: WorktreeSkeleton): StatusRow => {
    const status = arrived.get(w.entry.path);
    const facts: WorktreeFacts = {
      ...w,
      status: status ?? null,
      readable: status === undefined ? null : status !== null,
      ahead: null,
      behind: null,
      landed: false,
      integrated: false,
    };
    return toStatusRow(p, facts, checkouts.operation(w));
  };
  return {
    onSkeleton: (p) => {
      readStates(p);
      pending = p;
      const shown = p.worktrees.filter(inScope);
      for (const w of shown) byPath.set(w.entry.path, w);
      progress.skeleton(
        { name: p.trunk.name, tip: p.trunk.tip },
        shown.map((w) => rowOf(p, w)),
      );
    },
    onStatus: (path, status) => {
      arrived.set(path, status);
      const w = byPath.get(path);
      if (pending !== null && w !== undefined) progress.row(rowOf(pending, w));
    },
  };
}

export function toStatusRow(
  survey: Pick<FleetSurvey, "repo" | "branches">,
  w: WorktreeFacts,
  operation: OperationInProgress | null,
  receipt?: ReceiptView,
  contained: ContainmentEvidence | null = null,
): StatusRow {
  const { config } = survey.repo;
  const id = w.marker?.id ?? basenameOf(w.entry.path);
  return {
    id,
    title: null,
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
    in_progress: operation?.kind ?? null,
    queue: null,
    granted: false,
  };
}

/** A hint per worktree with an operation in progress: what it is and the commands that end it. */
function inProgressHints(
  rows: readonly StatusRow[],
  worktrees: readonly WorktreeFacts[],
  checkouts: CheckoutStates,
): string[] {
  const hints: string[] = [];
  for (const w of worktrees) {
    const op = checkouts.operation(w);
    if (op === null) continue;
    const name = rows.find((r) => r.path === w.entry.path)?.id ?? w.entry.path;
    hints.push(`${name}: ${describeOperation(op, w.entry.path)}`);
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
  survey: Pick<FleetSurvey, "branches">,
  contained = false,
): WorktreeState {
  if (w.isMain) return "main";
  if (w.entry.prunable) return "prunable";
  if (w.readable === false) return "unreadable";
  if (w.entry.locked) return "locked";
  // Its ready marker still names its branch: await and accept find it by id and path.
  if (w.marker !== null && w.entry.detached) return "detached";
  if (w.landed) return "landed";
  // Landed class too: its work is in the trunk, its commits are not (spec section 13).
  if (w.integrated) return "integrated";
  if (contained) return "contained";
  if (isBrokenBerth(w, survey.branches)) return "broken";
  return "active";
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
