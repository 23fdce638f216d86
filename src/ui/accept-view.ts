import type { AcceptData } from "../core/landing/accept.js";
import { NO_CHECKS_LABEL } from "../core/landing/gate.js";
import { describeIgnored } from "../io/disk-usage.js";
import { appliedResult, type PlanApplyResult } from "../result.js";
import { shortOid, visibleControls } from "../text.js";
import { renderGate } from "./gate-view.js";
import { renderRefusal } from "./refusal.js";
import type { Colors } from "./style.js";
import { removedLine } from "./worktree-view.js";

/** `berth accept` for a person: the plan (confirmation, dry run) and what happened. */

const COMMITS_SHOWN = 10;

/** What accept lands, proves, destroys and deletes: the confirmation text and the dry-run view. */
/**
 * `integrates`: the stack does not contain the trunk's tip, so the queue lands
 * it through an integration commit (accept-integration-plan.ts): the gate runs
 * on that merge, and the trunk moves to it, not to the berth's tip.
 */
export function acceptPlanText(data: AcceptData, c: Colors, integrates = false): string {
  const lines = data.resumed
    ? [
        `Finish accepting ${c.bold(data.id)} (${data.branch} is already on ${data.trunk.name}${data.path ? `; ${data.path}` : ""}):`,
      ]
    : [`Accept ${c.bold(data.id)} (${data.branch}, ${data.path}):`];
  // Pad before coloring: escape codes would count as width.
  const row = (verb: string, what: string, color: (s: string) => string = (s) => s) => {
    lines.push(`  ${color(verb.padEnd(10))} ${what}`);
  };
  if (!data.resumed) {
    const checks =
      data.validated.checks === 0 ? NO_CHECKS_LABEL : `${data.validated.checks ?? "?"} check(s)`;
    if (integrates) {
      row(
        "merges",
        `${data.trunk.name} ${shortOid(data.trunk.old)} and ${shortOid(data.validated.commit)} into an integration commit, in a throwaway checkout`,
      );
      row("validates", `the integration commit by running the trunk's gate on it (${checks})`);
      row(
        "lands",
        `${data.trunk.name} ${shortOid(data.trunk.old)} -> the integration commit (fast-forward; ${data.commit_count} commit(s) of ${data.branch})`,
        c.green,
      );
    } else {
      row(
        "validates",
        data.validated.by === "receipt"
          ? `${shortOid(data.validated.commit)} by its honored gate receipt (${checks})`
          : `${shortOid(data.validated.commit)} by running the gate now (${checks})`,
      );
      row(
        "lands",
        `${data.trunk.name} ${shortOid(data.trunk.old)} -> ${shortOid(data.trunk.new)} (fast-forward, ${data.commit_count} commit(s))`,
        c.green,
      );
    }
    for (const commit of data.commits.slice(0, COMMITS_SHOWN)) {
      lines.push(
        `${" ".repeat(15)}${c.dim(shortOid(commit.oid))} ${visibleControls(commit.subject)}`,
      );
    }
    if (data.commit_count > COMMITS_SHOWN) {
      lines.push(`${" ".repeat(15)}${c.dim(`... and ${data.commit_count - COMMITS_SHOWN} more`)}`);
    }
    if (data.stages.length > 0) {
      row(
        "lands",
        `earlier stages too: ${data.stages.map((s) => s.branch).join(", ")} (they become landed; berth worktree prune clears them)`,
        c.green,
      );
    }
  }
  if (data.main_checkout.follows_trunk && data.landing.main_checkout_updated !== true) {
    row(
      "updates",
      `the main checkout's files (${data.main_checkout.path} has ${data.trunk.name} checked out)`,
    );
  }
  if (data.resources.length > 0) {
    row("destroys", `resources ${data.resources.join(", ")} (their destroy commands run)`, c.red);
  }
  if (data.path !== null && !data.landing.worktree_removed) {
    const ignored = data.ignored ? `, with ${describeIgnored(data.ignored)} in it` : "";
    row("destroys", `the checkout and its per-berth state${ignored}`, c.red);
  }
  if (data.delete_branch !== null && !data.landing.branch_deleted) {
    row("deletes", `branch ${data.delete_branch} at ${shortOid(data.validated.commit)}`, c.red);
  } else if (data.delete_branch === null && !data.landing.branch_deleted) {
    row("keeps", `branch ${data.branch}`, c.green);
  }
  if (lines.length === 1) row("", "nothing is left to do");
  return `${lines.join("\n")}\n`;
}

export function renderAccept(
  result: PlanApplyResult<AcceptData>,
  c: Colors,
): { stdout: string; stderr: string } {
  const data = result.data;
  if (data === null) return { stdout: "", stderr: "" };
  if (result.dryRun) {
    return {
      stdout: `${c.dim("dry run; nothing changed")}\n${acceptPlanText(
        data,
        c,
        result.plan.steps.some((s) => s.step === "integrate"),
      )}`,
      stderr: "",
    };
  }
  const out: string[] = [];
  const err: string[] = [];
  if (data.gate !== null) {
    const gate = renderGate(appliedResult("gate", data.gate, [], []), c);
    out.push(gate.stdout.trimEnd());
    if (gate.stderr) err.push(gate.stderr.trimEnd());
  }
  const landing = data.landing;
  if (landing.trunk_landed) {
    // The berth's own commits are counted; the trunk also gained the merge the gate ran on.
    const throughMerge =
      data.queue?.landed?.via === "integration" ? " and an integration commit" : "";
    const how =
      data.validated.by === "trunk"
        ? "already landed"
        : `validated by ${data.validated.by === "receipt" ? "its receipt" : "the gate"}`;
    out.push(
      data.resumed
        ? `${result.ok ? "finished accepting" : "finishing"} ${c.bold(data.id)}: ${data.branch} is on ${data.trunk.name} (${shortOid(data.validated.commit)}, ${how})`
        : `${result.ok ? "accepted" : "landed"} ${c.bold(data.id)}: ${data.trunk.name} ${shortOid(data.trunk.old)} -> ${shortOid(data.trunk.new)} (${data.commit_count} commit(s)${throughMerge}, ${how})`,
    );
    if (landing.main_checkout_updated === true) {
      out.push(`  updated   the main checkout's files (${data.main_checkout.path})`);
    }
    if (data.destroyed.length > 0) out.push(`  destroyed resources ${data.destroyed.join(", ")}`);
    if (landing.worktree_removed && data.path !== null)
      out.push(removedLine(data.path, data.ignored));
    if (landing.branch_deleted && data.delete_branch !== null) {
      out.push(`  deleted   branch ${data.delete_branch}`);
    }
    if (!data.resumed && data.stages.length > 0) {
      out.push(`  landed    ${data.stages.map((s) => s.branch).join(", ")} with it`);
    }
  }
  if (result.error) {
    err.push(
      renderRefusal(
        "accept",
        result.error,
        !landing.trunk_landed && data.gate === null,
        c,
      ).trimEnd(),
    );
  }
  return {
    stdout: out.length === 0 ? "" : `${out.join("\n")}\n`,
    stderr: err.length === 0 ? "" : `${err.join("\n")}\n`,
  };
}
