import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { readBriefRecord } from "../../io/briefs.js";
import { withFleetLock } from "../../io/lock.js";
import { success, type VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { type FleetSurvey, surveyFleet } from "../fleet/survey.js";
import { resolveTarget } from "../repo/berth-target.js";
import { openRepository } from "../repo/repository.js";
import { type BriefChange, changesSomething, mergeRecord, storeRecord } from "./briefs.js";

/**
 * `berth describe <berth> [--title ...] [--brief <file|->]`: shows a berth's
 * title and brief, or changes them (briefs.ts decides what they may be). The
 * berth is a checkout (id, path or branch) or a branch with no checkout (a
 * parked berth, a kept ref): the record is the branch's, so both work.
 */

export interface DescribeData {
  /** The berth id (its ready marker's, or the one it had when parked); null when unknown. */
  id: string | null;
  branch: string;
  /** Its checkout, or null when it has none (parked, or a kept ref). */
  path: string | null;
  title: string | null;
  brief: string | null;
  parked: boolean;
  /** Whether this run changed the record. */
  changed: boolean;
}

export async function describeBerth(
  ctx: Context,
  options: { target: string; change: BriefChange },
): Promise<VerbResult<DescribeData>> {
  const repo = await openRepository(ctx);
  const { commonDir } = repo.location;
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const subject = findSubject(survey, repo.location.cwd, options.target, commonDir);
  let record = readBriefRecord(commonDir, subject.branch);
  const changed = changesSomething(options.change);
  if (changed) {
    ctx.journal.begin({ branch: subject.branch, path: subject.path });
    await withFleetLock(commonDir, "describe", async () => {
      const next = mergeRecord(
        subject.branch,
        readBriefRecord(commonDir, subject.branch),
        options.change,
        ctx.now(),
      );
      await storeRecord(commonDir, subject.branch, next);
      record = next;
    });
  }
  return success("describe", {
    id: subject.id ?? record?.parked?.id ?? null,
    branch: subject.branch,
    path: subject.path,
    title: record?.title ?? null,
    brief: record?.brief ?? null,
    parked: subject.path === null && record?.parked != null,
    changed,
  });
}

interface Subject {
  id: string | null;
  branch: string;
  path: string | null;
}

/** A checkout first (as every verb resolves one); else a local branch no checkout holds. */
function findSubject(
  survey: FleetSurvey,
  cwd: string,
  argument: string,
  commonDir: string,
): Subject {
  let notFound: unknown;
  try {
    const worktree = resolveTarget(survey, cwd, argument, "describe");
    const { entry } = worktree;
    if (worktree.isMain) {
      // Its branch is the trunk: a title there would stand for every berth's base, not one line of work.
      throw new UserError(
        "precondition_failed",
        `${entry.path} is the main checkout, not a berth; a title and brief describe one berth's line of work. Name a berth by its id, path or branch.`,
        { next: shellCommand(["berth", "status"]) },
      );
    }
    if (entry.branch === null || entry.detached) {
      throw new UserError(
        "precondition_failed",
        `${worktree.marker?.id ?? entry.path} is not on a branch; a title and brief belong to a branch. Switch that checkout to its branch, then describe it again.`,
        { next: shellCommand(["git", "-C", entry.path, "branch", "--list"]) },
      );
    }
    return { id: worktree.marker?.id ?? null, branch: entry.branch, path: entry.path };
  } catch (error) {
    if (!(error instanceof UserError) || error.code !== "unknown_target") throw error;
    notFound = error;
  }
  const wanted = argument.replace(/^refs\/heads\//, "");
  const prefix = survey.repo.config.repository.branch_prefix;
  for (const branch of [wanted, `${prefix}${wanted}`]) {
    if (survey.branches.has(branch)) {
      return { id: readBriefRecord(commonDir, branch)?.parked?.id ?? null, branch, path: null };
    }
  }
  throw notFound;
}
