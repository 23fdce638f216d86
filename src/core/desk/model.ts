import { naturalCompare, shellCommand } from "../../text.js";
import { brokenReason } from "../fleet/mend-hints.js";
import type { Overlap } from "../fleet/overlaps.js";
import type { StatusData, StatusRef, StatusRow } from "../fleet/status.js";
import { grantRefusal } from "../landing/grant-rule.js";

/**
 * The desk's data model (spec section 8): the rows `berth status` reads,
 * grouped in decision order — ready to accept, working, contained, needs
 * attention — with the kept and parked refs below, each list in natural
 * order (`bulk-2` before `bulk-10`). Pure: it only sorts what the survey
 * already knows, so the desk and `status` cannot disagree about a row.
 * The advice it gives (a row's notes) names only a verb that would run:
 * a dirty berth behind the trunk is told that update needs its tracked changes committed first.
 */

export type DeskGroupKey = "ready" | "working" | "contained" | "attention";

export const DESK_GROUPS: readonly { key: DeskGroupKey; title: string }[] = [
  { key: "ready", title: "ready to accept" },
  { key: "working", title: "working" },
  { key: "contained", title: "contained" },
  { key: "attention", title: "needs attention" },
];

/** Uncommitted work untouched this long needs a person's attention ("dirty and idle for days"). */
export const DIRTY_IDLE_DAYS = 2;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface DeskBerthItem {
  kind: "berth";
  /** Stable across refreshes: the worktree path. */
  key: string;
  group: DeskGroupKey;
  row: StatusRow;
  /** Why the row needs attention (or, in the other groups, what holds it back). */
  notes: string[];
  /** The overlap groups (status `data.overlaps`) this berth is in. */
  overlaps: Overlap[];
}

export interface DeskRefItem {
  kind: "ref";
  /** Stable across refreshes: `ref:<branch>`. */
  key: string;
  ref: StatusRef;
}

export type DeskItem = DeskBerthItem | DeskRefItem;

export interface DeskGroup {
  key: DeskGroupKey;
  title: string;
  items: DeskBerthItem[];
  /** Rows in the group before a filter; equals `items.length` unfiltered. */
  total: number;
}

export interface DeskModel {
  trunk: StatusData["trunk"];
  /** The main checkout: shown in the header, never a row (no berth action applies to it). */
  main: StatusRow | null;
  /** Always the four groups, in decision order, each in natural order of id. */
  groups: DeskGroup[];
  refs: DeskRefItem[];
  /** Refs before a filter. */
  refsTotal: number;
  /** Every selectable item in display order: the groups' rows, then the kept refs. */
  items: DeskItem[];
  /** The filter this model shows (filterDeskModel), or null. */
  filter: string | null;
}

export function buildDeskModel(data: StatusData, now: Date): DeskModel {
  const groups: DeskGroup[] = DESK_GROUPS.map((g) => ({ ...g, items: [], total: 0 }));
  const overlaps = data.overlaps;
  let main: StatusRow | null = null;
  for (const row of data.worktrees) {
    if (row.is_main) {
      main = row;
      continue;
    }
    const placed = placeRow(row, data.trunk.name, now);
    groups
      .find((g) => g.key === placed.group)
      ?.items.push({
        kind: "berth",
        key: row.path,
        group: placed.group,
        row,
        notes: placed.notes,
        overlaps: overlaps.filter((o) => o.berths.includes(row.id)),
      });
  }
  for (const group of groups) {
    group.items.sort((a, b) => compareRows(a.row, b.row));
    group.total = group.items.length;
  }
  const refs: DeskRefItem[] = [...data.refs]
    .sort((a, b) => naturalCompare(a.branch, b.branch))
    .map((ref) => ({ kind: "ref", key: `ref:${ref.branch}`, ref }));
  return {
    trunk: data.trunk,
    main,
    groups,
    refs,
    refsTotal: refs.length,
    items: [...groups.flatMap((g) => g.items), ...refs],
    filter: null,
  };
}

