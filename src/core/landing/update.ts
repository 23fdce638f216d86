import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { isAncestor, mergeBase } from "../../git/ancestry.js";
import { readHead } from "../../git/head.js";
import {
  changedPathsBetween,
  changedPathsSinceFork,
  countCommitsBetween,
} from "../../git/history.js";
import {
  abortMerge,
  isMerging,
  listConflictedPaths,
  mergeCommit,
  mergedTree,
} from "../../git/merge.js";
import type { RefEntry } from "../../git/parse.js";
import { listRefs } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { writeReadyMarker } from "../../io/ready-marker.js";
import {
  appliedResult,
  type PlanApplyResult,
  type PlanStep,
  plannedResult,
  type ResultError,
  type StepOutcome,
} from "../../result.js";
import { commandSequence, shellCommand, shortOid } from "../../text.js";
import { lastLines } from "../berth/project-command.js";
import { runCommandsInOrder } from "../berth/setup-steps.js";
import {
  type CheckoutFacts,
  checkoutVariables,
  currentCheckout,
  readBranchHead,
  readCheckoutMarker,
  refuseOperationInProgress,
  requireTrunk,
} from "../repo/checkout.js";
import { type ResolvedBase, resolveBase, uncommittedAtFrom } from "../repo/from-ref.js";
import { fetchRemoteTrunk } from "../repo/remote.js";
import { openRepository, type Repository } from "../repo/repository.js";
import { detectTrunk, type Trunk } from "../repo/trunk.js";
import { untrackedFilesInTheWay } from "./files-in-the-way.js";

/**
 * `berth update`: merge the trunk (by name, its tip now) or `--from <ref>`
 * into the current berth's branch, then run `[worktree.setup].ensure`, which
 * runs even when there was nothing to merge. A conflicted merge is aborted
 * and verified undone, and the conflicted files are listed.
 *
 * Refused up front, by the dry run and the real run alike, touching nothing:
 * a merge, rebase, cherry-pick or revert already in progress (the verb must
 * neither abort nor finish it); tracked changes; the trunk checked out here;
 * a source whose history is unrelated to the branch's; and a merge that would
 * overwrite untracked or ignored files (git would replace ignored ones).
 */

export interface UpdateOptions {
  from?: string | undefined;
  dryRun?: boolean;
  /**
   * The dry run a person confirmed (the desk's `u`): the merge happens only
   * if the source and the berth's HEAD are still where that plan found them.
   */
  confirmed?: Pick<UpdateData, "from_tip" | "head_before"> | undefined;
}

export interface EnsureRun {
  command: string;
  ok: boolean;
  exit_code: number | null;
  duration_ms: number;
  /** Last lines of its output when it failed. */
  tail: string | null;
}

export interface UpdateData {
  path: string;
  branch: string;
  /** What was merged, as named (the trunk's name by default). */
  merged_from: string;
  from_tip: string;
  head_before: string;
  /** HEAD after the merge (equal to head_before when up to date, or in a dry run). */
  head: string;
  up_to_date: boolean;
  fast_forward: boolean;
  /** Commits brought in: reachable from from_tip, not from head_before. */
  commits: number;
  /** Files the merge changed in this branch (in a dry run: files changed on the source since the fork). */
  files: string[];
  ensure: EnsureRun[];
}

