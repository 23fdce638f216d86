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
): Promise<{ ref: string; tip: string } | null> {
  const remote = repo.config.remote.name;
  const tracking = remoteTrunkRef(remote, trunk);
  if (remote === null || tracking === null) return null;
  const cwd = repo.location.cwd;
  const fetched = await fetchRefspecs(cwd, remote, [`+refs/heads/${trunk}:${tracking}`]);
  if (fetched.fate === "unreachable") throw remoteFailed(remote, fetched.message, what);
  const tip = (await readRefTips(cwd, [tracking])).get(tracking) ?? null;
  if (tip === null || tip === localTip) return null;
  if (localTip !== null && !(await isAncestor(cwd, localTip, tip))) return null;
  return { ref: tracking, tip };
}
