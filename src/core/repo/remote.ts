import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { readRefTips } from "../../git/refs.js";
import { fetchRefspecs } from "../../git/remote.js";
import { shellCommand } from "../../text.js";
import { remoteTrunkRef } from "../fleet/integration.js";
import type { Repository } from "./repository.js";

/**
 * The fleet's `[remote]` (spec section 13, docs/decisions/0051): the one place
 * berth fetches from it. Nothing here runs without `[remote].name`: a fleet
 * without one never touches the network.
 */

/** The refusal for a remote that cannot be reached: names the remote, changes nothing. */
export function remoteFailed(remote: string, message: string, what: string): UserError {
  return new UserError(
    "remote_failed",
    `remote ${remote} could not be reached (${message}); ${what}.`,
    { next: shellCommand(["git", "fetch", remote]) },
  );
}

/**
 * Fetches the remote's trunk into `refs/remotes/<remote>/<trunk>` and returns
 * the commit to treat as the trunk tip: the remote's, unless the local trunk
 * is ahead of it or beside it (then the local one, as before). null without a remote.
 */
export async function fetchRemoteTrunk(
  repo: Repository,
  trunk: string,
  localTip: string | null,
  what: string,
  /**
   * Refuse a local trunk that has diverged from the remote's (each has commits the other
   * lacks) instead of keeping it: a landing built on it could never fast-forward the
   * remote's, and every round would lose the lease as if the remote kept moving.
   */
  options: { refuseDiverged?: boolean } = {},
): Promise<{ ref: string; tip: string } | null> {
  const remote = repo.config.remote.name;
  const tracking = remoteTrunkRef(remote, trunk);
  if (remote === null || tracking === null) return null;
  const cwd = repo.location.cwd;
  const fetched = await fetchRefspecs(cwd, remote, [`+refs/heads/${trunk}:${tracking}`]);
  if (fetched.fate === "missing") throw noRemoteTrunk(repo, remote, trunk, what);
  if (fetched.fate === "unreachable") throw remoteFailed(remote, fetched.message, what);
  const tip = (await readRefTips(cwd, [tracking])).get(tracking) ?? null;
  if (tip === null || tip === localTip) return null;
  if (localTip !== null && !(await isAncestor(cwd, localTip, tip))) {
    if (options.refuseDiverged === true && !(await isAncestor(cwd, tip, localTip))) {
      throw divergedTrunk(repo, remote, trunk, tracking);
    }
    return null;
  }
  return { ref: tracking, tip };
}

/**
 * The remote's trunk as last fetched when it is ahead of the local trunk, else
 * null: the tip a branch must contain to land by fast-forward (what
 * fetchRemoteTrunk would build on), read from local refs without a fetch.
 */
export async function fetchedRemoteTrunkAhead(
  repo: Repository,
  trunk: string,
  localTip: string,
): Promise<string | null> {
  const tracking = remoteTrunkRef(repo.config.remote.name, trunk);
  if (tracking === null) return null;
  const cwd = repo.location.cwd;
  const tip = (await readRefTips(cwd, [tracking])).get(tracking) ?? null;
  if (tip === null || tip === localTip) return null;
  return (await isAncestor(cwd, localTip, tip)) ? tip : null;
}

/** The remote answered but has no trunk (a fresh one): nothing there to land on or merge from yet. */
function noRemoteTrunk(repo: Repository, remote: string, trunk: string, what: string): UserError {
  return new UserError(
    "precondition_failed",
    `${remote} has no ${trunk} yet: berth lands on ${remote}'s ${trunk} and merges from it, ` +
      `so it must exist there first; push this ${trunk} to start it; ${what}.`,
    { next: shellCommand(["git", "-C", repo.mainPath, "push", remote, trunk]) },
  );
}

function divergedTrunk(
  repo: Repository,
  remote: string,
  trunk: string,
  tracking: string,
): UserError {
  return new UserError(
    "precondition_failed",
    `${trunk} here and ${remote}'s ${trunk} have diverged: each has commits the other lacks ` +
      `(git log --oneline --left-right ${trunk}...${tracking.replace(/^refs\/remotes\//, "")} lists them). ` +
      `berth lands on ${remote}'s ${trunk}, which a landing built on this ${trunk} could never fast-forward; ` +
      `bring the two together in the main checkout and push, then accept again. Nothing was landed.`,
    { next: shellCommand(["git", "-C", repo.mainPath, "pull", remote, trunk]) },
  );
}
