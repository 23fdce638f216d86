import type { PruneData } from "../core/lifecycle/prune-apply.js";
import type { PruneSections } from "../core/lifecycle/prune-plan.js";
import { RECOVERY_PREFIX } from "../core/lifecycle/recovery-refs.js";
import { type DiskUsage, describeIgnored } from "../io/disk-usage.js";
import type { PlanApplyResult } from "../result.js";
import { shellCommand, shortOid } from "../text.js";
import type { Colors } from "./style.js";
import { renderTable } from "./table.js";

/**
 * The prune plan for a person: one labelled section per class, each row with
 * its evidence, then what the apply will do. The contained section is always
 * shown when it has candidates, and always says it is an offer.
 */
export function renderPrunePlan(sections: PruneSections, contained: boolean, c: Colors): string {
  const out: string[] = [];
  const heading = (title: string, count: number) => out.push(`${c.bold(title)} (${count})`);

  heading("stale metadata", sections.stale.length);
  if (sections.stale.length > 0) {
    out.push(
      indent(
        renderTable(
          ["id", "path", "resources"].map((h) => c.dim(h)),
          sections.stale.map((r) => [
            r.id,
            `${r.path} ${c.dim(r.head_on_no_ref ? "(folder gone; its HEAD is on no branch or tag: a recovery ref keeps it)" : "(folder gone)")}`,
            r.resources.join(", ") || "-",
          ]),
        ),
      ),
    );
  }
  heading("landed", sections.landed.length);
  if (sections.landed.length > 0) {
    out.push(
      indent(
        renderTable(
          ["what", "branch", "tip", "path", "ignored files that go"].map((h) => c.dim(h)),
          sections.landed.map((r) =>
            r.kind === "worktree"
              ? [
                  r.integrated ? "berth (integrated)" : "berth",
                  r.branch ?? "-",
                  shortOid(r.tip),
                  r.path,
                  describeIgnored(r.ignored),
                ]
              : [
                  r.integrated ? "branch (integrated)" : "branch",
                  r.branch,
                  shortOid(r.tip),
                  c.dim("(no checkout)"),
                  "-",
                ],
          ),
        ),
      ),
    );
  }
  heading("orphaned resources", sections.orphaned.length);
  if (sections.orphaned.length > 0) {
    out.push(
      indent(
        renderTable(
          ["berth", "resource", "was at"].map((h) => c.dim(h)),
          sections.orphaned.map((r) => [
            r.id,
            r.gc ? r.resource : `${r.resource} ${c.dim("(gc = false: kept)")}`,
            r.path,
          ]),
        ),
      ),
    );
  }
  heading(
    contained
      ? "contained (reclaim: --contained)"
      : "contained (offer only; skipped without --contained)",
    sections.contained.length,
  );
  if (sections.contained.length > 0) {
    out.push(
      indent(
        renderTable(
          [
            "id",
            "branch",
            "tip",
            "contained in",
            "container tip",
            "ahead",
            "ignored files that go",
          ].map((h) => c.dim(h)),
          sections.contained.map((r) => [
            r.id,
            r.branch,
            shortOid(r.tip),
            `${r.container}${r.container_has_checkout ? "" : c.dim(" (no checkout)")}`,
            shortOid(r.container_tip),
            `+${r.container_ahead}`,
            describeIgnored(r.ignored),
          ]),
        ),
      ),
    );
  }
  if (sections.not_made_by_berth.length > 0) {
    heading("landed, not made by berth (kept; delete with git)", sections.not_made_by_berth.length);
    for (const r of sections.not_made_by_berth) {
      out.push(
        `  ${r.branch} at ${shortOid(r.tip)}: ${shellCommand(["git", "branch", "-d", r.branch])}`,
      );
    }
  }
  return `${out.join("\n")}\n`;
}

/** What the confirmation names: what is kept, what is destroyed (spec 4 and ADR 0225). */
export function pruneConfirmText(
  sections: PruneSections,
  contained: boolean,
  ignored: DiskUsage,
  c: Colors,
): string {
  const lines = [renderPrunePlan(sections, contained, c).trimEnd(), ""];
  const checkouts =
    sections.landed.filter((r) => r.kind === "worktree").length +
    (contained ? sections.contained.length : 0);
  lines.push(c.bold("This apply will:"));
  if (sections.stale.length > 0) {
    lines.push(
      `  remove ${sections.stale.length} stale registration(s) and destroy their recorded resources`,
    );
    const detached = sections.stale.filter((r) => r.head_on_no_ref).length;
    if (detached > 0) {
      lines.push(
        `  write a recovery ref under ${RECOVERY_PREFIX} first for ${detached} of them, whose HEAD commit is on no branch or tag`,
      );
    }
  }
  const integrated = sections.landed.filter((r) => r.integrated);
  if (integrated.length < sections.landed.length) {
    lines.push(
      "  tear down landed berths and delete landed branches (their commits are on the trunk)",
    );
  }
  if (integrated.length > 0) lines.push(`  ${integratedRemoval(integrated)}`);
  const orphans = sections.orphaned.filter((r) => r.gc).length;
  if (orphans > 0) lines.push(`  destroy ${orphans} orphaned resource(s)`);
  if (contained && sections.contained.length > 0) {
    lines.push(
      `  reclaim ${sections.contained.length} contained berth(s):`,
      `    keeps:     the branch refs ${sections.contained.map((r) => r.branch).join(", ")} (recover with berth start --from <branch>)`,
      "    destroys:  their checkouts and per-berth state, the gate receipt included, and their resources",
    );
  } else if (sections.contained.length > 0) {
    lines.push(`  leave the ${sections.contained.length} contained berth(s) alone (offer only)`);
  }
  if (checkouts > 0) {
    lines.push(`  ${describeIgnored(ignored)} go with the removed checkouts`);
  }
  return `${lines.join("\n")}\n`;
}

/** Squash- or rebase-merged rows: their commits are not on the trunk, so the plan names what keeps them. */
function integratedRemoval(rows: PruneSections["landed"]): string {
  const berths = rows.filter((r) => r.kind === "worktree").length;
  const branches = rows.length - berths;
  const what = [
    berths > 0 ? `tear down ${berths} integrated berth(s) and delete their branches` : "",
    branches > 0 ? `delete ${branches} integrated branch(es)` : "",
  ].filter((part) => part !== "");
  return `${what.join(" and ")}, each after a recovery ref under ${RECOVERY_PREFIX} (squash- or rebase-merged: their commits are not on the trunk)`;
}

export function renderPruneResult(result: PlanApplyResult<PruneData>, c: Colors): string {
  return result.data === null ? "" : renderPruneData(result.data, result.dryRun, c);
}

/** The plan, then (unless it was only planned) what was done and what skipped. */
export function renderPruneData(data: PruneData, dryRun: boolean, c: Colors): string {
  const plan = renderPrunePlan(data.sections, data.contained_included, c);
  if (dryRun) return `${plan}${c.dim("(dry run: nothing changed)")}\n`;
  const lines = [plan.trimEnd()];
  if (data.applied.length === 0 && data.skipped.length === 0) lines.push("Nothing to prune.");
  for (const row of data.applied) lines.push(`${c.green("done")}     ${row.action}: ${row.target}`);
  for (const row of data.skipped)
    lines.push(`${c.yellow("skipped")}  ${row.target}: ${row.reason}`);
  return `${lines.join("\n")}\n`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
