import type { StatusData, StatusRow } from "../core/fleet/status.js";
import { INTERRUPTED_PREFIX } from "../core/logbook/worktree-digest.js";
import { shellCommand, shortOid } from "../text.js";
import type { Colors } from "./style.js";
import { renderTable } from "./table.js";

/** Titles are cut to this many characters in the table (`berth describe` shows them whole). */
const TITLE_WIDTH = 40;

export function renderStatus(data: StatusData, c: Colors, now: Date = new Date()): string {
  if (data.worktrees.length === 0) return "No worktrees.\n";
  // The title column appears once any berth has a title.
  const titled = data.worktrees.some((row) => row.title !== null);
  const overlapping = new Set(data.overlaps.flatMap((o) => o.berths));
  const rows = data.worktrees.map((row) => [
    row.is_current ? c.bold("*") : " ",
    row.id,
    ...(titled ? [row.title === null ? c.dim("-") : cut(row.title, TITLE_WIDTH)] : []),
    row.branch ?? c.dim("(detached)"),
    overlapping.has(row.id)
      ? `${stateLabel(row, c)} ${c.yellow("(overlaps)")}`
      : stateLabel(row, c),
    cleanLabel(row, c),
    aheadBehind(row),
    receiptLabel(row, c),
    activityLabel(row, c, now),
    row.port === null ? c.dim("-") : String(row.port),
  ]);
  const header = [
    "",
    "id",
    ...(titled ? ["title"] : []),
    "branch",
    "state",
    "tree",
    "+/-",
    "receipt",
    "activity",
    "port",
  ].map((h) => c.dim(h));
  const trunk = data.trunk.name
    ? `trunk ${data.trunk.name}${data.trunk.tip ? ` at ${shortOid(data.trunk.tip)}` : " (missing)"}`
    : "trunk unknown";
  return `${renderTable(header, rows)}\n${c.dim(trunk)}\n${renderKeptRefs(data, c)}${renderRemoteRefs(data, c)}${renderLandings(data, c, now)}${renderOverlaps(data, c)}`;
}

/** --remote: berth branches on the remote with no checkout here. */
function renderRemoteRefs(data: StatusData, c: Colors): string {
  const trunk = data.trunk.name ?? "the trunk";
  const lines = (data.remote_refs ?? []).map(
    (r) =>
      `remote ${r.branch} at ${shortOid(r.tip)}: ${
        r.landed
          ? `${c.green("landed")} on ${r.remote}'s ${trunk}; the branch can go (${shellCommand(["git", "push", r.remote, "--delete", r.branch])})`
          : r.green
            ? c.green("green (receipt note)")
            : c.dim("no green note")
      }`,
  );
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** Recent landings, newest first: what a berth that is gone became. */
function renderLandings(data: StatusData, c: Colors, now: Date): string {
  const lines = data.landings.map((landing) => {
    const name = landing.id ?? landing.branch;
    const age = ageLabel(now.getTime() - Date.parse(landing.at));
    return c.dim(`${name} landed ${age} as ${shortOid(landing.new_trunk)} (${landing.branch})`);
  });
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** Unlanded berths changing the same files: the second to land would meet a conflict. */
function renderOverlaps(data: StatusData, c: Colors): string {
  const lines = data.overlaps.map((overlap) => {
    const who = listed(overlap.berths);
    const shown = overlap.files.slice(0, 3).join(", ");
    const more = overlap.files.length > 3 ? `, and ${overlap.files.length - 3} more` : "";
    const files =
      overlap.files.length === 1 ? shown : `${overlap.files.length} files: ${shown}${more}`;
    return `${c.yellow("overlap:")} ${who} ${overlap.berths.length === 2 ? "both " : ""}change ${files}`;
  });
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function listed(names: readonly string[]): string {
  if (names.length <= 2) return names.join(" and ");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * The table while the survey runs (a terminal only; the final table replaces
 * it): each row's id, branch and port at once, its tree as soon as its
 * `git status` is in, and "…" for what only the whole survey decides.
 */
export function renderStatusSkeleton(
  trunk: StatusData["trunk"],
  rows: readonly StatusRow[],
  arrived: ReadonlySet<string>,
  c: Colors,
): string {
  const waiting = c.dim("…");
  const cells = rows.map((row) => {
    const known = arrived.has(row.path);
    const settled = row.state === "main" || row.state === "prunable" || row.state === "unreadable";
    return [
      row.is_current ? c.bold("*") : " ",
      row.id,
      row.branch ?? c.dim("(detached)"),
      settled ? stateLabel(row, c) : waiting,
      known || row.prunable ? cleanLabel(row, c) : waiting,
      row.is_main ? "" : waiting,
      waiting,
      waiting,
      row.port === null ? c.dim("-") : String(row.port),
    ];
  });
  const header = ["", "id", "branch", "state", "tree", "+/-", "receipt", "activity", "port"].map(
    (h) => c.dim(h),
  );
  const count = rows.filter((row) => arrived.has(row.path) || row.prunable).length;
  const trunkLine = trunk.name ? `trunk ${trunk.name}` : "trunk unknown";
  return `${renderTable(header, cells)}\n${c.dim(`${trunkLine}; reading ${count}/${rows.length}…`)}\n`;
}

/**
 * Kept refs: one inside a live container is a calm fact printed beside it;
 * only a ref no live branch holds gets the abandoned-work warning and the way
 * back. A parked branch was shelved on purpose: it says how to resume it.
 */
function renderKeptRefs(data: StatusData, c: Colors): string {
  const lines: string[] = [];
  for (const ref of data.refs) {
    const ahead = ref.ahead === null ? "" : ` (+${ref.ahead})`;
    const title = ref.title === null ? "" : ` "${ref.title}"`;
    if (ref.state === "parked") {
      lines.push(
        `${c.cyan("parked:")} ${ref.branch}${ahead} at ${shortOid(ref.tip)}${title}`,
        `  resume it with: ${shellCommand(["berth", "start", "--from", ref.branch])}`,
      );
    } else if (!ref.abandoned) {
      lines.push(
        c.dim(
          `kept ref ${ref.branch}${ahead} at ${shortOid(ref.tip)}${title}, inside ${ref.contained_by}`,
        ),
      );
    } else {
      lines.push(
        `${c.yellow("abandoned work:")} ${ref.branch}${ahead} at ${shortOid(ref.tip)}${title} has commits no live branch holds`,
        `  resume it with: ${shellCommand(["berth", "start", "--from", ref.branch])}`,
      );
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** The row's state, and its landing-queue entry while it waits, is being landed or was rejected. */
function stateLabel(row: StatusRow, c: Colors): string {
  const queue = row.queue;
  // A standing grant waits for the berth's next submission (docs/decisions/0078).
  const grant = row.granted ? ` ${c.yellow("(queue: granted)")}` : "";
  if (queue === null || queue.state === "landed" || queue.state === "withdrawn") {
    return `${rowStateLabel(row, c)}${grant}`;
  }
  const place = queue.position === null ? "" : ` #${queue.position}`;
  const entry = `queue: ${queue.state}${place}`;
  return `${rowStateLabel(row, c)} ${queue.state === "rejected" ? c.red(`(${entry})`) : c.yellow(`(${entry})`)}${grant}`;
}

