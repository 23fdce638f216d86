import type { UpdateData } from "../core/landing/update.js";
import type { PlanApplyResult } from "../result.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";

const MAX_FILES_SHOWN = 20;

/** What an update would merge, and what it keeps and changes: the desk's confirmation text. */
export function updatePlanText(dry: PlanApplyResult<UpdateData>, c: Colors): string {
  return [
    renderUpdate(dry, c).stdout.trimEnd(),
    `  ${c.green("keeps    ")} untracked files; a conflicted merge is aborted and the branch stays as it is`,
    `  ${c.yellow("changes  ")} branch ${dry.data?.branch ?? "?"} (a fast-forward or a merge commit), then runs [worktree.setup].ensure`,
  ].join("\n");
}

/** What the merge brought in (stdout), and a failed ensure's output (stderr). */
export function renderUpdate(
  result: PlanApplyResult<UpdateData>,
  c: Colors,
): { stdout: string; stderr: string } {
  const data = result.data;
  if (data === null) return { stdout: "", stderr: "" };
  const dry = result.dryRun;
  const from = `${data.merged_from} (${shortOid(data.from_tip)})`;
  const out: string[] = [];
  if (data.up_to_date) {
    out.push(`${c.bold(data.branch)} is already up to date with ${from}`);
  } else {
    const how = data.fast_forward ? "fast-forward" : "merge";
    const verb = dry ? "would bring in" : "brought in";
    out.push(
      `${c.bold(data.branch)} ${verb} ${data.commits} commit(s) from ${from} ` +
        `by ${how}, ${data.files.length} file(s)${dry ? "" : ` (now at ${shortOid(data.head)})`}`,
    );
    for (const file of data.files.slice(0, MAX_FILES_SHOWN)) out.push(`  ${file}`);
    if (data.files.length > MAX_FILES_SHOWN) {
      out.push(c.dim(`  ... and ${data.files.length - MAX_FILES_SHOWN} more`));
    }
  }
  if (dry) {
    for (const step of result.plan.steps) {
      if (step.step === "run ensure") out.push(c.dim(`would run ensure: ${step.target}`));
    }
  }
  for (const run of data.ensure) {
    const label = run.ok ? c.green("ok") : c.red(`failed (exit ${run.exit_code ?? "by signal"})`);
    out.push(`ensure ${label} ${run.command} ${c.dim(`${(run.duration_ms / 1000).toFixed(1)}s`)}`);
  }

  const err: string[] = [];
  for (const run of data.ensure) {
    if (run.ok || run.tail === null) continue;
    err.push(c.red(`--- ensure \`${run.command}\`: last lines of its output ---`));
    err.push(run.tail === "" ? c.dim("(no output)") : run.tail);
  }
  if (result.error) {
    err.push(`${c.red("berth update:")} ${result.error.message}`);
    if (result.error.next) err.push(`next: ${c.bold(result.error.next)}`);
  }
  return {
    stdout: `${out.join("\n")}\n`,
    stderr: err.length === 0 ? "" : `${err.join("\n")}\n`,
  };
}
