import { environmentFailure } from "../errors.js";
import { tooOldGitFailure } from "../git/version.js";

/**
 * A thrown failure where the machine, not berth, is at fault (a full disk, a
 * read-only file system, a git older than berth needs), as the refusal that
 * says so; anything else as it was thrown, which the runner calls a bug.
 */
export async function machineFailure(thrown: unknown): Promise<unknown> {
  return environmentFailure(thrown) ?? (await tooOldGitFailure(thrown)) ?? thrown;
}
