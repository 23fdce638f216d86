import type { WorktreeSetupData } from "../core/lifecycle/converge-setup.js";
import type { WorktreeTeardownData } from "../core/lifecycle/destroy-resources.js";
import type { DropData } from "../core/lifecycle/drop.js";
import { describeReason } from "../core/lifecycle/drop-reasons.js";
import { type DiskUsage, describeIgnored } from "../io/disk-usage.js";
import type { PlanApplyResult, PlanStep } from "../result.js";
import { shortOid } from "../text.js";
import type { Colors } from "./style.js";

/** Human views of `berth worktree drop|setup|teardown`: plans, confirmations, results. */

/** What a drop destroys and what it keeps: the confirmation text and the dry-run view. */
export function dropPlanText(data: DropData, c: Colors): string {
  const lines = [`Drop ${c.bold(data.id)} (${data.path}):`];
  // Pad before coloring: escape codes would count as width.
  const row = (verb: string, what: string) => {
    const color = verb === "keeps" ? c.green : c.red;
    lines.push(`  ${color(verb.padEnd(9))} ${what}`);
  };
  if (data.resources.length > 0) {
    row("destroys", `resources ${data.resources.join(", ")} (their destroy commands run)`);
  }
  row(
    "destroys",
    `the checkout and its per-berth state, with ${describeIgnored(data.ignored)} in it`,
  );
  for (const reason of data.reasons) row("discards", describeReason(reason));
  if (data.delete_branch !== null && data.head !== null) {
    row("deletes", `branch ${data.delete_branch} at ${shortOid(data.head)}`);
  } else if (data.branch !== null && data.head !== null) {
    // A HEAD that names no commit is a branch deleted under the checkout: there is none to keep.
    row("keeps", `branch ${data.branch}`);
  }
  if (data.recovery_tip !== null) {
    row(
      "keeps",
      `recovery ref refs/berth/recovery/<utc>-${data.id} at ${shortOid(data.recovery_tip)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

export function renderDropResult(result: PlanApplyResult<DropData>, c: Colors): string {
  const data = result.data;
  if (data === null) return "";
  if (result.dryRun) return `${c.dim("dry run; nothing changed")}\n${dropPlanText(data, c)}`;
  const lines = [`dropped ${c.bold(data.id)}`];
  if (data.resources_destroyed.length > 0) {
    lines.push(`  destroyed resources ${data.resources_destroyed.join(", ")}`);
  }
  if (data.worktree_removed) lines.push(removedLine(data.path, data.ignored));
  if (data.branch_deleted && data.delete_branch)
    lines.push(`  deleted   branch ${data.delete_branch}`);
  if (data.recovery_ref) lines.push(`  kept      ${data.recovery_ref}`);
  return `${lines.join("\n")}\n`;
}

/**
 * "removed <path>", and the ignored files that went with it: with `--yes` no
 * plan was shown, so the result is where a person learns of them.
 */
export function removedLine(path: string, ignored: DiskUsage | null): string {
  const went = ignored !== null && ignored.files > 0 ? `, with ${describeIgnored(ignored)}` : "";
  return `  removed   ${path}${went}`;
}

export function renderWorktreeSetup(result: PlanApplyResult<WorktreeSetupData>, c: Colors): string {
  const data = result.data;
  if (data === null) return "";
  if (result.dryRun)
    return `${c.dim("dry run; nothing changed")}\n${planLines(result.plan.steps, c)}`;
  const lines = [`set up ${c.bold(data.id)}`];
  if (data.created.length > 0) lines.push(`  created resources ${data.created.join(", ")}`);
  if (data.ensured.length > 0) lines.push(`  ensured resources ${data.ensured.join(", ")}`);
  for (const command of data.setup_ensure) lines.push(`  ran ${command}`);
  if (lines.length === 1) lines.push(c.dim("  nothing is declared to set up"));
  return `${lines.join("\n")}\n`;
}

export function teardownPlanText(data: WorktreeTeardownData, c: Colors): string {
  return `Tear down ${c.bold(data.id)}'s resources (${data.path}):\n  ${c.red("destroys")}  ${data.resources.join(", ")}\n  ${c.green("keeps")}     the checkout and its branch\n`;
}

export function renderWorktreeTeardown(
  result: PlanApplyResult<WorktreeTeardownData>,
  c: Colors,
): string {
  const data = result.data;
  if (data === null) return "";
  if (result.dryRun) {
    return data.resources.length === 0
      ? `${c.dim("dry run; nothing is recorded to destroy")}\n`
      : `${c.dim("dry run; nothing changed")}\n${teardownPlanText(data, c)}`;
  }
  if (data.destroyed.length === 0) return `${c.dim(`no resources destroyed for ${data.id}`)}\n`;
  return `destroyed ${data.destroyed.join(", ")} for ${c.bold(data.id)}; the checkout stays\n`;
}

function planLines(steps: readonly PlanStep[], c: Colors): string {
  if (steps.length === 0) return `${c.dim("  nothing to do")}\n`;
  return `${steps
    .map(
      (s) =>
        `  ${s.step}${s.target ? ` ${s.target}` : ""}${s.detail ? c.dim(` (${s.detail})`) : ""}`,
    )
    .join("\n")}\n`;
}
