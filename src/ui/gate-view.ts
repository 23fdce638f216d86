import type { GateCheckReport, GateData } from "../core/landing/gate.js";
import { NO_CHECKS_LABEL } from "../core/landing/gate.js";
import type { CheckOutcome, GateEvent } from "../core/landing/gate-runner.js";
import type { PlanApplyResult } from "../result.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";
import { renderTable } from "./table.js";

/**
 * The gate for a person. stdout: one line per check and the receipt decision.
 * stderr: on failure, each failing check's last lines and the command that
 * reproduces it, then what to run next.
 */
export function renderGate(
  result: PlanApplyResult<GateData>,
  c: Colors,
): { stdout: string; stderr: string } {
  const data = result.data;
  if (data === null) return { stdout: "", stderr: "" };
  const dry = result.dryRun;
  const out: string[] = [
    `${dry ? "would gate" : "gate"} ${c.bold(data.branch)} at ${shortOid(data.commit)} ` +
      c.dim(`(tree ${shortOid(data.tree)}, contains ${data.trunk} at ${shortOid(data.trunk_tip)})`),
  ];
  if (data.no_checks) {
    out.push(`  ${c.yellow(NO_CHECKS_LABEL)}: the receipt proves a clean tree and nothing more`);
  } else {
    const [first = [], ...rest] = data.checks.map((check) => checkRow(check, c, dry));
    out.push(renderTable(first, rest));
  }
  if (dry) {
    out.push(c.dim(`would write ${data.receipt.path} if every check passes`));
  } else if (data.receipt.reason !== null) {
    const line = `receipt: ${data.receipt.reason}`;
    out.push(data.receipt.decision === "written" ? c.green(line) : c.yellow(line));
  }

  const err: string[] = [];
  for (const failure of data.failures) {
    err.push(
      c.red(`--- ${failure.name}: ${failure.reason ?? "failed"}; last lines of its output ---`),
    );
    if (failure.tail !== "") err.push(failure.tail);
    else err.push(c.dim("(no output)"));
    if (failure.log) err.push(c.dim(`full log: ${failure.log}`));
    err.push(`reproduce: ${c.bold(failure.reproduce)}`);
  }
  if (result.error) {
    err.push(`${c.red("berth gate:")} ${result.error.message}`);
    if (result.error.next) err.push(`next: ${c.bold(result.error.next)}`);
  }
  return {
    stdout: `${out.join("\n")}\n`,
    stderr: err.length === 0 ? "" : `${err.join("\n")}\n`,
  };
}

/** What a gate would run, and what it keeps and writes: the desk's confirmation text. */
export function gatePlanText(dry: PlanApplyResult<GateData>, c: Colors): string {
  return [
    renderGate(dry, c).stdout.trimEnd(),
    `  ${c.green("keeps    ")} the checkout, its branch and its files (the checks only read them)`,
    `  ${c.yellow("writes   ")} a receipt for ${dry.data ? shortOid(dry.data.commit) : "HEAD"} when every check passes; a red gate deletes any receipt`,
  ].join("\n");
}

function checkRow(check: GateCheckReport, c: Colors, dry: boolean): string[] {
  const duration = check.duration_ms === null ? "" : formatDuration(check.duration_ms);
  if (dry) {
    const after = check.after.length > 0 ? `after ${check.after.join(", ")}` : "";
    return ["  would run", check.name, c.dim(check.command), c.dim(after)];
  }
  const detail = check.outcome === "passed" ? "" : (check.reason ?? "");
  return [`  ${outcomeLabel(check.outcome, c)}`, check.name, duration, c.dim(detail)];
}

function outcomeLabel(outcome: CheckOutcome | null, c: Colors): string {
  switch (outcome) {
    case "passed":
      return c.green("ok");
    case "failed":
      return c.red("failed");
    case "timed_out":
      return c.red("timed out");
    case "stopped":
      return c.yellow("stopped");
    case "skipped":
      return c.dim("skipped");
    default:
      return c.dim("-");
  }
}

function formatDuration(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

/**
 * Progress for a terminal: a line on stderr as each check starts and ends.
 * The caller wires this only when stderr is a TTY.
 */
export function gateProgress(stderr: NodeJS.WritableStream, c: Colors): (event: GateEvent) => void {
  return (event) => {
    if (event.kind === "start") {
      stderr.write(`${c.dim("  ...")} ${event.check.name} ${c.dim("started")}\n`);
      return;
    }
    const { run } = event;
    if (run.outcome === "skipped") return;
    const duration = run.durationMs === null ? "" : ` ${formatDuration(run.durationMs)}`;
    stderr.write(`  ${outcomeLabel(run.outcome, c)} ${run.name}${c.dim(duration)}\n`);
  };
}
