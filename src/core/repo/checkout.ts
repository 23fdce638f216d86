import { UserError } from "../../errors.js";
import { readHead } from "../../git/head.js";
import { readOperationInProgress } from "../../io/in-progress.js";
import { type ReadyMarker, readReadyMarker } from "../../io/ready-marker.js";
import { type CommandLine, commandSequence, shellCommand } from "../../text.js";
import { berthVariables } from "../berth/env.js";
import { portFor } from "../berth/identity.js";
import { operationWithArticle } from "../fleet/checkout-states.js";
import { deletedBranchRefusal } from "../lifecycle/reattach.js";
import type { Repository } from "./repository.js";
import { createTrunkCommand, describeMissingTrunk, type Trunk } from "./trunk.js";

/**
 * The checkout a verb acts on (gate, update): where it is, the branch it has
 * checked out, and the BERTH_* variables its project commands get.
 */

/** A checkout and its git admin dir (per-berth state lives under it). */
export interface CheckoutLocation {
  path: string;
  adminDir: string;
}

/** The checkout berth was run from; refuses in a bare repository's folder, which has none. */
export function currentCheckout(repo: Repository, verb: string): CheckoutLocation {
  const path = repo.location.toplevel;
  if (path === null) {
    throw new UserError(
      "precondition_failed",
      `berth ${verb} runs in a checkout, and ${repo.location.cwd} is a bare repository's folder: ` +
        `cd into a berth's working tree (berth status lists them), then run berth ${verb} there.`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  return { path, adminDir: repo.location.gitDir };
}

/**
 * Refuses a checkout in the middle of a merge, rebase, `git am`, cherry-pick
 * or revert (src/io/in-progress.ts decides that), naming it and the git
 * commands that continue or abort it: the verb must neither finish nor undo
 * someone's operation, and what it would prove or merge is half-done work.
 */
export function refuseOperationInProgress(
  location: CheckoutLocation,
  verb: string,
  why: string,
): void {
  const operation = readOperationInProgress(location.adminDir);
  if (operation === null) return;
  const abort = shellCommand(operation.abortArgs);
  const situation = `${location.path} has ${operationWithArticle(operation)} in progress (${operation.evidence}); ${why}.`;
  const again = shellCommand(["berth", ...verb.split(" ")]);
  if (operation.continueArgs === null) {
    throw new UserError("precondition_failed", `${situation} End it with ${abort}.`, {
      next: commandSequence(abort, again),
      data: { in_progress: operation.kind, continue: null, abort },
    });
  }
  const resume = shellCommand(operation.continueArgs);
  throw new UserError(
    "precondition_failed",
    `${situation} Finish it with ${resume}, or undo it with ${abort}.`,
    {
      next: commandSequence(resume, again),
      data: { in_progress: operation.kind, continue: resume, abort },
    },
  );
}

export interface BranchHead {
  branch: string;
  commit: string;
  tree: string;
}

/**
 * HEAD of the checkout, refusing a detached HEAD and a branch with no
 * commits. A berth whose own branch was deleted under it is unborn too; where
 * its HEAD log names the branch's last commit, the refusal says so and makes
 * the branch again (as status and accept do), rather than "commit something".
 */
export async function readBranchHead(
  repo: Repository,
  location: CheckoutLocation,
  verb: string,
  why: string,
): Promise<BranchHead> {
  const { path } = location;
  const head = await readHead(path);
  if (head.branch === null) {
    throw new UserError(
      "precondition_failed",
      `${path} has a detached HEAD; ${why}. Switch to a branch (git switch <branch>), then run berth ${verb}.`,
      { next: shellCommand(["git", "-C", path, "branch", "--list"]) },
    );
  }
  if (head.commit === null || head.tree === null) {
    const marker = await readCheckoutMarker(repo, location);
    const refusal =
      marker?.branch === head.branch
        ? deletedBranchRefusal(marker.id, path, location.adminDir, head.branch, {
            command: shellCommand(["berth", verb]),
            said: `, then run berth ${verb}`,
          })
        : null;
    if (refusal !== null) throw refusal;
    throw new UserError(
      "precondition_failed",
      `${head.branch} has no commits yet; commit something, then run berth ${verb}.`,
      { next: shellCommand(["git", "-C", path, "status"]) },
    );
  }
  return { branch: head.branch, commit: head.commit, tree: head.tree };
}

/**
 * The trunk's name and tip, refusing when there is none; `consequence` says
 * what that blocks. When only origin has the trunk branch, the way on is to
 * create it from there, whatever `next` the caller had in mind.
 */
export function requireTrunk(
  trunk: Trunk,
  consequence: string,
  next: CommandLine,
): { name: string; tip: string } {
  if (trunk.name !== null && trunk.tip !== null) return { name: trunk.name, tip: trunk.tip };
  throw new UserError("precondition_failed", `${describeMissingTrunk(trunk)}; ${consequence}.`, {
    next: createTrunkCommand(trunk) ?? next,
  });
}

/** What a project command may know about the checkout it runs in. */
export interface CheckoutFacts {
  path: string;
  branch: string;
  /** null for a checkout berth did not create (the main checkout, a hand-made worktree). */
  marker: Pick<ReadyMarker, "id"> | null;
}

/**
 * The BERTH_* variables for a command run in `checkout`. A checkout berth did
 * not create has no id, port or database name, so those are left out rather
 * than made up.
 */
export function checkoutVariables(
  repo: Repository,
  checkout: CheckoutFacts,
  trunk: string | null,
): Record<string, string> {
  if (checkout.marker !== null) {
    const { port_base, port_span } = repo.config.worktree;
    return berthVariables({
      id: checkout.marker.id,
      branch: checkout.branch,
      path: checkout.path,
      port: portFor(checkout.marker.id, port_base, port_span),
      trunk,
      repo: repo.mainPath,
    });
  }
  return {
    BERTH_BRANCH: checkout.branch,
    BERTH_PATH: checkout.path,
    BERTH_TRUNK: trunk ?? "",
    BERTH_REPO: repo.mainPath,
  };
}

/** The berth's ready marker; the main checkout never has one. */
export async function readCheckoutMarker(
  repo: Repository,
  location: CheckoutLocation,
): Promise<ReadyMarker | null> {
  return location.adminDir === repo.location.commonDir ? null : readReadyMarker(location.adminDir);
}