export async function runUpdate(
  ctx: Context,
  options: UpdateOptions = {},
): Promise<PlanApplyResult<UpdateData>> {
  const repo = await openRepository(ctx);
  const location = currentCheckout(repo, "update");
  const { path } = location;
  refuseOperationInProgress(location, "update", "berth update would have to abort it or mix it in");
  const [head, status, refs] = await Promise.all([
    readBranchHead(repo, location, "update", "berth update merges into a branch"),
    readWorktreeStatus(path),
    listRefs(repo.location.cwd, ["refs/heads", "refs/tags", "refs/remotes"]),
  ]);
  if (status.trackedChanges > 0) {
    throw new UserError(
      "precondition_failed",
      `${path} has ${status.trackedChanges} uncommitted change(s) to tracked files; a merge could mix them in. ` +
        "(Untracked files are fine.) Commit or stash them, then run berth update.",
      {
        next: commandSequence(
          shellCommand(["git", "-C", path, "stash"]),
          shellCommand(["berth", "update"]),
        ),
      },
    );
  }
  const trunk = detectTrunk(repo.config, refs);
  if (trunk.name !== null && head.branch === trunk.name) {
    // Merging here would move the trunk, which only accept may do, to a commit no gate proved.
    throw new UserError(
      "precondition_failed",
      `${path} has the trunk (${trunk.name}) checked out; berth update merges into a berth, ` +
        "and only berth accept moves the trunk. To combine work, start a berth " +
        "(berth start <name> --from <ref>), then berth accept it.",
      { next: shellCommand(["berth", "status"]) },
    );
  }
  // With a [remote], its trunk is the trunk: fetched first, merged when it is ahead of ours.
  const remoteTrunk =
    options.from === undefined && trunk.name !== null
      ? await fetchRemoteTrunk(repo, trunk.name, trunk.tip, "nothing was merged")
      : null;
  const source =
    remoteTrunk === null
      ? await chooseSource(repo, path, refs, trunk, options.from)
      : { name: remoteTrunk.ref.slice(13), ref: remoteTrunk.ref, commit: remoteTrunk.tip };
  const branch = head.branch;
  const headBefore = head.commit;
  const hints: string[] = [];
  const leftBehind =
    options.from === undefined ? null : await uncommittedAtFrom(path, source, "update");
  if (leftBehind !== null) hints.push(leftBehind);

  if ((await mergeBase(path, headBefore, source.commit)) === null) {
    throw unrelatedHistoriesRefusal(path, branch, source);
  }
  const commits = await countCommitsBetween(path, headBefore, source.commit);
  const upToDate = commits === 0;
  const fastForward = !upToDate && (await isAncestor(path, headBefore, source.commit));
  if (!upToDate) {
    const merged = await mergedTree(path, headBefore, source.commit);
    const inTheWay = await untrackedFilesInTheWay(path, headBefore, merged.tree);
    if (inTheWay.length > 0) throw inTheWayRefusal(path, branch, source, inTheWay);
  }
  const ensureCommands = repo.config.worktree.setup.ensure;
  const planSteps: PlanStep[] = [
    {
      step: "merge",
      target: branch,
      detail: upToDate
        ? `already up to date with ${source.name} (${shortOid(source.commit)})`
        : `${commits} commit(s) from ${source.name} (${shortOid(source.commit)})${fastForward ? ", fast-forward" : ""}`,
    },
    ...ensureCommands.map((command) => ({ step: "run ensure", target: command })),
  ];
  const data: UpdateData = {
    path,
    branch,
    merged_from: source.name,
    from_tip: source.commit,
    head_before: headBefore,
    head: headBefore,
    up_to_date: upToDate,
    fast_forward: fastForward,
    commits,
    files: [],
    ensure: [],
  };
  if (options.dryRun) {
    data.files = upToDate ? [] : await changedPathsSinceFork(path, headBefore, source.commit);
    return plannedResult("update", data, planSteps, { hints });
  }

  const confirmed = options.confirmed;
  if (
    confirmed !== undefined &&
    (confirmed.from_tip !== source.commit || confirmed.head_before !== headBefore)
  ) {
    const moved =
      confirmed.from_tip !== source.commit
        ? `${source.name} is at ${shortOid(source.commit)}, not ${shortOid(confirmed.from_tip)}`
        : `${branch} is at ${shortOid(headBefore)}, not ${shortOid(confirmed.head_before)}`;
    throw new UserError(
      "precondition_failed",
      `changed since the plan: ${moved}; nothing was merged. Update again to see the new plan.`,
      { next: shellCommand(["berth", "update"]), data },
    );
  }
  ctx.journal.begin({ branch, path });
  const steps: StepOutcome[] = [];
  if (upToDate) {
    steps.push({ step: "merge", target: branch, outcome: "skipped", reason: "already up to date" });
  } else {
    await mergeOrRestore(path, branch, headBefore, source);
    const after = await readHead(path);
    data.head = after.commit ?? headBefore;
    data.files = await changedPathsBetween(path, headBefore, data.head);
    steps.push({ step: "merge", target: branch, outcome: "done" });
  }

  let marker = await readCheckoutMarker(repo, location);
  if (marker !== null && fastForward && marker.from_tip === headBefore) {
    // A berth with no commits of its own, moved up to the trunk: it is fresh
    // again at the new base, not landed (docs/decisions/0003).
    marker = { ...marker, from_tip: data.head };
    await writeReadyMarker(location.adminDir, marker);
  }
  const ensure = await runSetupEnsure(ctx, repo, { path, branch, marker }, trunk.name);
  data.ensure = ensure.runs;
  for (const run of data.ensure) {
    steps.push({
      step: "run ensure",
      target: run.command,
      outcome: run.ok ? "done" : "failed",
      ...(run.ok ? {} : { reason: `exit ${run.exit_code ?? "by signal"}` }),
    });
  }
  const failed = data.ensure.find((run) => !run.ok);
  const what = upToDate ? `${branch} was already up to date` : `merged ${source.name}`;
  const next = shellCommand(["berth", "worktree", "setup"]);
  const error: ResultError | undefined = ensure.interrupted
    ? {
        code: "partial",
        message: `${what}, then berth was interrupted (Ctrl-C or a stop signal) before [worktree.setup].ensure finished; ${next} finishes it.`,
        next,
      }
    : failed && {
        code: "partial",
        message: `${what}, then the [worktree.setup].ensure command \`${failed.command}\` failed (exit ${failed.exit_code ?? "by signal"}).`,
        next,
      };
  return appliedResult("update", data, planSteps, steps, { error, hints });
}

async function chooseSource(
  repo: Repository,
  path: string,
  refs: readonly RefEntry[],
  trunk: Trunk,
  from: string | undefined,
): Promise<ResolvedBase> {
  if (from !== undefined) {
    return resolveBase(path, from, refs, "update", repo.config.repository.branch_prefix);
  }
  const { name, tip } = requireTrunk(
    trunk,
    `nothing to merge (name a source with berth update --from <ref>, or set [repository].trunk in ${repo.config.file ?? "berth.toml"})`,
    shellCommand(["git", "-C", path, "branch", "--list"]),
  );
  // By name: the trunk's own tip, whatever any checkout has checked out.
  return { name, ref: `refs/heads/${name}`, commit: tip };
}

