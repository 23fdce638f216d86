import type { DeskDetail } from "../../core/desk/detail.js";
import type { DeskItem } from "../../core/desk/model.js";
import { shortOid, visibleControls } from "../../text.js";
import { helpLines, legendLines } from "./keys.js";
import { detailLines } from "./lines.js";
import type { ConfirmableAction, DeskSnapshot } from "./types.js";

/**
 * The desk's screen as text, without ink: the header, the pane's lines, the
 * legend, and how the terminal's height is shared between the list and the
 * pane. Pure, so the layout is tested without a terminal.
 */

export type Pane =
  | { kind: "none" }
  | { kind: "message"; text: string }
  | { kind: "help" }
  | { kind: "planning"; text: string }
  | { kind: "confirm"; proposal: ConfirmableAction }
  | { kind: "running"; command: string; lines: string[]; notice: string | null }
  | { kind: "result"; command: string; ok: boolean; text: string };

/** Text without control characters (a carriage return would garble the screen). */
export function stripControls(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code >= 0x20 && code !== 0x7f) out += char;
  }
  return out;
}

/** The rule under the list; with a filter it says how many rows it shows. */
export function separatorLine(model: DeskSnapshot["model"], columns: number): string {
  const width = Math.max(1, columns);
  if (model.filter === null) return "─".repeat(width);
  const total = model.groups.reduce((n, g) => n + g.total, 0) + model.refsTotal;
  const label = `── filter "${model.filter}": ${model.items.length} of ${total} rows (Esc clears it) `;
  return `${label}${"─".repeat(Math.max(0, width - label.length))}`;
}

export function paneLines(
  pane: Pane,
  detailOpen: boolean,
  item: DeskItem | undefined,
  detail: { key: string; detail: DeskDetail } | null,
  detailKey: string | null,
  snapshot: DeskSnapshot,
): string[] {
  switch (pane.kind) {
    case "message":
      return [pane.text];
    case "help":
      return helpLines();
    case "planning":
      return [pane.text];
    case "confirm": {
      const p = pane.proposal;
      return [
        `$ ${p.command}`,
        ...(p.note === null ? [] : [`  (${p.note})`]),
        ...p.planText.trimEnd().split("\n"),
        `${p.question} [y/N]`,
      ];
    }
    case "running":
      return [
        `$ ${pane.command}`,
        "running ... (Ctrl-C interrupts it)",
        ...pane.lines,
        ...(pane.notice === null ? [] : [pane.notice]),
      ];
    case "result":
      return [
        `$ ${pane.command}`,
        ...pane.text.trimEnd().split("\n"),
        pane.ok ? "(done)" : "(not done; see above)",
      ];
    case "none":
      if (!detailOpen || item === undefined) return fleetHintLines(snapshot.hints);
      return detailLines(
        item,
        detail !== null && detail.key === detailKey ? detail.detail : null,
        snapshot.model,
        snapshot.readAt,
      );
  }
}

/** At most this many of the survey's hints take room from the rows; the rest are counted. */
const HINTS_SHOWN = 2;

/** The fleet's hints under the rows while nothing else is shown there (a remote trunk ahead, a long walk). */
export function fleetHintLines(hints: readonly string[]): string[] {
  const shown = hints.slice(0, HINTS_SHOWN).map((hint) => `hint: ${visibleControls(hint)}`);
  const more = hints.length - shown.length;
  return more > 0 ? [...shown, `... ${more} more hint(s): berth status lists them`] : shown;
}

/** The list gets what it needs, but never fewer than a few rows while a pane is open. */
export function splitHeight(
  body: number,
  listNeed: number,
  paneNeed: number,
): { listShown: number; paneShown: number } {
  if (listNeed + paneNeed <= body) return { listShown: listNeed, paneShown: paneNeed };
  const listShown = Math.min(listNeed, Math.max(Math.min(listNeed, 6), body - paneNeed));
  return { listShown, paneShown: Math.max(0, body - listShown) };
}

export function windowStart(selected: number, total: number, shown: number): number {
  if (total <= shown || selected < 0) return 0;
  return Math.min(Math.max(0, selected - Math.floor(shown / 2)), total - shown);
}

/** Too long for its space: keep the top and the last line (the question), say how much is hidden. */
export function fitPane(lines: string[], room: number): string[] {
  if (lines.length <= room) return lines;
  if (room <= 2) return lines.slice(-room);
  const hidden = lines.length - (room - 1);
  return [
    ...lines.slice(0, room - 2),
    `... ${hidden} more line(s) (a taller terminal shows them)`,
    lines[lines.length - 1] ?? "",
  ];
}

export function headerLine(snapshot: DeskSnapshot, readError: string | null): string {
  const { model } = snapshot;
  const trunk = model.trunk.name
    ? `trunk ${model.trunk.name}${model.trunk.tip ? ` at ${shortOid(model.trunk.tip)}` : " (missing)"}`
    : "trunk unknown";
  const main = model.main
    ? `main checkout ${model.main.clean === null ? "?" : model.main.clean ? "clean" : `dirty (${model.main.changed_files})`}`
    : "";
  const read = readError
    ? `could not read the fleet: ${readError} (retrying)`
    : `read ${snapshot.readAt.toTimeString().slice(0, 8)}`;
  return `berth desk  ${snapshot.mainPath}  ${trunk}  ${main}  ${read}`;
}

export function legendFor(
  pane: Pane,
  filter: { text: string; editing: boolean },
  columns: number,
): string[] {
  switch (pane.kind) {
    case "confirm":
      return ["y runs it   Enter (or any other key) answers No"];
    case "running":
      return ["Ctrl-C interrupts the running action"];
    default:
      if (filter.editing) {
        return [`filter: ${filter.text}_   (id, branch or title)   Enter keeps it   Esc clears it`];
      }
      return legendLines(columns);
  }
}

/** Changes whenever the selected row does, so the detail is read again. */
export function fingerprint(item: DeskItem): string {
  if (item.kind === "ref") return `${item.key} ${item.ref.tip}`;
  const { row } = item;
  return `${item.key} ${row.head} ${row.changed_files} ${row.receipt} ${row.behind}`;
}

export function terminalSize(stdout: NodeJS.WriteStream): { columns: number; rows: number } {
  return { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}
