import { UserError } from "../../errors.js";
import { shellCommand } from "../../text.js";
import { nearestLiveContainer } from "../fleet/containment.js";
import type { FleetSurvey, WorktreeFacts } from "../fleet/survey.js";
import { resolveTarget } from "../repo/berth-target.js";
import type { AwaitCondition } from "./request.js";

/**
 * The await target: the one place `--green <t>` and `--landed <t>` become
 * the branch to follow, refused at call start when it can never answer. In
 * order: a checkout by the shared resolver, else a branch no checkout holds
 * (as named, or with the branch prefix); never both, never detached, never
 * the trunk, never a branch without commits. A green target with no
 * checkout is refused with a pointer to the stage that carries its commits.
 */

/** The branch an await follows, and the checkout holding it (null when none does). */
export interface AwaitTarget {
  branch: string;
  /** The tip at call start. */
  tip: string;
  worktree: WorktreeFacts | null;
}

/**
 * `<t>` as a berth id, path or branch. A checkout is found by the shared
 * resolver; a branch no checkout holds is found by name (as given, or with
 * the branch prefix: a reclaimed berth's id). Never guesses between them.
 */
export function resolveAwaitTarget(
  survey: FleetSurvey,
  cwd: string,
  argument: string,
  condition: Exclude<AwaitCondition, "trunk-moved">,
): AwaitTarget {
  const verb = `await --${condition}`;
  const prefix = survey.repo.config.repository.branch_prefix;
  const name = argument.replace(/^refs\/heads\//, "");
  const held = new Set(survey.worktrees.flatMap((w) => (w.entry.branch ? [w.entry.branch] : [])));
  const unheld = [...new Set([name, `${prefix}${name}`])].filter(
    (b) => survey.branches.has(b) && !held.has(b),
  );

  let worktree: WorktreeFacts | null = null;
  try {
    worktree = resolveTarget(survey, cwd, argument, verb);
  } catch (error) {
    if (!(error instanceof UserError && error.code === "unknown_target")) throw error;
    if (unheld.length === 0) {
      throw new UserError(
        "unknown_target",
        `No berth, worktree or branch of this repository is "${argument}" (by id, path or branch).`,
        { next: error.next, data: error.data },
      );
    }
  }
  const candidates = [...(worktree?.entry.branch ? [worktree.entry.branch] : []), ...unheld];
  if (candidates.length > 1 || (worktree !== null && unheld.length > 0)) {
    throw new UserError(
      "ambiguous_target",
      `"${argument}" matches ${candidates.length} branches: ${candidates.join(", ")}${
        worktree
          ? ` (${worktree.entry.branch ?? "detached"} is checked out at ${worktree.entry.path})`
          : ""
      }. Name the full branch: berth ${verb} <branch>.`,
      { next: shellCommand(["berth", "status"]), data: { candidates } },
    );
  }

  const branch = worktree === null ? (unheld[0] as string) : worktree.entry.branch;
  if (branch === null || worktree?.entry.detached) {
    throw new UserError(
      "precondition_failed",
      `${worktree?.entry.path ?? argument} has a detached HEAD; await follows a branch (berth ${verb} <branch>).`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  if (branch === survey.trunk.name) {
    throw new UserError(
      "precondition_failed",
      `${branch} is the trunk; --${condition} follows a berth's branch onto the trunk.`,
      { next: shellCommand(["berth", "await", "--trunk-moved"]) },
    );
  }
  const tip = survey.branches.get(branch) ?? worktree?.entry.head ?? null;
  if (tip === null) {
    throw new UserError("precondition_failed", `${branch} has no commits yet.`, {
      next: shellCommand(["berth", "status"]),
    });
  }
  // A registration whose folder is gone holds the branch in name only.
  const live = worktree !== null && !worktree.entry.prunable ? worktree : null;
  return { branch, tip, worktree: live };
}

/**
 * A branch no checkout holds has no receipt and can never turn green (its
 * receipt died with its checkout, ADR 0225). Point at the stage that carries
 * its commits, and at --landed for the arrival question.
 */
export function refuseGreenWithoutCheckout(survey: FleetSurvey, target: AwaitTarget): never {
  const container = nearestLiveContainer(survey, target.branch);
  const why =
    `No checkout holds ${target.branch} (never started, dropped, or reclaimed as a contained stage), ` +
    "so it has no gate receipt and can never turn green.";
  const pointer =
    container === null
      ? " No branch with a checkout contains its commits."
      : ` Its commits travel inside ${container.container} (${container.container_ahead} commit(s) further), ` +
        `which has a checkout: await --green ${container.container} instead.`;
  throw new UserError(
    "unknown_target",
    `${why}${pointer} To wait for its commits to reach the trunk, use --landed ${target.branch}.`,
    {
      next: shellCommand(
        container === null
          ? ["berth", "await", "--landed", target.branch]
          : ["berth", "await", "--green", container.container],
      ),

      data: {
        branch: target.branch,
        tip: target.tip,
        contained_by: container?.container ?? null,
        container_tip: container?.container_tip ?? null,
        container_ahead: container?.container_ahead ?? null,
      },
    },
  );
}