/**
 * The model narrowed to the rows whose id, branch or title contains `query`
 * (any case); the groups and their totals stay, so a heading still says how
 * many rows the filter hides. An empty query is no filter.
 */
export function filterDeskModel(model: DeskModel, query: string): DeskModel {
  const wanted = query.trim().toLowerCase();
  if (wanted === "") return model;
  const matches = (...texts: (string | null)[]) =>
    texts.some((text) => text?.toLowerCase().includes(wanted) === true);
  const groups = model.groups.map((group) => ({
    ...group,
    items: group.items.filter((item) => matches(item.row.id, item.row.branch, item.row.title)),
  }));
  const refs = model.refs.filter((item) => matches(item.ref.branch, item.ref.title));
  return {
    ...model,
    groups,
    refs,
    items: [...groups.flatMap((g) => g.items), ...refs],
    filter: query.trim(),
  };
}

/**
 * One row's group. Contained first (the containment module decided it; the
 * row is marked with its container), then anything needing attention, then
 * ready (clean, ahead, not behind, honored receipt), else working.
 */
export function placeRow(
  row: StatusRow,
  trunk: string | null,
  now: Date,
): { group: DeskGroupKey; notes: string[] } {
  if (row.state === "contained") return { group: "contained", notes: [] };
  const attention = attentionReasons(row, trunk, now);
  if (attention.length > 0) return { group: "attention", notes: attention };
  if (isReady(row)) return { group: "ready", notes: [] };
  return { group: "working", notes: row.locked ? ["locked: accept and drop refuse it"] : [] };
}

/** Ready to accept: clean, ahead of the trunk, not behind it, an honored receipt, not locked. */
export function isReady(row: StatusRow): boolean {
  return (
    !isLandedClass(row) &&
    row.clean === true &&
    row.ahead !== null &&
    row.ahead > 0 &&
    row.behind === 0 &&
    row.receipt === "honored" &&
    !row.locked
  );
}

/** Landed or integrated: its work is in the trunk; nothing is left to update or accept. */
function isLandedClass(row: StatusRow): boolean {
  return row.state === "landed" || row.state === "integrated";
}

/** Each reason a row needs a person: empty when none. */
export function attentionReasons(row: StatusRow, trunk: string | null, now: Date): string[] {
  const reasons: string[] = [];
  switch (row.state) {
    case "prunable":
      reasons.push("its folder is gone (stale metadata): berth worktree prune clears it");
      break;
    case "unreadable":
      reasons.push("git cannot read its checkout");
      break;
    case "broken":
      reasons.push(brokenReason(row));
      break;
    case "detached":
      reasons.push(
        "its HEAD is detached: git switch <its branch> puts it back on its berth branch",
      );
      break;
    case "landed":
      // prune removes only a clean landed berth: a dirty one must be committed or stashed first.
      reasons.push(
        row.clean === true
          ? "landed: berth worktree prune clears it"
          : `landed, with ${row.changed_files ?? "?"} uncommitted file(s): commit or stash first, then berth worktree prune clears it`,
      );
      break;
    case "integrated":
      // Never `berth update`: that would put its original commits on the trunk a second time.
      reasons.push(
        "integrated (squash or rebase merged): berth worktree prune clears it, keeping a recovery ref",
      );
      break;
  }
  if (row.behind !== null && row.behind > 0 && !isLandedClass(row)) {
    // update refuses tracked changes, not untracked files; the row counts both, so it says which.
    reasons.push(
      row.clean === true
        ? `behind ${trunk ?? "the trunk"} by ${row.behind}: berth update`
        : `behind ${trunk ?? "the trunk"} by ${row.behind}: berth update (it needs tracked changes committed or stashed first; untracked files may stay)`,
    );
  }
  const idleDays = dirtyIdleDays(row, now);
  if (idleDays !== null) {
    reasons.push(`${row.changed_files ?? "?"} uncommitted file(s), untouched for ${idleDays} days`);
  }
  return reasons;
}

