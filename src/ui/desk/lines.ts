import type { DeskDetail } from "../../core/desk/detail.js";
import type { DeskBerthItem, DeskItem, DeskModel, DeskRefItem } from "../../core/desk/model.js";
import type { StatusRow } from "../../core/fleet/status.js";
import { NO_CHECKS_LABEL } from "../../core/landing/gate.js";
import { shellCommand, shortOid, visibleControls } from "../../text.js";
import { ageLabel, lastActionLabel, runningLabel } from "../status-view.js";

/**
 * The desk's text, line by line: pure functions from the model (and the
 * selected item's detail) to strings. The component lays them out; nothing
 * here decides what a row is.
 */

export type LineTone = "plain" | "heading" | "ready" | "contained" | "attention" | "dim";

export interface ListLine {
  text: string;
  tone: LineTone;
  /** One character before the text: OVERLAP_MARK for a berth whose files overlap another's, else " ". */
  mark: string;
  /** Index into `model.items`, or null for a heading. */
  item: number | null;
}

/** Titles are cut to this many characters in the list (the detail pane shows them whole). */
export const LIST_TITLE_WIDTH = 30;

export function listLines(model: DeskModel, now: Date): ListLine[] {
  const berths = model.groups.flatMap((g) => g.items);
  // The title column appears once any berth has a title; the branch column
  // only when some branch is not named after its berth (the id says it all).
  const columns = {
    title: berths.some((item) => item.row.title !== null),
    branch: berths.some(
      (item) => item.row.branch === null || !item.row.branch.endsWith(item.row.id),
    ),
  };
  const cellsByItem = berths.map((item) => berthCells(item, now, columns));
  const widths = columnWidths(cellsByItem);
  const lines: ListLine[] = [];
  let index = 0;
  const count = (shown: number, total: number) =>
    model.filter === null ? `(${shown})` : `(${shown} of ${total})`;
  for (const group of model.groups) {
    lines.push({
      text: `${group.title} ${count(group.items.length, group.total)}`,
      tone: "heading",
      mark: " ",
      item: null,
    });
    for (const item of group.items) {
      const cells = cellsByItem[index] ?? [];
      lines.push({
        text: padCells(cells, widths),
        tone: toneOf(item),
        mark: item.overlaps.length > 0 ? OVERLAP_MARK : " ",
        item: index,
      });
      index++;
    }
  }
  lines.push({
    text: `kept refs ${count(model.refs.length, model.refsTotal)}`,
    tone: "heading",
    mark: " ",
    item: null,
  });
  for (const ref of model.refs) {
    const tone = ref.ref.abandoned ? "attention" : ref.ref.state === "parked" ? "plain" : "dim";
    lines.push({ text: refLine(ref), tone, mark: " ", item: index });
    index++;
  }
  return lines;
}

function toneOf(item: DeskBerthItem): LineTone {
  switch (item.group) {
    case "ready":
      return "ready";
    case "contained":
      return "contained";
    case "attention":
      return "attention";
    default:
      return "plain";
  }
}

/** Marks a berth that changes files another unlanded berth changes too (status `data.overlaps`). */
export const OVERLAP_MARK = "~";

function berthCells(
  item: DeskBerthItem,
  now: Date,
  columns: { title: boolean; branch: boolean },
): string[] {
  const { row } = item;
  return [
    row.id,
    ...(columns.title ? [row.title === null ? "-" : cut(row.title, LIST_TITLE_WIDTH)] : []),
    ...(columns.branch ? [row.branch ?? "(detached)"] : []),
    treeLabel(row),
    aheadBehind(row),
    receiptLabel(row),
    activityLabel(row, now),
    row.port === null ? "-" : String(row.port),
    remark(item),
  ];
}

/** The last column: the container of a contained row, why a row needs attention, a verb in flight. */
function remark(item: DeskBerthItem): string {
  const { row } = item;
  const parts: string[] = [];
  if (row.running !== null) parts.push(runningLabel(row.running));
  const entry = queueLabel(row);
  if (entry !== null) parts.push(`queue: ${entry}`);
  if (item.group === "contained" && row.contained !== null) {
    parts.push(`contained in ${row.contained.container} (+${row.contained.container_ahead})`);
  }
  const overlap = overlapRemark(item);
  if (overlap !== null) parts.push(overlap);
  parts.push(...item.notes);
  // Last: a grant asks nothing of anyone, so it never hides why a row needs attention.
  if (row.granted) parts.push(GRANTED);
  return parts.join("; ");
}

