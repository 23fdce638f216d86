import type { DeskDetail } from "../../core/desk/detail.js";
import type { DeskBerthItem, DeskItem, DeskModel, DeskRefItem } from "../../core/desk/model.js";
import type { StatusRow } from "../../core/fleet/status.js";
import { NO_CHECKS_LABEL } from "../../core/landing/gate.js";
import { shortOid } from "../../text.js";
import { ageLabel, runningLabel } from "../status-view.js";

/**
 * The desk's text, line by line: pure functions from the model (and the
 * selected item's detail) to strings. The component lays them out; nothing
 * here decides what a row is.
 */

export type LineTone = "plain" | "heading" | "ready" | "contained" | "attention" | "dim";

export interface ListLine {
  text: string;
  tone: LineTone;
  /** Index into `model.items`, or null for a heading. */
  item: number | null;
}

export function listLines(model: DeskModel, now: Date): ListLine[] {
  const cellsByItem = model.groups.flatMap((g) => g.items).map((item) => berthCells(item, now));
  const widths = columnWidths(cellsByItem);
  const lines: ListLine[] = [];
  let index = 0;
  for (const group of model.groups) {
    lines.push({ text: `${group.title} (${group.items.length})`, tone: "heading", item: null });
    for (const item of group.items) {
      const cells = cellsByItem[index] ?? [];
      lines.push({ text: padCells(cells, widths), tone: toneOf(item), item: index });
      index++;
    }
  }
  lines.push({ text: `kept refs (${model.refs.length})`, tone: "heading", item: null });
  for (const ref of model.refs) {
    lines.push({ text: refLine(ref), tone: ref.ref.abandoned ? "attention" : "dim", item: index });
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

function berthCells(item: DeskBerthItem, now: Date): string[] {
  const { row } = item;
  return [
    row.id,
    row.branch ?? "(detached)",
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
  if (row.queue !== null) {
    const place = row.queue.position === null ? "" : ` #${row.queue.position}`;
    parts.push(
      `queue: ${row.queue.state}${place}${row.queue.reason ? ` (${row.queue.reason})` : ""}`,
    );
  }
  if (item.group === "contained" && row.contained !== null) {
    parts.push(`contained in ${row.contained.container} (+${row.contained.container_ahead})`);
  }
  parts.push(...item.notes);
  return parts.join("; ");
}

function refLine(item: DeskRefItem): string {
  const { ref } = item;
  const ahead = ref.ahead === null ? "" : ` (+${ref.ahead})`;
  return ref.abandoned
    ? `${ref.branch}${ahead} at ${shortOid(ref.tip)}: abandoned work, no live branch holds it; resume with berth start --from ${ref.branch}`
    : `${ref.branch}${ahead} at ${shortOid(ref.tip)}, inside ${ref.contained_by} (kept until the train lands)`;
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

/** The detail pane: commits ahead, changed files, receipt and containment evidence. */
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
    lines.push(`kept ref ${ref.branch} at ${shortOid(ref.tip)} (no checkout)`);
    lines.push(
      ref.abandoned
        ? `  abandoned: no live branch holds its commits; resume with berth start --from ${ref.branch}`
        : `  contained: inside ${ref.contained_by} at ${shortOid(ref.container_tip)} (+${ref.container_ahead ?? "?"}); landing the train clears it`,
    );
  } else {
    const { row } = item;
    lines.push(`${row.id}  ${row.path}`);
    lines.push(
      `  branch   ${row.branch ?? "(detached)"} at ${shortOid(row.head)}; ${aheadBehind(row)} against ${trunk}; ${treeLabel(row)}; state ${row.state}`,
    );
    const action = row.last_action
      ? ` (last: ${row.last_action.verb} ${row.last_action.outcome})`
      : "";
    lines.push(
      `  activity ${row.running ? runningLabel(row.running) : activityLabel(row, now)}${action}; port ${row.port ?? "-"}`,
    );
    lines.push(`  receipt  ${receiptDetail(row, detail)}`);
    lines.push(`  contain  ${containmentDetail(row)}`);
    for (const note of item.notes) lines.push(`  note     ${note}`);
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
      lines.push(`  ${shortOid(commit.oid)} ${commit.subject}`);
    }
    const more = (commitCount ?? 0) - detail.commits.length;
    if (more > 0) lines.push(`  ... and ${more} more`);
  }
  if (item.kind === "berth") {
    if (detail.files === null) {
      lines.push("changed files: not read");
    } else {
      lines.push(`changed files (${detail.fileCount ?? detail.files.length}):`);
      for (const file of detail.files) lines.push(`  ${file}`);
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
