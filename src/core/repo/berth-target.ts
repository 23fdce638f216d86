import { realpathSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { shellCommand } from "../../text.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { openRepository } from "./repository.js";

/**
 * Resolves a `<berth>` argument (drop, accept, await) to one surveyed
 * worktree: a berth id (or, for a checkout that is no berth, the id status
 * shows: its folder's name), a path (absolute or relative to `cwd`, any folder
 * inside the checkout), or a branch (short name, or the id's branch without
 * the prefix is already the id); failing all of those, and only where the
 * caller allows it (`berth path`, `berth switch`: they move nobody's work), a
 * prefix of exactly one berth id. Never guesses: no match is `unknown_target`,
 * several are `ambiguous_target`, each with the candidates.
 */

export interface TargetCandidate {
  id: string | null;
  path: string;
  branch: string | null;
}

export function resolveTarget(
  survey: FleetSurvey,
  cwd: string,
  argument: string,
  verb: string,
  /** Also accept a prefix of exactly one berth id (path and switch; never a verb that removes). */
  options: { idPrefix?: boolean } = {},
): WorktreeFacts {
  const wanted = argument.replace(/^refs\/heads\//, "");
  const asPath = existingRealPath(resolve(cwd, argument));
  // A checkout that is no berth goes by the id status shows for it: its folder's name.
  const byName = survey.worktrees.filter(
    (w) =>
      (w.marker === null ? basename(w.entry.path) : w.marker.id) === wanted ||
      w.entry.branch === wanted,
  );
  // A folder that exists names the checkout holding it; a missing one only
  // an exact registered path (a checkout whose folder is gone).
  const byPath =
    asPath === null
      ? survey.worktrees.find((w) => w.entry.path === resolve(cwd, argument))
      : innermostCheckout(survey.worktrees, asPath);
  if (byName.length === 0 && byPath !== undefined)
    refuseWordThatIsAlsoAnId(survey, argument, byPath, verb);
  let unique = [...new Set(byPath ? [...byName, byPath] : byName)];
  // Nothing named exactly: a unique prefix of a berth id (`berth path fix-lo`).
  const byPrefix = unique.length === 0 && options.idPrefix === true && wanted !== "";
  if (byPrefix) unique = idsStartingWith(survey, wanted);
  if (unique.length === 1) return unique[0] as WorktreeFacts;
  if (unique.length > 1) {
    const candidates = unique.map(candidateOf);
    // Several ids that start alike differ in full; an exact name shared by two worktrees needs the path.
    const way = byPrefix
      ? `by its whole id: berth ${verb} <id>`
      : `by its path: berth ${verb} <path>`;
    throw new UserError(
      "ambiguous_target",
      `"${argument}" matches ${unique.length} worktrees: ${candidates.map(describe).join("; ")}. Name the worktree ${way}.`,
      { next: shellCommand(["berth", "status"]), data: { candidates } },
    );
  }
  const lowered = argument.toLowerCase();
  const similar = survey.worktrees
    .filter((w) => !w.isMain)
    .filter(
      (w) =>
        (w.marker?.id ?? "").includes(lowered) ||
        (w.entry.branch ?? "").toLowerCase().includes(lowered) ||
        basename(w.entry.path).toLowerCase().includes(lowered),
    )
    .slice(0, 10)
    .map(candidateOf);
  const listed = similar.length > 0 ? ` Similar: ${similar.map(describe).join("; ")}.` : "";
  throw new UserError(
    "unknown_target",
    `No worktree of this repository is "${argument}" (by id, path or branch).${listed}`,
    { next: shellCommand(["berth", "status"]), data: { candidates: similar } },
  );
}

/**
 * A bare word (`a`) that is a file or folder here and also the start of a
 * berth's id (`a-50bf02`, started as `berth start a`) names either: refused
 * with both, never taken as the checkout the file is in (the main one, as a rule).
 */
function refuseWordThatIsAlsoAnId(
  survey: FleetSurvey,
  argument: string,
  byPath: WorktreeFacts,
  verb: string,
): void {
  if (argument.includes("/") || argument === "." || argument === "..") return;
  const ids = idsStartingWith(survey, argument).filter((w) => w !== byPath);
  if (ids.length === 0) return;
  const candidates = [byPath, ...ids].map(candidateOf);
  throw new UserError(
    "ambiguous_target",
    `"${argument}" is a path in ${byPath.entry.path} and the start of ${ids.length === 1 ? "a berth id" : "berth ids"}: ${candidates.map(describe).join("; ")}. Name the berth by its whole id (berth ${verb} <id>), or the path as ./${argument}.`,
    { next: shellCommand(["berth", "status"]), data: { candidates } },
  );
}

/** The berths whose id starts with `prefix`. */
function idsStartingWith(survey: FleetSurvey, prefix: string): WorktreeFacts[] {
  return survey.worktrees.filter((w) => w.marker?.id.startsWith(prefix) === true);
}

/** The checkout `path` is in (or is); the innermost one when checkouts nest. */
function innermostCheckout(
  worktrees: readonly WorktreeFacts[],
  path: string,
): WorktreeFacts | undefined {
  let best: WorktreeFacts | undefined;
  let bestLength = -1;
  for (const w of worktrees) {
    for (const root of new Set([w.entry.path, realOrResolved(w.entry.path)])) {
      const inside = path === root || path.startsWith(`${root}/`);
      if (inside && root.length > bestLength) {
        best = w;
        bestLength = root.length;
      }
    }
  }
  return best;
}

function realOrResolved(path: string): string {
  return existingRealPath(path) ?? path;
}

function existingRealPath(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function candidateOf(w: WorktreeFacts): TargetCandidate {
  return { id: w.marker?.id ?? null, path: w.entry.path, branch: w.entry.branch };
}

function describe(c: TargetCandidate): string {
  return `${c.id ?? "(not a berth)"} at ${c.path}${c.branch ? ` on ${c.branch}` : ""}`;
}

/** Opens the repository, surveys the fleet (no status reads) and resolves `argument` in it. */
export async function locateWorktree(
  ctx: Context,
  argument: string,
  verb: string,
  options: { idPrefix?: boolean } = {},
): Promise<WorktreeFacts> {
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const worktree = resolveTarget(survey, repo.location.cwd, argument, verb, options);
  ctx.journal.aim?.(worktree.entry.branch ?? worktree.marker?.branch ?? null);
  return worktree;
}