const GRANTED = "granted: lands once submitted and green";

/** The row's landing-queue entry: "awaiting_approval #1", "rejected #2 (conflict)"; null without one. */
function queueLabel(row: StatusRow): string | null {
  if (row.queue === null) return null;
  const place = row.queue.position === null ? "" : ` #${row.queue.position}`;
  return `${row.queue.state}${place}${row.queue.reason ? ` (${row.queue.reason})` : ""}`;
}

/** "overlaps b-2 on src/a.ts": the other berths changing the same files as this one. */
export function overlapRemark(item: DeskBerthItem): string | null {
  if (item.overlaps.length === 0) return null;
  const others = [...new Set(item.overlaps.flatMap((o) => o.berths))].filter(
    (id) => id !== item.row.id,
  );
  const files = [...new Set(item.overlaps.flatMap((o) => o.files))];
  const where = files.length === 1 ? (files[0] as string) : `${files.length} files`;
  return `overlaps ${others.join(", ")} on ${where}`;
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function refLine(item: DeskRefItem): string {
  const { ref } = item;
  const ahead = ref.ahead === null ? "" : ` (+${ref.ahead})`;
  const title = ref.title === null ? "" : ` "${cut(ref.title, LIST_TITLE_WIDTH)}"`;
  const resume = shellCommand(["berth", "start", "--from", ref.branch]);
  if (ref.state === "parked") {
    return `${ref.branch}${ahead} at ${shortOid(ref.tip)}${title}: parked; resume with ${resume}`;
  }
  return ref.abandoned
    ? `${ref.branch}${ahead} at ${shortOid(ref.tip)}${title}: abandoned work, no live branch holds it; resume with ${resume}`
    : `${ref.branch}${ahead} at ${shortOid(ref.tip)}${title}, inside ${ref.contained_by} (kept until the train lands)`;
}

export function treeLabel(row: StatusRow): string {
  if (row.clean === null) return "?";
  return row.clean ? "clean" : `dirty (${row.changed_files ?? "?"})`;
}

export function aheadBehind(row: StatusRow): string {
  if (row.ahead === null || row.behind === null) return "?";
  return `+${row.ahead}/-${row.behind}`;
}

/** A receipt with no checks proves only a clean tree; every surface says so (a stale one proves nothing). */
export function receiptLabel(row: StatusRow): string {
  const noChecks = row.receipt_checks === 0 && row.receipt !== "stale";
  return noChecks ? `${row.receipt} (${NO_CHECKS_LABEL})` : row.receipt;
}

function activityLabel(row: StatusRow, now: Date): string {
  if (row.last_activity === null) return "-";
  return ageLabel(now.getTime() - Date.parse(row.last_activity));
}

function columnWidths(rows: readonly string[][]): number[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return widths;
}

function padCells(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    .join("  ")
    .trimEnd();
}

const DETAIL_BRIEF_LINES = 6;

/** The detail pane: title, commits ahead, changed files, receipt, containment and overlap evidence, brief. */
export function detailLines(
  item: DeskItem,
  detail: DeskDetail | null,
  model: DeskModel,
  now: Date,
): string[] {
  const trunk = model.trunk.name ?? "the trunk";
  const lines: string[] = [];
  if (item.kind === "ref") {
    const { ref } = item;
    const resume = shellCommand(["berth", "start", "--from", ref.branch]);
    lines.push(
      `${ref.state === "parked" ? "parked" : "kept ref"} ${ref.branch} at ${shortOid(ref.tip)} (no checkout)`,
    );
    if (ref.title !== null) lines.push(`  title    ${ref.title}`);
    lines.push(
      ref.state === "parked"
        ? `  parked:  its checkout was torn down on purpose; resume with ${resume}`
        : ref.abandoned
          ? `  abandoned: no live branch holds its commits; resume with ${resume}`
          : `  contained: inside ${ref.contained_by} at ${shortOid(ref.container_tip)} (+${ref.container_ahead ?? "?"}); landing the train clears it`,
    );
  } else {
    const { row } = item;
    lines.push(`${row.id}  ${row.path}`);
    if (row.title !== null) lines.push(`  title    ${row.title}`);
    lines.push(
      `  branch   ${row.branch ?? "(detached)"} at ${shortOid(row.head)}; ${aheadBehind(row)} against ${trunk}; ${treeLabel(row)}; state ${row.state}`,
    );
    const last = lastActionLabel(row, now);
    const action = last === null ? "" : ` (last: ${last})`;
    lines.push(
      `  activity ${row.running ? runningLabel(row.running) : activityLabel(row, now)}${action}; port ${row.port ?? "-"}`,
    );
    lines.push(`  receipt  ${receiptDetail(row, detail)}`);
    const queue = [queueLabel(row), row.granted ? GRANTED : null].filter((p) => p !== null);
    if (queue.length > 0) lines.push(`  queue    ${queue.join("; ")}`);
    lines.push(`  contain  ${containmentDetail(row)}`);
    for (const overlap of item.overlaps) {
      const others = overlap.berths.filter((id) => id !== row.id).join(", ");
      const files = overlap.files.slice(0, 5).join(", ");
      const more = overlap.files.length > 5 ? `, and ${overlap.files.length - 5} more` : "";
      lines.push(`  overlap  with ${others}: ${files}${more}`);
    }
    for (const note of item.notes) lines.push(`  note     ${note}`);
  }
  if (detail !== null && detail.brief !== null) {
    const brief = visibleControls(detail.brief.trimEnd()).split("\n");
    lines.push("brief:");
    for (const line of brief.slice(0, DETAIL_BRIEF_LINES)) lines.push(`  ${line}`);
    if (brief.length > DETAIL_BRIEF_LINES) {
      lines.push(
        `  ... and ${brief.length - DETAIL_BRIEF_LINES} more line(s) (berth describe shows it whole)`,
      );
    }
  }
  if (detail === null) {
    lines.push("  (reading commits and files ...)");
    return lines;
  }
  const commitCount = item.kind === "ref" ? item.ref.ahead : item.row.ahead;
  if (detail.commits === null) {
    lines.push(`commits ahead of ${trunk}: unknown`);
  } else {
    lines.push(`commits ahead of ${trunk} (${commitCount ?? detail.commits.length}):`);
    for (const commit of detail.commits) {
      lines.push(`  ${shortOid(commit.oid)} ${visibleControls(commit.subject)}`);
    }
    const more = (commitCount ?? 0) - detail.commits.length;
    if (more > 0) lines.push(`  ... and ${more} more`);
  }
  if (item.kind === "berth") {
    if (detail.files === null) {
      lines.push("changed files: not read");
    } else {
      lines.push(`changed files (${detail.fileCount ?? detail.files.length}):`);
      for (const file of detail.files) lines.push(`  ${visibleControls(file, false)}`);
      const more = (detail.fileCount ?? 0) - detail.files.length;
      if (more > 0) lines.push(`  ... and ${more} more`);
    }
  }
  return lines;
}

function receiptDetail(row: StatusRow, detail: DeskDetail | null): string {
  const receipt = detail?.receipt ?? null;
  if (receipt === null) return receiptLabel(row);
  const checks =
    receipt.checks.length === 0
      ? NO_CHECKS_LABEL
      : receipt.checks.map((c) => `${c.name} ${c.ok ? "ok" : "failed"}`).join(", ");
  return `${receiptLabel(row)}: ${shortOid(receipt.commit)} (tree ${shortOid(receipt.tree)}) at ${receipt.created_at}; ${checks}`;
}

function containmentDetail(row: StatusRow): string {
  const c = row.contained;
  if (c === null) return "not contained";
  return `tip ${shortOid(c.tip)} is inside ${c.container} at ${shortOid(c.container_tip)}, ${c.container_ahead} commit(s) ahead${c.container_has_checkout ? ", which has a checkout" : " (no checkout)"}`;
}
