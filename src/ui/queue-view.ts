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

export function renderQueue(data: QueueData, c: Colors): string {
  if (data.entries.length === 0) return "The landing queue is empty.\n";
  const rows = data.entries.map((e) => [
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
