import type { WorktreeState } from "../fleet/status.js";

/**
 * Why a berth in `state` may not be given a standing grant ("land when
 * green"), or null when it may: the one rule `berth queue approve` and the
 * desk's `y` share (decisions 0078, 0081). A grant is for work still to land,
 * in a checkout a submission can come from.
 */
export function grantRefusal(
  id: string,
  state: WorktreeState,
  trunk: string | null,
): string | null {
  switch (state) {
    case "landed":
    case "integrated":
      return `${id}'s work is already on ${trunk ?? "the trunk"}; a standing grant is for work still to land`;
    case "main":
      return `${id} is the main checkout; a standing grant is for a berth`;
    case "prunable":
    case "unreadable":
      return `${id} is ${state}: there is no checkout to submit from; a standing grant is for a berth`;
    default:
      return null;
  }
}
