import { countLeftRight } from "../../git/ancestry.js";
import { readRefTips } from "../../git/refs.js";
import { shellCommand } from "../../text.js";
import type { Repository } from "../repo/repository.js";
import { remoteTrunkRef } from "./integration.js";
import type { FleetSurvey } from "./survey.js";

/**
 * With a `[remote]`, the remote's trunk is the trunk (spec section 13), yet
 * `ahead`/`behind` count against the local one (decision 0072) and berth never
 * moves the local trunk for another machine's landing. When the two differ,
 * status says so and how to bring them together; null when they agree.
 * `fetchedNow`: the remote was fetched after the survey read its refs.
 */
export async function remoteTrunkHint(
  repo: Repository,
  survey: Pick<FleetSurvey, "trunk" | "remoteBranches" | "worktrees" | "ancestry">,
  fetchedNow: boolean,
): Promise<string | null> {
  const { name, tip } = survey.trunk;
  const remote = repo.config.remote.name;
  const tracking = remoteTrunkRef(remote, name);
  if (remote === null || tracking === null || name === null || tip === null) return null;
  const cwd = repo.location.cwd;
  const surveyed = survey.remoteBranches.get(name) ?? null;
  const remoteTip = fetchedNow
    ? ((await readRefTips(cwd, [tracking])).get(tracking) ?? null)
    : surveyed;
  if (remoteTip === null || remoteTip === tip) return null;
  // Both tips are roots of the survey's graph, which counts them for free; a tip
  // --remote's fetch brought after the survey costs one git process.
  const { left: localOnly, right: remoteOnly } =
    remoteTip === surveyed
      ? {
          left: survey.ancestry.countExclusive(tip, remoteTip),
          right: survey.ancestry.countExclusive(remoteTip, tip),
        }
      : await countLeftRight(cwd, tip, remoteTip);
  const theirs = `${remote}'s ${name}`;
  if (remoteOnly > 0 && localOnly > 0) {
    return (
      `${name} here and ${theirs}, as last fetched, have diverged (${localOnly} and ${remoteOnly} commit(s) ` +
      `of their own): accept refuses until they are brought together; ` +
      shellCommand(["git", "-C", repo.mainPath, "pull", remote, name])
    );
  }
  if (remoteOnly === 0) return null;
  const main = survey.worktrees.find((w) => w.isMain);
  const bringUp =
    main?.entry.branch === name
      ? shellCommand(["git", "-C", repo.mainPath, "merge", "--ff-only", `${remote}/${name}`])
      : shellCommand(["git", "-C", repo.mainPath, "fetch", ".", `${tracking}:refs/heads/${name}`]);
  return (
    `${theirs}, as last fetched, is ${remoteOnly} commit(s) ahead of ${name} here: berth start and ` +
    `gate build on it, but ahead/behind count against ${name}; bring ${name} up to date: ${bringUp}`
  );
}
