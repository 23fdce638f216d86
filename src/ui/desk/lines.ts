import type { Key } from "ink";
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
  if (row.queue !== null) {
    const place = row.queue.position === null ? "" : ` #${row.queue.position}`;
    parts.push(
      `queue: ${row.queue.state}${place}${row.queue.reason ? ` (${row.queue.reason})` : ""}`,
    );
  }
  if (row.granted) parts.push("queue: granted (lands once submitted and green)");
  if (item.group === "contained" && row.contained !== null) {
    parts.push(`contained in ${row.contained.container} (+${row.contained.container_ahead})`);
  }
  const overlap = overlapRemark(item);
  if (overlap !== null) parts.push(overlap);
  parts.push(...item.notes);
  return parts.join("; ");
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

/** One key of the legend: what to press and what it does, in a word. */
export interface LegendKey {
  key: string;
  label: string;
  /** The sentence the help pane (`?`) shows. */
  help: string;
}

export const LEGEND_KEYS: readonly LegendKey[] = [
  { key: "j/k", label: "move", help: "move the selection (also ↑/↓)" },
  { key: "enter", label: "detail", help: "show or hide the selected row's detail (also d)" },
  {
    key: "/",
    label: "filter",
    help: "filter rows by id, branch or title; Enter keeps it, Esc clears it",
  },
  { key: "g", label: "gate", help: "gate: run the declared checks in the berth" },
  { key: "u", label: "update", help: "update: merge the trunk into the berth" },
  {
    key: "a",
    label: "accept",
    help: "accept: land the berth on the trunk (through the landing queue)",
  },
  {
    key: "y",
    label: "approve",
    help: "approve: let its waiting entry land, or grant it: land when green",
  },
  {
    key: "w",
    label: "withdraw",
    help: "withdraw: take its entry out of the queue, or take back its grant",
  },
  { key: "r", label: "reclaim", help: "reclaim a contained berth (its branch is kept)" },
  { key: "p", label: "park", help: "park: tear the berth down, keep its branch, title and brief" },
  { key: "x", label: "drop", help: "drop: discard the berth" },
  { key: "s", label: "shell", help: "open a shell in the berth's folder" },
  { key: "?", label: "help", help: "this help" },
  { key: "q", label: "quit", help: "quit the desk" },
];

const LEGEND_GAP = "   ";
const LEGEND_MAX_LINES = 2;

/**
 * The key legend in at most two lines of `width` columns: every key when
 * they fit, else as many as fit on one line followed by `? help` and `q quit`
 * (the help pane lists them all).
 */
export function legendLines(width: number): string[] {
  const entries = LEGEND_KEYS.map((k) => `${k.key} ${k.label}`);
  const packed = pack(entries, width);
  if (packed.length <= LEGEND_MAX_LINES) return packed;
  const tail = LEGEND_KEYS.filter((k) => k.key === "?" || k.key === "q").map(
    (k) => `${k.key} ${k.label}`,
  );
  const head: string[] = [];
  for (const entry of entries) {
    if (tail.includes(entry)) continue;
    if ([...head, entry, ...tail].join(LEGEND_GAP).length > width) break;
    head.push(entry);
  }
  return [[...head, ...tail].join(LEGEND_GAP)];
}

function pack(entries: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const entry of entries) {
    const next = line === "" ? entry : `${line}${LEGEND_GAP}${entry}`;
    if (next.length <= width || line === "") line = next;
    else {
      lines.push(line);
      line = entry;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** The help pane (`?`): every key and what it does. */
export function helpLines(): string[] {
  const width = Math.max(...LEGEND_KEYS.map((k) => k.key.length));
  return [
    "keys:",
    ...LEGEND_KEYS.map((k) => `  ${k.key.padEnd(width)}  ${k.help}`),
    `${OVERLAP_MARK} before a row: the berth changes files another unlanded berth changes too (its detail says which)`,
    "every action shows its exact command and plan, and runs only after y",
  ];
}

/**
 * The keys in one chunk of input. Keys typed fast, held or pasted reach the
 * desk as one chunk ("jjj", "/log\r"); each is handled on its own. A chunk
 * with an escape sequence (an arrow key) is one key, as ink parsed it.
 */
export function splitKeys(input: string, key: Key): [string, Key][] {
  if (input.length <= 1 || input.includes("\u001b") || key.ctrl || key.meta) return [[input, key]];
  const plain: Key = {
    ...key,
    return: false,
    backspace: false,
    delete: false,
    tab: false,
    shift: false,
    escape: false,
  };
  return [...input].map((char): [string, Key] => {
    if (char === "\r" || char === "\n") return ["", { ...plain, return: true }];
    if (char === "\u007f" || char === "\b") return ["", { ...plain, backspace: true }];
    if (char === "\u0003") return ["c", { ...plain, ctrl: true }];
    if (char === "\t") return ["", { ...plain, tab: true }];
    return [char, { ...plain, shift: /[A-Z]/.test(char) }];
  });
}
