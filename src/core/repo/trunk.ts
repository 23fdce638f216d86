import type { RefEntry } from "../../git/parse.js";
import type { Config } from "../../io/config-types.js";
import { type CommandLine, shellCommand } from "../../text.js";

/**
 * The one place the trunk is decided: `[repository].trunk`, else origin/HEAD's
 * branch, else main, else master. A name is chosen even when no local branch
 * has it (a configured trunk not created yet, or origin's default branch in a
 * clone whose local copy was deleted or renamed); `tip` is then null, and
 * `remote` names origin's branch when there is one to create it from.
 */

export interface Trunk {
  /** Configured or detected name; null when nothing could be detected. */
  name: string | null;
  /** The tip of refs/heads/<name>, null when that branch does not exist. */
  tip: string | null;
  /** How the name was chosen, for messages. */
  source: "config" | "origin/HEAD" | "default";
  /** `origin/<name>` when the local branch is missing and origin's exists (seen in `refs`). */
  remote: string | null;
}

const ORIGIN = "refs/remotes/origin/";

export function detectTrunk(config: Config, refs: readonly RefEntry[]): Trunk {
  const heads = new Map(
    refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => [r.ref.slice(11), r.oid]),
  );
  // origin/HEAD is listed only while the branch it points to exists.
  const originHead = refs.find((r) => r.ref === `${ORIGIN}HEAD`)?.symref;
  const named = (name: string, source: Trunk["source"]): Trunk => {
    const tip = heads.get(name) ?? null;
    const onOrigin =
      originHead === `${ORIGIN}${name}` || refs.some((r) => r.ref === `${ORIGIN}${name}`);
    return { name, tip, source, remote: tip === null && onOrigin ? `origin/${name}` : null };
  };
  const configured = config.repository.trunk;
  if (configured !== null) return named(configured, "config");
  if (originHead?.startsWith(ORIGIN)) return named(originHead.slice(ORIGIN.length), "origin/HEAD");
  for (const name of ["main", "master"]) {
    if (heads.has(name)) return named(name, "default");
  }
  return { name: null, tip: null, source: "default", remote: null };
}

/** The git command that creates a missing trunk branch from origin's, or null when there is none. */
export function createTrunkCommand(trunk: Trunk): CommandLine | null {
  if (trunk.name === null || trunk.tip !== null || trunk.remote === null) return null;
  return shellCommand(["git", "branch", trunk.name, trunk.remote]);
}

/** The hint status and init give while the trunk exists only on origin, or null. */
export function createTrunkHint(trunk: Trunk): string | null {
  const create = createTrunkCommand(trunk);
  if (create === null) return null;
  return `trunk ${trunk.name} exists only as ${trunk.remote}; berth start refuses until you create it: ${create}`;
}

/** Why there is no trunk to work from, for refusals: "No trunk was found (...)", "... does not exist". */
export function describeMissingTrunk(trunk: Trunk): string {
  if (trunk.name === null) return "No trunk was found (no origin/HEAD, main or master)";
  const why = originCopyFix(trunk) ?? (trunk.remote === null ? null : `only ${trunk.remote} does`);
  return `The trunk branch "${trunk.name}" does not exist${why === null ? "" : ` (${why})`}`;
}

/**
 * A configured `trunk = "origin/main"` that no local branch has: the name of
 * origin's copy of a branch, a common way to mean "follow origin's main". The
 * fix, or null for any other missing trunk.
 */
export function originCopyFix(trunk: Trunk): string | null {
  const name = trunk.name;
  if (trunk.source !== "config" || trunk.tip !== null || !name?.startsWith("origin/")) return null;
  const local = name.slice("origin/".length);
  return `berth's trunk is a local branch, and ${name} is origin's copy of one: set trunk = "${local}" in berth.toml, and [remote] name = "origin" to follow and land on origin's`;
}

/** The prefixes a survey reads: local branches and the remote default branch pointer. */
export const TRUNK_REF_PREFIXES = ["refs/heads", "refs/remotes/origin/HEAD"] as const;
