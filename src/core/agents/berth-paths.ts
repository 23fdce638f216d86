import type { Context } from "../../context.js";
import { success, type VerbResult } from "../../result.js";
import { surveyFleet } from "../fleet/survey.js";
import { locateWorktree } from "../repo/berth-target.js";
import { openRepository } from "../repo/repository.js";

/**
 * `berth path [<berth>]` and `berth switch <berth>` (spec section 12): where a
 * berth's folder is. Reads only (one survey, no status reads), so shell
 * completion and the switch wrapper stay fast.
 */

export interface BerthPath {
  /** null for the main checkout or a checkout berth did not make. */
  id: string | null;
  path: string;
  branch: string | null;
  is_main: boolean;
}

export interface PathData {
  /** The one named (`berth path <berth>`), or null when listing. */
  berth: BerthPath | null;
  /** Every berth (`berth path` with no argument); empty when one was named. */
  berths: BerthPath[];
}

export async function readBerthPath(
  ctx: Context,
  verb: string,
  target: string | undefined,
): Promise<VerbResult<PathData>> {
  if (target !== undefined) {
    const w = await locateWorktree(ctx, target, verb, { idPrefix: true });
    const berth: BerthPath = {
      id: w.marker?.id ?? null,
      path: w.entry.path,
      branch: w.entry.branch ?? w.marker?.branch ?? null,
      is_main: w.isMain,
    };
    return success(verb, { berth, berths: [] });
  }
  const survey = await surveyFleet(await openRepository(ctx), { readStatusOf: () => false });
  const berths = survey.worktrees.flatMap((w): BerthPath[] =>
    w.marker === null || w.isMain
      ? []
      : [
          {
            id: w.marker.id,
            path: w.entry.path,
            branch: w.entry.branch ?? w.marker.branch,
            is_main: false,
          },
        ],
  );
  return success(verb, { berth: null, berths });
}
