import type { ParkData } from "../core/lifecycle/park.js";
import { describeIgnored } from "../io/disk-usage.js";
import type { PlanApplyResult } from "../result.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";
import { removedLine } from "./worktree-view.js";

/** Human views of `berth worktree park`: what is kept and destroyed, and the result. */

export function parkPlanText(data: ParkData, c: Colors): string {
  const lines = [`Park ${c.bold(data.id)} (${data.path}):`];
  // Pad before coloring: escape codes would count as width.
  const row = (verb: string, what: string) => {
    const color = verb === "keeps" ? c.green : c.red;
    lines.push(`  ${color(verb.padEnd(9))} ${what}`);
  };
  const ahead = data.ahead === null ? "" : ` (${data.ahead} commit(s) not on the trunk)`;
  row("keeps", `branch ${data.branch} at ${shortOid(data.head)}${ahead}`);
  const kept = [
    data.title === null ? null : `its title "${data.title}"`,
    data.has_brief ? "its brief" : null,
  ].filter((part): part is string => part !== null);
  if (kept.length > 0) row("keeps", kept.join(" and "));
  if (data.resources.length > 0) {
    row("destroys", `resources ${data.resources.join(", ")} (their destroy commands run)`);
  }
  row(
    "destroys",
    `the checkout and its per-berth state (the gate receipt included), with ${describeIgnored(data.ignored)} in it`,
  );
  lines.push(`  resume it with: ${data.resume}`);
  return `${lines.join("\n")}\n`;
}

export function renderParkResult(result: PlanApplyResult<ParkData>, c: Colors): string {
  const data = result.data;
  if (data === null) return "";
  if (result.dryRun) return `${c.dim("dry run; nothing changed")}\n${parkPlanText(data, c)}`;
  const lines = [`parked ${c.bold(data.id)}${data.title === null ? "" : ` "${data.title}"`}`];
  if (data.resources_destroyed.length > 0) {
    lines.push(`  destroyed resources ${data.resources_destroyed.join(", ")}`);
  }
  if (data.worktree_removed) lines.push(removedLine(data.path, data.ignored));
  lines.push(`  kept      branch ${data.branch} at ${shortOid(data.head)}`);
  lines.push(`  resume:   ${data.resume}`);
  return `${lines.join("\n")}\n`;
}