/** Whole days a dirty row has been idle, when that is at least DIRTY_IDLE_DAYS; else null. */
function dirtyIdleDays(row: StatusRow, now: Date): number | null {
  if (row.clean !== false || row.running !== null || row.last_activity === null) return null;
  const days = Math.floor((now.getTime() - Date.parse(row.last_activity)) / DAY_MS);
  return Number.isFinite(days) && days >= DIRTY_IDLE_DAYS ? days : null;
}

function compareRows(a: StatusRow, b: StatusRow): number {
  return naturalCompare(a.id, b.id) || naturalCompare(a.path, b.path);
}

/**
 * The selection after a refresh: the same berth (by path) or kept ref (by
 * branch) when it is still there, else the same position, clamped. -1 when
 * there is nothing to select.
 */
export function reselect(model: DeskModel, key: string | null, index: number): number {
  if (model.items.length === 0) return -1;
  if (key !== null) {
    const found = model.items.findIndex((item) => item.key === key);
    if (found !== -1) return found;
  }
  return Math.min(Math.max(index, 0), model.items.length - 1);
}

export type DeskAction =
  | "gate"
  | "update"
  | "accept"
  | "approve"
  | "withdraw"
  | "reclaim"
  | "park"
  | "drop"
  | "shell";

/**
 * Why an action is not offered on an item, or null when it is. Only the
 * desk's own rules live here (reclaim is for contained rows, kept refs have
 * no checkout); everything else is the verb's to refuse, exactly as the CLI would.
 */
export function actionUnavailable(item: DeskItem | undefined, action: DeskAction): string | null {
  if (item === undefined) return "nothing is selected";
  if (item.kind === "ref") {
    const { ref } = item;
    const resume = shellCommand(["berth", "start", "--from", ref.branch]);
    if (ref.state === "parked")
      return `${ref.branch} is parked, with no checkout; resume it with ${resume}`;
    const where = ref.abandoned
      ? `no live branch holds its commits; resume it with ${resume}`
      : `its commits travel inside ${ref.contained_by}; the train's landing clears it`;
    return `${ref.branch} is a kept ref with no checkout (${where})`;
  }
  const { row } = item;
  if (action === "reclaim" && item.group !== "contained") {
    const title = DESK_GROUPS.find((g) => g.key === item.group)?.title ?? item.group;
    return `reclaim is only for contained rows (clean, idle, every commit inside another live branch); ${row.id} is in "${title}"`;
  }
  if (row.state === "integrated" && (action === "update" || action === "accept")) {
    return `${row.id}'s work is already in the trunk by a squash or rebase merge; ${action} would put its commits there a second time (berth worktree prune clears it)`;
  }
  if (action === "approve" || action === "withdraw") {
    const why = queueActionUnavailable(row, action);
    if (why !== null) return why;
  }
  if (row.prunable && action !== "drop") {
    return `${row.id}'s folder is gone; berth worktree prune clears its registration`;
  }
  return null;
}

/** A queue entry that approve and withdraw can still act on. */
export function isWaiting(state: string | undefined): boolean {
  return state === "awaiting_approval" || state === "queued";
}

/**
 * approve acts on a waiting entry, or gives a berth not yet submitted a
 * standing grant ("land when green", decisions 0078 and 0081, by the rule
 * `berth queue approve` keeps too); withdraw takes back either.
 */
function queueActionUnavailable(row: StatusRow, action: "approve" | "withdraw"): string | null {
  const state = row.queue?.state;
  if (isWaiting(state)) return null;
  if (state === "integrating" || state === "gating") {
    return `${row.id}'s entry is being landed now (${state}); ${action} can no longer act on it`;
  }
  if (action === "withdraw") {
    return row.granted
      ? null
      : `${row.id} has no entry waiting in the landing queue${state ? ` (it is ${state})` : ""} and no standing grant`;
  }
  if (row.granted) {
    return `${row.id} may already land once it is submitted and green; w takes that grant back`;
  }
  return grantRefusal(row.id, row.state, null);
}
