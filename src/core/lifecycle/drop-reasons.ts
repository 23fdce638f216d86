import { listCommitsNotIn } from "../../git/commits.js";
import { type HiddenChange, readHiddenChanges, revealCommand } from "../../git/hidden-changes.js";
import type { CommitSubject } from "../../git/parse.js";
import { readWorktreeStatus } from "../../git/status.js";
import { fileStamps } from "../../io/fs.js";
import { readOperationInProgress } from "../../io/in-progress.js";
import { type CommandLine, shortOid, visibleControls } from "../../text.js";
import { describeOperation } from "../fleet/checkout-states.js";
import type { FleetSurvey, WorktreeFacts } from "../fleet/survey.js";
import type { Repository } from "../repo/repository.js";
import { describeNestedWork, nestedWorkAtRisk } from "./nested-work.js";

/** What a drop would discard, and so needs `--force` for (spec section 5). */

/** Why a drop needs `--force`. */
export type ForceReason =
  | {
      kind: "uncommitted";
      count: number;
      files: string[];
      /** Of those, the ones `git status` does not show (assume-unchanged, skip-worktree). */
      hidden: string[];
      /** The command that lets git see the hidden ones again; null when none are. */
      reveal: CommandLine | null;
    }
  | {
      kind: "unlanded";
      count: number;
      commits: CommitSubject[];
      /** Other local branches that hold the tip too (its commits survive there). */
      also_on: string[];
    }
  | { kind: "in_flight"; detail: string }
  /** Commits only the checkout's submodules or embedded repositories hold (./nested-work.ts). */
  | { kind: "nested_commits"; detail: string }
  | { kind: "unknown"; detail: string };

const NAMED_FILES = 10;
const NAMED_COMMITS = 10;

/** What a drop would discard: the reasons, and every uncommitted path (null: unreadable). */
export interface ForceReading {
  reasons: ForceReason[];
  changedPaths: string[] | null;
  /** Each changed path's stamp as it was read (src/io/fs.ts `fileStamps`). */
  stamps: ReadonlyMap<string, string | null>;
}

/**
 * `adminDir`: the checkout's folder under `<common>/worktrees/`. `orphanedTip`:
 * the last commit of a branch deleted under the checkout, from its HEAD log.
 */
export async function forceReasons(
  repo: Repository,
  survey: FleetSurvey,
  worktree: WorktreeFacts,
  adminDir: string,
  orphanedTip: string | null,
): Promise<ForceReading> {
  const { entry } = worktree;
  const trunkTip = survey.trunk.tip;
  const reasons: ForceReason[] = [];
  let changedPaths: string[] | null = [];
  let stamps = new Map<string, string | null>();
  if (!entry.prunable) {
    const [status, hidden] = await Promise.all([
      readWorktreeStatus(entry.path).catch(() => null),
      readHiddenChanges(entry.path).catch(() => null),
    ]);
    if (status === null || hidden === null) {
      changedPaths = null;
      reasons.push({ kind: "unknown", detail: "its working tree cannot be read" });
    } else if (status.changedFiles + hidden.length > 0) {
      changedPaths = [...hidden.map((h) => h.path), ...status.paths];
      stamps = fileStamps(entry.path, changedPaths);
      reasons.push(uncommitted(entry.path, status.changedFiles, status.paths, hidden));
    }
  }
  // A merge, am or cherry-pick stopped half-way: its state lives in the admin dir (decision 0071).
  const operation = entry.prunable ? null : readOperationInProgress(adminDir);
  if (operation !== null) {
    reasons.push({ kind: "in_flight", detail: describeOperation(operation, entry.path) });
  }
  // Also when the folder is gone: the submodules' repositories are in the admin dir.
  const nested = await nestedWorkAtRisk(entry.path, adminDir);
  if (nested.length > 0)
    reasons.push({ kind: "nested_commits", detail: describeNestedWork(nested) });
  const head = entry.head;
  if (head === null) {
    if (orphanedTip !== null) {
      reasons.push({
        kind: "unknown",
        detail: `its branch ${entry.branch} was deleted under it: its last commit, ${shortOid(orphanedTip)}, is only in the checkout's HEAD log`,
      });
    }
    return { reasons, changedPaths, stamps };
  }
  if (trunkTip === null) {
    reasons.push({
      kind: "unknown",
      detail: "the trunk is unknown, so whether its commits are on it cannot be told",
    });
    return { reasons, changedPaths, stamps };
  }
  const ahead = worktree.ahead;
  if (ahead === null) {
    reasons.push({ kind: "unknown", detail: "its commits cannot be compared with the trunk" });
  } else if (ahead > 0) {
    const commits = await listCommitsNotIn(repo.mainPath, head, trunkTip, NAMED_COMMITS);
    // In memory from the survey's graph: no git process per branch.
    const alsoOn = [...survey.branches]
      .filter(([name, tip]) => name !== entry.branch && survey.ancestry.isAncestor(head, tip))
      .map(([name]) => name);
    reasons.push({ kind: "unlanded", count: ahead, commits, also_on: alsoOn });
  }
  return { reasons, changedPaths, stamps };
}

/** git status's changes and the hidden ones, the hidden named first: nothing else shows them. */
function uncommitted(
  path: string,
  changedFiles: number,
  paths: readonly string[],
  hidden: readonly HiddenChange[],
): ForceReason {
  const shown = hidden.map((h) => h.path);
  return {
    kind: "uncommitted",
    count: changedFiles + hidden.length,
    files: [...shown, ...paths].slice(0, NAMED_FILES),
    hidden: shown.slice(0, NAMED_FILES),
    reveal: hidden.length > 0 ? revealCommand(path, hidden) : null,
  };
}

export function describeReason(reason: ForceReason): string {
  switch (reason.kind) {
    case "in_flight":
    case "nested_commits":
      return reason.detail;
    case "uncommitted": {
      const more =
        reason.count > reason.files.length
          ? `, and ${reason.count - reason.files.length} more`
          : "";
      const hidden =
        reason.reveal === null
          ? ""
          : ` (git status does not show ${reason.hidden.join(", ")}: flagged assume-unchanged or skip-worktree; ${reason.reveal} shows them again)`;
      return `${reason.count} uncommitted change(s): ${reason.files.map((f) => visibleControls(f, false)).join(", ")}${more}${hidden}`;
    }
    case "unlanded": {
      const named = reason.commits
        .map((c) => `${shortOid(c.oid)} ${visibleControls(c.subject)}`)
        .join("; ");
      const more =
        reason.count > reason.commits.length
          ? `; and ${reason.count - reason.commits.length} more`
          : "";
      const also =
        reason.also_on.length > 0
          ? ` (also on ${reason.also_on.join(", ")}, which keeps them)`
          : "";
      return `${reason.count} commit(s) not on the trunk: ${named}${more}${also}`;
    }
    case "unknown":
      return reason.detail;
  }
}