function rowStateLabel(row: StatusRow, c: Colors): string {
  switch (row.state) {
    case "contained":
      return row.contained
        ? c.cyan(`contained in ${row.contained.container} (+${row.contained.container_ahead})`)
        : "contained";
    case "landed":
    case "integrated":
      return c.green(row.state);
    case "broken":
    case "unreadable":
    case "prunable":
      return c.red(row.state);
    case "locked":
    case "detached":
      return c.yellow(row.state);
    default:
      return row.state;
  }
}

/** A receipt with no checks proves only a clean tree; it always says so (a stale one proves nothing). */
function receiptLabel(row: StatusRow, c: Colors): string {
  const noChecks = row.receipt_checks === 0 && row.receipt !== "stale";
  const label = noChecks ? `${row.receipt} (no checks declared)` : row.receipt;
  return row.receipt === "honored" ? c.green(label) : c.dim(label);
}

function cleanLabel(row: StatusRow, c: Colors): string {
  if (row.clean === null) return c.dim("?");
  return row.clean ? "clean" : c.yellow(`dirty (${row.changed_files})`);
}

function aheadBehind(row: StatusRow): string {
  if (row.is_main) return "";
  if (row.ahead === null || row.behind === null) return "?";
  return `+${row.ahead}/-${row.behind}`;
}

/** "running gate", or how long ago the worktree was last worked on and the last verb. */
function activityLabel(row: StatusRow, c: Colors, now: Date): string {
  if (row.running) return c.yellow(runningLabel(row.running));
  if (row.last_activity === null) return c.dim("-");
  const age = ageLabel(now.getTime() - Date.parse(row.last_activity));
  const action = lastActionLabel(row, now);
  return action === null ? age : `${age} ${c.dim(`(${action})`)}`;
}

/**
 * The row's last verb ("gate", "accept refused"), with its own age when the
 * row's activity is newer (a commit or an edit since): "just now (describe)"
 * would say describe ran just now.
 */
export function lastActionLabel(row: StatusRow, now: Date): string | null {
  const action = row.last_action;
  if (action === null) return null;
  const done = action.outcome === "ok" ? action.verb : `${action.verb} ${action.outcome}`;
  const age = ageLabel(now.getTime() - Date.parse(action.at));
  const activity =
    row.last_activity === null ? null : ageLabel(now.getTime() - Date.parse(row.last_activity));
  return activity === age ? done : `${done} ${age}`;
}

/** "running gate", or "interrupted gate" for a verb whose process is gone (status's `running`). */
export function runningLabel(running: string): string {
  return running.startsWith(INTERRUPTED_PREFIX) ? running : `running ${running}`;
}

export function ageLabel(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ago`;
  return `${Math.floor(hours / 24)}d ago`;
}
