import type { AwaitData } from "../core/await/await.js";
import type { VerbResult } from "../result.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";

/** The answer, one line on stdout: what held (or did not), at which commits. */
export function renderAwait(result: VerbResult<AwaitData>, c: Colors): { stdout: string } {
  const data = result.data;
  if (data === null) return { stdout: "" };
  return { stdout: `${data.met ? metLine(data, c) : notMetLine(data, c)}\n` };
}

function metLine(data: AwaitData, c: Colors): string {
  const branch = c.bold(data.branch ?? "-");
  switch (data.condition) {
    case "trunk-moved":
      return `${branch} ${c.green("moved")}: ${shortOid(data.trunk_tip_at_start)} -> ${shortOid(data.trunk_tip)}`;
    case "landed":
      return landedLine(data, branch, c);
    case "green":
      return data.met_by === "landed"
        ? landedLine(data, branch, c)
        : `${branch} ${c.green("is green")} at ${shortOid(data.tip)} (gate receipt honored)`;
  }
}

/** Landed: by the trunk's history, or by a landing record (the branch may be gone). */
function landedLine(data: AwaitData, branch: string, c: Colors): string {
  const trunk = data.trunk ?? "the trunk";
  const commit = shortOid(data.landed_commit ?? data.tip);
  const landing = data.landing;
  if (landing !== null) {
    const within = landing.landed_with === null ? "" : ` with ${landing.landed_with}`;
    return `${branch} ${c.green("has landed")}${within}: ${commit} landed on ${trunk} at ${landing.at} (landing log; ${trunk} then at ${shortOid(landing.new_trunk)})`;
  }
  return `${branch} ${c.green("has landed")}: ${commit} is on ${trunk} (at ${shortOid(data.trunk_tip)})`;
}

function notMetLine(data: AwaitData, c: Colors): string {
  const branch = c.bold(data.branch ?? "-");
  if (data.reason === "rejected") {
    return `${branch} ${c.red("was rejected")} by the landing queue at ${shortOid(data.tip)}; it will not land as it is`;
  }
  const what =
    data.condition === "trunk-moved"
      ? `${branch} is still at ${shortOid(data.trunk_tip)}`
      : data.tip === null
        ? `there is no branch ${branch} (yet) to judge`
        : data.condition === "landed"
          ? `${branch} at ${shortOid(data.tip)} has not landed on ${data.trunk ?? "the trunk"}`
          : `${branch} at ${shortOid(data.tip)} is not green (no honored receipt) and has not landed`;
  const why = data.interrupted
    ? "interrupted"
    : data.timeout_s === 0
      ? "checked once"
      : `gave up after ${data.timeout_s}s`;
  return `${c.yellow("not met")} (${why}): ${what}`;
}

/** Shown on a terminal's stderr while the wait lasts. */
export function waitingLine(data: AwaitData, c: Colors): string {
  const branch = c.bold(data.branch ?? "-");
  const what =
    data.condition === "trunk-moved"
      ? `${branch} to move from ${shortOid(data.trunk_tip_at_start)}`
      : data.condition === "landed"
        ? `${branch} to land on ${data.trunk ?? "the trunk"}`
        : `${branch} to turn green (or land)`;
  return `${c.dim(`waiting for ${what}, up to ${data.timeout_s}s (Ctrl-C stops)...`)}\n`;
}
