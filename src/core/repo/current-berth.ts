import { UserError } from "../../errors.js";
import { shellCommand } from "../../text.js";
import { ownerOf } from "../berth/facts.js";
import type { ResourceOwner } from "../berth/resources.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import type { Repository } from "./repository.js";

export interface CurrentBerth {
  survey: FleetSurvey;
  worktree: WorktreeFacts;
  owner: ResourceOwner;
}

/** The berth berth runs in (verbs like `worktree setup` act on it), or a refusal saying where to go. */
export async function readCurrentBerth(repo: Repository, verb: string): Promise<CurrentBerth> {
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const worktree = survey.worktrees.find((w) => w.isCurrent);
  if (worktree === undefined || worktree.isMain) {
    throw new UserError(
      "precondition_failed",
      `berth ${verb} acts on the berth you are in, and this is ${worktree ? "the main checkout" : "not a checkout of this repository"}: cd into a berth (berth status lists them), then run berth ${verb} there.`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  const owner = ownerOf(repo, survey.trunk.name, worktree);
  if (owner === null) {
    throw new UserError(
      "precondition_failed",
      `${worktree.entry.path} has no berth ready marker: berth did not create it. Start a berth (berth start <name>) and work in the berth it creates.`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  return { survey, worktree, owner };
}
