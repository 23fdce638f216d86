import type { StartData } from "../core/lifecycle/start.js";
import type { PlanApplyResult } from "../result.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";

/** stdout carries only the path, so `cd "$(berth start x)"` works; the story goes to stderr. */
export function renderStart(
  result: PlanApplyResult<StartData>,
  c: Colors,
): { stdout: string; stderr: string } {
  const data = result.data;
  if (data === null) return { stdout: "", stderr: "" };
  const dry = result.dryRun;
  const title = data.title === undefined ? "" : ` "${data.title}"`;
  const lines = [
    data.resumed
      ? `${dry ? "would resume" : "resumed"} ${c.bold(data.id)}${title} on its parked branch ${data.branch} (${shortOid(data.from_tip)}), port ${data.port}`
      : `${dry ? "would start" : "started"} ${c.bold(data.id)}${title} on ${data.branch} from ${data.from} (${shortOid(data.from_tip)}), port ${data.port}`,
  ];
  if (dry) {
    for (const step of result.plan.steps) {
      lines.push(
        `  ${step.step}${step.target ? ` ${step.target}` : ""}${step.detail ? c.dim(` (${step.detail})`) : ""}`,
      );
    }
  }
  return { stdout: dry ? "" : `${data.path}\n`, stderr: `${lines.join("\n")}\n` };
}
