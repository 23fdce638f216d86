import type { Context } from "../../context.js";
import { hasGrant } from "../../io/queue-grants.js";
import { type CommandLine, shellCommand } from "../../text.js";
import { brokenMend, isBrokenBerth } from "../fleet/mend-hints.js";
import { surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { reattachment } from "../lifecycle/reattach.js";
import { openRepository } from "../repo/repository.js";

/**
 * Where a harness session starts (spec section 12, `berth hook session-start`):
 * in a berth (then the hook runs its convergent setup), in the main checkout
 * (then the agent is told to start a berth), or in a checkout berth did not
 * make. Reads only.
 */

export type SessionPlace =
  | {
      kind: "berth";
      id: string;
      path: string;
      branch: string | null;
      /** A standing grant or `[acceptance].pre_authorized`: its accept lands once green. */
      mayLand: boolean;
      /** Off its own branch (detached, deleted, another one checked out): what is wrong and the command that mends it. */
      mend: string | null;
    }
  | { kind: "main"; path: string; trunk: string | null }
  | { kind: "other"; path: string; branch: string | null };

export async function readSessionPlace(ctx: Context): Promise<SessionPlace> {
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const here = survey.worktrees.find((w) => w.isCurrent);
  const path = here?.entry.path ?? repo.location.toplevel ?? repo.mainPath;
  if (here === undefined || here.isMain) {
    return { kind: "main", path: repo.mainPath, trunk: survey.trunk.name };
  }
  if (here.marker === null) return { kind: "other", path, branch: here.entry.branch };
  return {
    kind: "berth",
    id: here.marker.id,
    path,
    branch: here.entry.branch ?? here.marker.branch,
    mayLand:
      repo.config.acceptance.pre_authorized || hasGrant(repo.location.commonDir, here.marker.id),
    mend: await offItsBranch(here, survey.branches),
  };
}

/**
 * A berth off its own branch, as status shows it (`detached`, `broken`), and
 * the command that puts it back: an agent told only "commit your work here"
 * would commit where gate and accept refuse it (an unborn branch makes a
 * root commit the trunk shares nothing with).
 */
async function offItsBranch(
  w: WorktreeFacts,
  branches: ReadonlyMap<string, string>,
): Promise<string | null> {
  if (w.marker === null) return null;
  if (w.entry.detached && w.entry.head !== null) {
    const back = await reattachment(w.entry.path, w.entry.head, w.marker.branch);
    return `its HEAD is detached from its branch ${w.marker.branch}${back.detail ? ` (${back.detail})` : ""}: ${back.command}`;
  }
  return isBrokenBerth(w, branches) ? brokenMend(w, branches) : null;
}

/** The agent's workflow in a berth, as the commands it runs (the same text the AGENTS.md section gives). */
export function berthWorkflow(id: string): CommandLine[] {
  return [
    shellCommand(["berth", "gate"]),
    shellCommand(["berth", "accept"]),
    shellCommand(["berth", "await", "--landed", id]),
  ];
}
