import { join } from "node:path";
import { listWorktrees } from "../../git/worktrees.js";
import { type BriefRecord, type ParkedState, readBriefRecord } from "../../io/briefs.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { worktreeRootFor } from "../../io/paths.js";
import { type BriefChange, mergeRecord } from "../berth/briefs.js";
import { type MintedId, portFor, type RandomHex } from "../berth/identity.js";
import type { ResolvedBase } from "../repo/from-ref.js";
import type { Repository } from "../repo/repository.js";
import { mintFreeId, type TakenIdentities } from "./start-identity.js";

/**
 * `berth start --from <parked branch>` resumes a parked berth (spec section 8):
 * the branch it names, the record it carries (title, brief, the parked id),
 * and the id it takes back when its folder and port are still free.
 */

/** A `--from` that names a local branch: its record, and whether a checkout holds it. */
export interface BaseBranch {
  branch: string;
  record: BriefRecord | null;
  checkedOut: boolean;
}

export async function readBaseBranch(
  repo: Repository,
  base: ResolvedBase,
): Promise<BaseBranch | null> {
  if (base.ref === null || !base.ref.startsWith("refs/heads/")) return null;
  const branch = base.ref.slice("refs/heads/".length);
  const record = readBriefRecord(repo.location.commonDir, branch);
  if (record === null) return { branch, record, checkedOut: false };
  const worktrees = await listWorktrees(repo.location.cwd);
  return { branch, record, checkedOut: worktrees.some((w) => w.branch === branch) };
}

/**
 * The record the started berth carries: what `--title`/`--brief` give, over
 * what the branch it resumes (or a branch with no checkout it starts from,
 * the way back for kept refs) carried. A berth started from a live branch (a
 * train's next stage) starts with only what it was given.
 */
export function recordFor(
  baseBranch: BaseBranch | null,
  resume: BaseBranch | null,
  change: BriefChange,
  now: Date,
): BriefRecord | null {
  const carried = baseBranch !== null && !baseBranch.checkedOut ? baseBranch.record : null;
  // The branch is named once the id is known (describeIdentity); the parking ends here.
  return mergeRecord("", resume?.record ?? carried, { ...change, parked: null }, now);
}

/** A resumed berth takes its old id back when its folder and port are free; else a fresh one. */
export function resumedId(
  repo: Repository,
  taken: TakenIdentities,
  parked: ParkedState,
  name: string | undefined,
  random: RandomHex,
): MintedId {
  if (isFreeForResume(repo, taken, parked.id, null)) return { id: parked.id, nameNote: null };
  return mintFreeId(repo, taken, name ?? parked.id.replace(/-[0-9a-f]{6}$/, ""), random);
}

/** Its folder and port are free, and its branch name is free or the branch being resumed. */
export function isFreeForResume(
  repo: Repository,
  taken: TakenIdentities,
  id: string,
  resumedBranch: string | null,
): boolean {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const branch = `${repo.config.repository.branch_prefix}${id}`;
  const { port_base, port_span } = repo.config.worktree;
  return (
    (branch === resumedBranch || resumedBranch === null || !taken.branches.has(branch)) &&
    !taken.ports.has(portFor(id, port_base, port_span)) &&
    !pathExistsOrBroken(join(root, id))
  );
}
