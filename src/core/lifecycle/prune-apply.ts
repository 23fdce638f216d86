import { type Context, isInterrupted } from "../../context.js";
import { isAncestor } from "../../git/ancestry.js";
import { removeWorktree } from "../../git/worktrees.js";
import { readLedger } from "../../io/ledger.js";
import { withFleetLock } from "../../io/lock.js";
import type { StepOutcome, VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { describeFailure, destroyLedgerEntries } from "../berth/resources.js";
import { remoteTrunkRef } from "../fleet/integration.js";
import type { Repository } from "../repo/repository.js";
import type { Trunk } from "../repo/trunk.js";
import { deleteBranch } from "./branch-deletion.js";
import {
  type ContainedRow,
  type LandedBranchRow,
  type LandedWorktreeRow,
  type OrphanRow,
  type PrunePlan,
  type PruneReading,
  type PruneSections,
  readPruneReading,
  type StaleRow,
} from "./prune-plan.js";
import { reclaimContained } from "./reclaim.js";
import { writeRecoveryRef } from "./recovery-refs.js";
import { changedSincePlan, plannedTeardownTarget } from "./removal-facts.js";
import { applyTeardown } from "./teardown.js";

/**
 * Applies a prune plan under the fleet lock. Every removal re-checks its item
 * against a fresh reading of the fleet right before acting; an item that
 * changed is skipped with the reason "changed since the plan". The contained
 * section is applied only with `--contained` (after the ordinary confirmation)
 * and never deletes a ref.
 */

export type PruneSection = keyof PruneSections;

export interface AppliedRow {
  section: PruneSection;
  target: string;
  action: string;
}

export interface SkippedRow {
  section: PruneSection;
  target: string;
  reason: string;
}

export interface PruneData {
  sections: PruneSections;
  /** Whether the contained section was part of this apply. */
  contained_included: boolean;
  applied: AppliedRow[];
  skipped: SkippedRow[];
}

export interface PruneApplyOptions {
  contained: boolean;
}

export async function applyPrune(
  ctx: Context,
  plan: PrunePlan,
  options: PruneApplyOptions,
): Promise<VerbResult<PruneData>> {
  const { repo } = plan;
  const current = plan.survey.worktrees.find((w) => w.isCurrent);
  ctx.journal.begin({
    branch: current?.entry.branch ?? null,
    path: current?.entry.path ?? null,
    target: null, // The fleet, not one berth.
  });
  const data: PruneData = {
    sections: plan.sections,
    contained_included: options.contained,
    applied: [],
    skipped: [],
  };
  const steps: StepOutcome[] = [];
  const failures: string[] = [];
  const run = new PruneRun(ctx, data, steps, failures);

  await withFleetLock(repo.location.commonDir, "worktree prune", async () => {
    const live = await readPruneReading(ctx, repo);
    // Once a stop signal came, each row not yet started is skipped instead (`unlessStopped`).
    for (const row of plan.sections.stale) {
      await run.unlessStopped("stale", row.path, () => run.stale(row, live));
    }
    for (const row of plan.sections.landed) {
      if (row.kind !== "worktree") continue;
      await run.unlessStopped("landed", row.path, () => run.landedWorktree(row, live));
    }
    for (const row of plan.sections.landed) {
      if (row.kind !== "branch") continue;
      await run.unlessStopped("landed", row.branch, () => run.landedBranch(row, live));
    }
    for (const row of plan.sections.orphaned) {
      await run.unlessStopped("orphaned", row.path, () => run.orphan(row, live));
    }
    for (const row of plan.sections.contained) {
      if (options.contained) {
        await run.unlessStopped("contained", row.path, () => run.contained(row, live));
      } else
        run.skip("contained", row.path, "offer only: berth worktree prune --contained reclaims it");
    }
  });

  const result: VerbResult<PruneData> = {
    ok: failures.length === 0,
    verb: "worktree prune",
    data,
    plan: { steps: plan.steps },
    steps,
    hints: plan.hints,
  };
  if (isInterrupted(ctx)) {
    result.ok = false;
    const failed = failures.map((f) => `\n  - ${f}`).join("");
    result.error = {
      code: "partial",
      message: `Interrupted (Ctrl-C or a stop signal): ${data.applied.length} removal(s) done, the rest left in place.${failed}\nPrune again to finish.`,
      next: shellCommand([
        "berth",
        "worktree",
        "prune",
        ...(options.contained ? ["--contained"] : []),
      ]),
    };
  } else if (failures.length > 0) {
    result.error = {
      code: "teardown_failed",
      message: `Some removals failed and were left in place:\n${failures.map((f) => `  - ${f}`).join("\n")}\nFix what each names (a destroy command in berth.toml, say), then prune again.`,
      next: shellCommand(["berth", "worktree", "prune"]),
    };
  }
  return result;
}

class PruneRun {
  constructor(
    private readonly ctx: Context,
    private readonly data: PruneData,
    private readonly steps: StepOutcome[],
    private readonly failures: string[],
  ) {}

  done(section: PruneSection, target: string, action: string): void {
    this.data.applied.push({ section, target, action });
    this.steps.push({ step: action, target, outcome: "done" });
  }

  skip(section: PruneSection, target: string, reason: string): void {
    this.data.skipped.push({ section, target, reason });
    this.steps.push({ step: section, target, outcome: "skipped", reason });
  }

  /** Runs one row's removal, or skips the row once a stop signal came. */
  async unlessStopped(section: PruneSection, target: string, work: () => Promise<void>) {
    if (!isInterrupted(this.ctx)) return work();
    this.skip(section, target, "not started: berth was interrupted (Ctrl-C or a stop signal)");
  }

  fail(section: PruneSection, target: string, reason: string): void {
    this.data.skipped.push({ section, target, reason });
    this.steps.push({ step: section, target, outcome: "failed", reason });
    this.failures.push(`${target}: ${reason}`);
  }

  /** Destroy the stale berth's recorded resources, then remove that one registration. */
  async stale(row: StaleRow, live: PruneReading): Promise<void> {
    const now = live.sections.stale.find((r) => r.path === row.path);
    if (
      now === undefined ||
      now.admin_key !== row.admin_key ||
      now.id !== row.id ||
      now.head !== row.head
    ) {
      this.skip("stale", row.path, changedSincePlan());
      return;
    }
    const repo = live.repo;
    // Asked of the live reading: a branch made since the plan may hold the HEAD now.
    if (now.head_on_no_ref && now.head !== null) {
      const recovered = await this.recover("stale", repo.location.cwd, row.id, now.head, row.path);
      if (!recovered) return;
    }
    const listing = await readLedger(repo.location.commonDir, row.admin_key);
    const entries = listing.entries.filter((e) => e.id === row.id);
    const destroyed = await destroyLedgerEntries(repo, this.ctx, entries);
    for (const name of destroyed.destroyed)
      this.done("stale", `${row.id}/${name}`, "destroyed resource");
    if (destroyed.failure) {
      // The registration stays: it keeps owning the resources that were not destroyed.
      this.fail("stale", row.path, describeFailure(destroyed.failure));
      return;
    }
    await removeWorktree(repo.location.cwd, row.path, false);
    this.done("stale", row.path, "removed stale registration");
  }

  /** Teardown of a clean landed berth, then its branch by compare-and-swap, re-checked merged. */
  async landedWorktree(row: LandedWorktreeRow, live: PruneReading): Promise<void> {
    const now = live.sections.landed.find((r) => r.kind === "worktree" && r.path === row.path);
    if (now === undefined || now.tip !== row.tip) {
      this.skip("landed", row.path, changedSincePlan());
      return;
    }
    const cwd = live.repo.location.cwd;
    if (now.integrated && !(await this.recover("landed", cwd, row.id, row.tip, row.path))) return;
    const teardown = await applyTeardown(live.repo, this.ctx, plannedTeardownTarget(row), {
      force: false,
      requireClean: true,
      expectHead: row.tip,
      housekeeping: true,
    });
    this.steps.push(...teardown.steps);
    if (!teardown.ok) {
      const reason = teardown.failure?.reason ?? "teardown failed";
      if (teardown.failure?.stage === "changed" || teardown.failure?.stage === "kept") {
        this.skip(
          "landed",
          row.path,
          teardown.failure.stage === "changed" ? changedSincePlan(reason) : reason,
        );
      } else {
        this.fail("landed", row.path, reason);
      }
      return;
    }
    this.done("landed", row.path, "tore down landed berth");
    if (row.delete_branch !== null) {
      await this.deleteMergedBranch(row.delete_branch, row.tip, live, now.integrated);
    }
  }

  /**
   * Invariant 1 for integrated work (its commits are not on the trunk) and a
   * stale detached HEAD (its commit is on no ref): a recovery ref holds the
   * commit before anything goes; failing to write one stops this item.
   */
  private async recover(
    section: "landed" | "stale",
    cwd: string,
    id: string,
    commit: string,
    target: string,
  ): Promise<boolean> {
    const before = section === "stale" ? "pruning stale" : "pruning integrated";
    try {
      const ref = await writeRecoveryRef(cwd, id, commit, this.ctx.now(), before);
      this.done(section, ref, "wrote recovery ref");
      return true;
    } catch (error) {
      this.fail(section, target, `could not write a recovery ref: ${(error as Error).message}`);
      return false;
    }
  }

  async landedBranch(row: LandedBranchRow, live: PruneReading): Promise<void> {
    const now = live.sections.landed.find((r) => r.kind === "branch" && r.branch === row.branch);
    if (now === undefined || now.tip !== row.tip) {
      this.skip("landed", row.branch, changedSincePlan());
      return;
    }
    const prefix = live.repo.config.repository.branch_prefix;
    const id = row.branch.startsWith(prefix) ? row.branch.slice(prefix.length) : row.branch;
    const cwd = live.repo.location.cwd;
    if (now.integrated && !(await this.recover("landed", cwd, id, row.tip, row.branch))) return;
    await this.deleteMergedBranch(row.branch, row.tip, live, now.integrated);
  }

  /** Right before deleting: is the tip still on the live trunk? Then delete only if still at `tip`. */
  private async deleteMergedBranch(
    branch: string,
    tip: string,
    live: PruneReading,
    recovered: boolean,
  ): Promise<void> {
    const repo = live.repo;
    // An integrated branch's tip is held by the recovery ref just written, not by the trunk.
    const merged = recovered || (await onLiveTrunk(repo, live.survey.trunk, tip));
    if (!merged) {
      this.skip("landed", branch, changedSincePlan("no longer on the trunk"));
      return;
    }
    const fate = await deleteBranch(repo.location.cwd, repo.location.commonDir, branch, tip);
    switch (fate.fate) {
      case "deleted":
        this.done("landed", branch, "deleted landed branch");
        return;
      case "absent":
        this.skip("landed", branch, changedSincePlan("the branch is gone"));
        return;
      case "raced":
        this.skip("landed", branch, changedSincePlan("the branch moved"));
        return;
      case "failed":
        this.fail("landed", branch, `git could not delete the branch: ${fate.message}`);
        return;
    }
  }

  async orphan(row: OrphanRow, live: PruneReading): Promise<void> {
    const target = `${row.id}/${row.resource}`;
    if (!row.gc) {
      this.skip("orphaned", target, "gc = false: only an explicit teardown destroys it");
      return;
    }
    const still = live.sections.orphaned.some(
      (r) => r.admin_key === row.admin_key && r.id === row.id && r.resource === row.resource,
    );
    if (!still) {
      this.skip("orphaned", target, changedSincePlan());
      return;
    }
    const listing = await readLedger(live.repo.location.commonDir, row.admin_key);
    const entry = listing.entries.find((e) => e.id === row.id && e.resource === row.resource);
    if (entry === undefined) {
      this.skip("orphaned", target, changedSincePlan());
      return;
    }
    const destroyed = await destroyLedgerEntries(live.repo, this.ctx, [entry]);
    if (destroyed.failure) this.fail("orphaned", target, describeFailure(destroyed.failure));
    else this.done("orphaned", target, "destroyed orphaned resource");
  }

  async contained(row: ContainedRow, live: PruneReading): Promise<void> {
    const outcome = await reclaimContained(this.ctx, live.repo, row, live);
    if (outcome.teardown) this.steps.push(...outcome.teardown.steps);
    if (outcome.done) {
      this.done("contained", row.path, `reclaimed (branch ${row.branch} kept)`);
      return;
    }
    const stage = outcome.teardown?.failure?.stage;
    if (stage === undefined || stage === "changed" || stage === "kept") {
      this.skip("contained", row.path, outcome.reason);
    } else {
      this.fail("contained", row.path, outcome.reason);
    }
  }
}

/** Whether the apply would do anything beyond the offer. */
export function hasWork(sections: PruneSections, contained: boolean): boolean {
  return (
    sections.stale.length > 0 ||
    sections.landed.length > 0 ||
    sections.orphaned.some((r) => r.gc) ||
    (contained && sections.contained.length > 0)
  );
}

/** The landed rule's step 3 (fleet/landed.ts) asked of the trunk refs as they are now. */
async function onLiveTrunk(repo: Repository, trunk: Trunk, tip: string): Promise<boolean> {
  if (trunk.tip === null) return false;
  const cwd = repo.location.cwd;
  if (await isAncestor(cwd, tip, `refs/heads/${trunk.name}`)) return true;
  const remote = remoteTrunkRef(repo.config.remote.name, trunk.name);
  // The remote's trunk may never have been fetched: then it holds nothing.
  return remote !== null && (await isAncestor(cwd, tip, remote).catch(() => false));
}
