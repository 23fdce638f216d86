import type { RefEntry, WorktreeEntry } from "../../git/parse.js";
import { listRefs } from "../../git/refs.js";
import type { GitRunner } from "../../git/run.js";
import { listWorktrees } from "../../git/worktrees.js";
import { TRUNK_REF_PREFIXES } from "../repo/trunk.js";

/** `git worktree list` and the branches (for-each-ref): a survey's first two git processes. */
export type FleetLists = [WorktreeEntry[], RefEntry[]];

/**
 * Starts the worktree list and the branches from any folder of the
 * repository: neither needs discovery's answers, so status runs them beside
 * discovery's rev-parse, not after it (status-reads.ts). A failure is thrown
 * where the survey awaits them, after discovery's own refusal (e.g. "not a
 * repository") has had its turn.
 */
export function startFleetLists(cwd: string, run?: GitRunner): Promise<FleetLists> {
  const lists = Promise.all([listWorktrees(cwd, run), listRefs(cwd, TRUNK_REF_PREFIXES, run)]);
  void lists.catch(() => undefined);
  return lists;
}
