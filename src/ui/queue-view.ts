import type { QueueData, QueueEntryView, QueueRunData } from "../core/landing/queue.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";
import { renderTable } from "./table.js";

/** `berth queue` for a person: the entries in landing order, and why one was rejected. */

function stateText(entry: QueueEntryView, c: Colors): string {
  switch (entry.state) {
    case "landed":
      return c.green("landed");
    case "rejected":
      return c.red("rejected");
    case "awaiting_approval":
      return c.yellow("awaiting_approval");
    default:
      return entry.state;
  }
}

/** The whole queue: its entries, then the standing grants no entry has taken up yet. */
export function renderQueue(data: QueueData, c: Colors): string {
  const entries =
    data.entries.length === 0 ? "The landing queue is empty.\n" : renderEntries(data.entries, c);
  if (data.grants.length === 0) return entries;
  const grants = data.grants.map((g) => (g.at === null ? g.id : `${g.id} (since ${g.at})`));
  return `${entries}Standing grants, each landing once submitted and green: ${grants.join(", ")}\n`;
}

/** Entries in landing order, one row each. */
export function renderEntries(entries: readonly QueueEntryView[], c: Colors): string {
  const rows = entries.map((e) => [
    e.position === null ? "-" : String(e.position),
    e.id,
    shortOid(e.tip),
    stateText(e, c),
    detailOf(e),
  ]);
  return `${renderTable(["#", "BERTH", "TIP", "STATE", "DETAIL"], rows)}\n`;
}

function detailOf(e: QueueEntryView): string {
  const detail = e.reason ?? (e.landed ? `${shortOid(e.landed.new_trunk)} (${e.landed.via})` : "");
  if (e.leftover === null) return detail;
  const left = `integration checkout ${e.leftover.id} left: ${e.leftover.reason}`;
  return detail === "" ? left : `${detail}; ${left}`;
}

export function renderQueueRun(data: QueueRunData, c: Colors): string {
  const landed = data.decided.filter((e) => e.state === "landed").length;
  const rejected = data.decided.filter((e) => e.state === "rejected").length;
  const summary = `Landed ${landed}, rejected ${rejected}; ${data.gate_runs} gate run(s).\n`;
  return `${renderQueue(data, c)}${summary}`;
}
