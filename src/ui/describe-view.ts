import type { DescribeData } from "../core/berth/describe.js";
import type { VerbResult } from "../result.js";
import { visibleControls } from "../text.js";
import type { Colors } from "./style.js";

/** `berth describe`: the title on one line, then the brief as written (control characters escaped). */
export function renderDescribe(result: VerbResult<DescribeData>, c: Colors): string {
  const data = result.data;
  if (data === null) return "";
  const where = data.path ?? (data.parked ? "parked, no checkout" : "no checkout");
  const lines = [
    `${c.bold(data.id ?? data.branch)}  ${c.dim(`${data.branch} (${where})`)}`,
    `title: ${data.title ?? c.dim("(none)")}`,
  ];
  if (data.brief === null) lines.push(c.dim("no brief"));
  else lines.push("", visibleControls(data.brief.trimEnd()));
  if (data.changed) lines.push(c.dim("(updated)"));
  return `${lines.join("\n")}\n`;
}
