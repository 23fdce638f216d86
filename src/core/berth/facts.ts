import type { WorktreeFacts } from "../fleet/survey.js";
import type { Repository } from "../repo/repository.js";
import { portFor } from "./identity.js";
import type { ResourceOwner } from "./resources.js";

/**
 * The BERTH_* facts of a berth found by the survey, or null when berth does
 * not own it (no ready marker) or git gave it no admin folder.
 */
export function ownerOf(
  repo: Repository,
  trunk: string | null,
  worktree: WorktreeFacts,
): ResourceOwner | null {
  const { marker, adminKey } = worktree;
  if (marker === null || adminKey === null || worktree.isMain) return null;
  const { port_base, port_span } = repo.config.worktree;
  return {
    id: marker.id,
    branch: worktree.entry.branch ?? marker.branch,
    path: worktree.entry.path,
    port: portFor(marker.id, port_base, port_span),
    trunk,
    repo: repo.mainPath,
    adminKey,
  };
}