/**
 * Merges, or leaves the checkout exactly as it was: on a conflict the merge

 * is aborted, the old HEAD and a clean tracked tree are verified, and the
 * refusal lists the conflicted files.
 */
async function mergeOrRestore(
  path: string,
  branch: string,
  headBefore: string,
  source: ResolvedBase,
): Promise<void> {
  const attempt = await mergeCommit(path, source.commit, mergeMessage(source, branch));
  if (attempt.merged) return;
  const conflicts = await listConflictedPaths(path);
  if (await isMerging(path)) await abortMerge(path);
  const [head, status] = await Promise.all([readHead(path), readWorktreeStatus(path)]);
  const restored =
    head.commit === headBefore && head.branch === branch && status.trackedChanges === 0;
  const refData = { merged_from: source.name, from_tip: source.commit, path, branch, conflicts };
  if (!restored) {
    throw new UserError(
      "partial",
      `The merge of ${source.name} into ${branch} failed and ${path} is not back as it was ` +
        `(HEAD ${head.commit ? shortOid(head.commit) : "unknown"}, ${status.trackedChanges} tracked change(s)). ` +
        "Check it by hand before going on.",
      { next: shellCommand(["git", "-C", path, "status"]), data: refData, nothingChanged: false },
    );
  }
  if (conflicts.length > 0) {
    throw new UserError(
      "precondition_failed",
      `Merging ${source.name} (${shortOid(source.commit)}) into ${branch} conflicts in ` +
        `${conflicts.length} file(s): ${conflicts.join(", ")}. The merge was aborted; ` +
        `${branch} and its tree are as they were. To resolve by hand, merge, fix the files, then git commit.`,
      {
        next: commandSequence(
          shellCommand(["cd", path]),
          shellCommand(["git", "merge", source.ref ?? source.commit]),
        ),
        data: refData,
      },
    );
  }
  throw new UserError(
    "precondition_failed",
    `git could not merge ${source.name} into ${branch}: ${lastLines(attempt.output, 5)}`,
    { next: shellCommand(["git", "-C", path, "status"]), data: refData },
  );
}

function unrelatedHistoriesRefusal(path: string, branch: string, source: ResolvedBase): UserError {
  return new UserError(
    "precondition_failed",
    `${source.name} (${shortOid(source.commit)}) shares no history with ${branch}: ` +
      "berth update does not merge unrelated histories; to combine them anyway, merge by hand.",
    {
      next: shellCommand([
        "git",
        "-C",
        path,
        "merge",
        "--allow-unrelated-histories",
        source.ref ?? source.commit,
      ]),
      data: { merged_from: source.name, from_tip: source.commit, path, branch },
    },
  );
}

function inTheWayRefusal(
  path: string,
  branch: string,
  source: ResolvedBase,
  files: readonly string[],
): UserError {
  const shown = files.slice(0, 10).join(", ");
  const more = files.length > 10 ? ` and ${files.length - 10} more` : "";
  return new UserError(
    "precondition_failed",
    `Merging ${source.name} (${shortOid(source.commit)}) into ${branch} would overwrite ` +
      `${files.length} untracked or ignored file(s) in ${path}: ${shown}${more}. ` +
      "git replaces ignored files without asking; berth never loses a file, so nothing was merged. " +
      "Move them out (or delete the ones you do not need), then run berth update.",
    {
      next: shellCommand(["git", "-C", path, "status", "--ignored", "--short"]),

      data: { merged_from: source.name, from_tip: source.commit, path, branch, in_the_way: files },
    },
  );
}

/** The message git itself would write for merging `source` by name. */
function mergeMessage(source: ResolvedBase, branch: string): string {
  const ref = source.ref;
  if (ref?.startsWith("refs/heads/")) return `Merge branch '${ref.slice(11)}' into ${branch}`;
  if (ref?.startsWith("refs/tags/")) return `Merge tag '${ref.slice(10)}' into ${branch}`;
  if (ref?.startsWith("refs/remotes/")) {
    return `Merge remote-tracking branch '${ref.slice(13)}' into ${branch}`;
  }
  return `Merge commit '${source.commit}' into ${branch}`;
}

/** `[worktree.setup].ensure` in this checkout, through the shared setup runner. */
async function runSetupEnsure(
  ctx: Context,
  repo: Repository,
  checkout: CheckoutFacts,
  trunk: string | null,
): Promise<{ runs: EnsureRun[]; interrupted: boolean }> {
  const { runs, outcome } = await runCommandsInOrder(
    ctx,
    checkout.path,
    checkoutVariables(repo, checkout, trunk),
    repo.config.worktree.setup.ensure,
    "setup ensure",
  );
  return {
    runs: runs.map((run) => ({ ...run, ok: run.exit_code === 0 })),
    interrupted: outcome.failure?.interrupted === true,
  };
}
