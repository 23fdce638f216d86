import type { StatusData, StatusProgress, StatusRow } from "../core/fleet/status.js";
import { renderStatusSkeleton } from "./status-view.js";
import type { Colors } from "./style.js";
import { visibleLength } from "./table.js";

/**
 * `berth status` on a terminal: the table's skeleton at once, rows filled in
 * as their statuses arrive, redrawn in place; then `finish` hands back what
 * erases it, so the final table is printed where the skeleton was. Only on a
 * terminal that can move the cursor; a table too big for it is shown as its
 * last line alone (how many statuses are in). The final table always prints.
 */
export interface TerminalSize {
  columns: number;
  rows: number;
}

export interface LiveStatus extends StatusProgress {
  /** Stops drawing; what to print before the final table to erase the frame (may be ""). */
  finish(): string;
}

/** Frames are drawn at most this often: a redraw per status would cost more than the statuses. */
const FRAME_MS = 40;

export function liveStatusTable(
  out: { write(text: string): unknown },
  size: TerminalSize,
  c: Colors,
): LiveStatus {
  let trunk: StatusData["trunk"] = { name: null, tip: null };
  let rows: StatusRow[] = [];
  const arrived = new Set<string>();
  const indexOf = new Map<string, number>();
  let drawn = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastFrame = 0;

  const erase = () => (drawn > 0 ? `\u001b[${drawn}A\u001b[J` : "");
  const fits = (lines: readonly string[]) =>
    lines.length < size.rows && lines.every((line) => visibleLength(line) < size.columns);
  const draw = () => {
    timer = null;
    if (stopped) return;
    let lines = renderStatusSkeleton(trunk, rows, arrived, c).split("\n").slice(0, -1);
    // A table taller or wider than the terminal cannot be redrawn in place:
    // its last line (how many statuses are in) is drawn alone instead.
    if (!fits(lines)) lines = lines.slice(-1);
    if (!fits(lines)) {
      out.write(erase());
      drawn = 0;
      stopped = true;
      return;
    }
    out.write(`${erase()}${lines.join("\n")}\n`);
    drawn = lines.length;
    lastFrame = Date.now();
  };
  const schedule = () => {
    if (stopped || timer !== null) return;
    const wait = FRAME_MS - (Date.now() - lastFrame);
    if (wait <= 0) draw();
    else timer = setTimeout(draw, wait);
  };

  return {
    skeleton(t, r) {
      trunk = t;
      rows = r;
      r.forEach((row, i) => {
        indexOf.set(row.path, i);
        if (row.readable !== null) arrived.add(row.path);
      });
      draw();
    },
    row(row) {
      const i = indexOf.get(row.path);
      if (i === undefined) return;
      rows[i] = row;
      arrived.add(row.path);
      schedule();
    },
    finish() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const text = erase();
      drawn = 0;
      return text;
    },
  };
}

/** The terminal's size when live drawing makes sense there, else null. */
export function liveTerminal(
  stream: unknown,
  isTTY: boolean,
  env: NodeJS.ProcessEnv,
): TerminalSize | null {
  if (!isTTY || env.TERM === "dumb") return null;
  const { columns, rows } = stream as { columns?: unknown; rows?: unknown };
  if (typeof columns !== "number" || typeof rows !== "number" || columns < 20 || rows < 3) {
    return null;
  }
  return { columns, rows };
}
