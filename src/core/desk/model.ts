import type { KeptRef } from "../fleet/containment.js";
import type { StatusData, StatusRow } from "../fleet/status.js";

/**
 * The desk's data model (spec section 8): the rows `berth status` reads,
 * grouped in decision order — ready to accept, working, contained, needs
 * attention — with the kept refs below. Pure: it only sorts what the survey
 * already knows, so the desk and `status` cannot disagree about a row.
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
}

export interface DeskRefItem {
  kind: "ref";
  /** Stable across refreshes: `ref:<branch>`. */
  key: string;
  ref: KeptRef;
}

export type DeskItem = DeskBerthItem | DeskRefItem;

export interface DeskGroup {
  key: DeskGroupKey;
  title: string;
  items: DeskBerthItem[];
}

export interface DeskModel {
  trunk: StatusData["trunk"];
  /** The main checkout: shown in the header, never a row (no berth action applies to it). */
  main: StatusRow | null;
  /** Always the four groups, in decision order, each sorted by id. */
  groups: DeskGroup[];
  refs: DeskRefItem[];
  /** Every selectable item in display order: the groups' rows, then the kept refs. */
  items: DeskItem[];
}

export function buildDeskModel(data: StatusData, now: Date): DeskModel {
  const groups: DeskGroup[] = DESK_GROUPS.map((g) => ({ ...g, items: [] }));
  let main: StatusRow | null = null;
  for (const row of data.worktrees) {
    if (row.is_main) {
      main = row;
      continue;
    }
    const placed = placeRow(row, data.trunk.name, now);
    groups
      .find((g) => g.key === placed.group)
      ?.items.push({ kind: "berth", key: row.path, group: placed.group, row, notes: placed.notes });
  }
  for (const group of groups) group.items.sort((a, b) => compareRows(a.row, b.row));
  const refs: DeskRefItem[] = data.refs.map((ref) => ({
    kind: "ref",
    key: `ref:${ref.branch}`,
    ref,
  }));
  return {
    trunk: data.trunk,
    main,
    groups,
    refs,
    items: [...groups.flatMap((g) => g.items), ...refs],
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
    row.clean === true &&
    row.ahead !== null &&
    row.ahead > 0 &&
    row.behind === 0 &&
    row.receipt === "honored" &&
    !row.locked
  );
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
      reasons.push("detached, or not on the branch berth made for it");
      break;
    case "detached":
      reasons.push(
        "its HEAD is detached: git switch <its branch> puts it back on its berth branch",
      );
      break;
    case "landed":
      reasons.push("landed: berth worktree prune clears it");
      break;
  }
  if (row.behind !== null && row.behind > 0 && row.state !== "landed") {
    reasons.push(`behind ${trunk ?? "the trunk"} by ${row.behind}: berth update`);
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
  return a.id.localeCompare(b.id) || a.path.localeCompare(b.path);
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
    const where = ref.abandoned
      ? `no live branch holds its commits; resume it with berth start --from ${ref.branch}`
      : `its commits travel inside ${ref.contained_by}; the train's landing clears it`;
    return `${ref.branch} is a kept ref with no checkout (${where})`;
  }
  const { row } = item;
  if (action === "reclaim" && item.group !== "contained") {
    const title = DESK_GROUPS.find((g) => g.key === item.group)?.title ?? item.group;
    return `reclaim is only for contained rows (clean, idle, every commit inside another live branch); ${row.id} is in "${title}"`;
  }
  if ((action === "approve" || action === "withdraw") && !isWaiting(row.queue?.state)) {
    return `${row.id} has no entry waiting in the landing queue${row.queue ? ` (it is ${row.queue.state})` : ""}; a accepts it`;
  }
  if (row.prunable && action !== "drop") {
    return `${row.id}'s folder is gone; berth worktree prune clears its registration`;
  }
  return null;
}

/** A queue entry that approve and withdraw can still act on. */
function isWaiting(state: string | undefined): boolean {
  return state === "awaiting_approval" || state === "queued";
}
