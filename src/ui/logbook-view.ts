import { basename } from "node:path";
import type { LogbookEvent } from "../io/logbook.js";
import { visibleControls } from "../text.js";
import type { Colors } from "./style.js";
import { renderTable, visibleLength } from "./table.js";

/** `berth logbook` for a person: one row per event, newest last. */

const HEADER = ["time", "verb", "branch", "outcome", "duration"];
/** Column widths for --follow, where rows arrive one by one. */
const FOLLOW_WIDTHS = [20, 17, 28, 24];

export function renderLogbookTable(events: readonly LogbookEvent[], c: Colors): string {
  if (events.length === 0) return "";
  return `${renderTable(
    HEADER.map((h) => c.dim(h)),
    events.map((e) => logbookCells(e, c)),
  )}\n`;
}

export function renderLogbookFollowHeader(c: Colors): string {
  return `${c.dim(padRow(HEADER))}\n`;
}

/** Rows with fixed widths, so streamed lines line up with the header. */
export function renderLogbookFollowRows(events: readonly LogbookEvent[], c: Colors): string {
  return events.map((e) => `${padRow(logbookCells(e, c))}\n`).join("");
}

/** JSON Lines: one event per line (the one exception to "one JSON document"). */
export function renderLogbookJsonLines(events: readonly LogbookEvent[]): string {
  return events.map((e) => `${JSON.stringify(e)}\n`).join("");
}

export function logbookCells(event: LogbookEvent, c: Colors): string[] {
  const time = event.at.replace(/\.\d+Z$/, "Z");
  // A target is what was typed (a name, a path), and any line may be hand-written: no raw controls.
  const shown = (text: string) => visibleControls(text, false);
  const verb = shown(event.verb);
  const subject =
    event.branch !== null
      ? shown(event.branch)
      : event.path
        ? c.dim(shown(basename(event.path)))
        : "-";
  // The berth the verb was about, when it is not the checkout it ran in (await, a refused accept).
  const branch =
    event.target !== null && event.target !== event.branch
      ? `${subject} ${c.dim("->")} ${shown(event.target)}`
      : subject;
  if (event.event === "begin") return [time, verb, branch, c.dim("begin"), ""];
  const code = event.error_code ? ` (${event.error_code})` : "";
  const paint = event.outcome === "ok" ? c.green : event.outcome === "refused" ? c.yellow : c.red;
  return [time, verb, branch, paint(`${event.outcome}${code}`), formatDuration(event.duration_ms)];
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(Math.floor(seconds % 60)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

function padRow(cells: readonly string[]): string {
  return cells
    .map((cell, i) => {
      const width = FOLLOW_WIDTHS[i];
      if (width === undefined) return cell;
      return cell + " ".repeat(Math.max(0, width - visibleLength(cell)));
    })
    .join("  ")
    .trimEnd();
}
