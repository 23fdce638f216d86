import type { RefEntry } from "../../git/parse.js";
import type { Config } from "../../io/config-types.js";

export interface Trunk {
  /** Configured or detected name; null when nothing could be detected. */
  name: string | null;
  /** The tip of refs/heads/<name>, null when that branch does not exist. */
  tip: string | null;
  /** How the name was chosen, for messages. */
  source: "config" | "origin/HEAD" | "default";
}

/** The trunk: `[repository].trunk`, else origin/HEAD's branch, else main, else master. */
export function detectTrunk(config: Config, refs: readonly RefEntry[]): Trunk {
  const heads = new Map(
    refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => [r.ref.slice(11), r.oid]),
  );
  const configured = config.repository.trunk;
  if (configured !== null) {
    return { name: configured, tip: heads.get(configured) ?? null, source: "config" };
  }
  const originHead = refs.find((r) => r.ref === "refs/remotes/origin/HEAD")?.symref;
  if (originHead?.startsWith("refs/remotes/origin/")) {
    const name = originHead.slice("refs/remotes/origin/".length);
    return { name, tip: heads.get(name) ?? null, source: "origin/HEAD" };
  }
  for (const name of ["main", "master"]) {
    const tip = heads.get(name);
    if (tip !== undefined) return { name, tip, source: "default" };
  }
  return { name: null, tip: null, source: "default" };
}

/** The prefixes a survey reads: local branches and the remote default branch pointer. */
export const TRUNK_REF_PREFIXES = ["refs/heads", "refs/remotes/origin/HEAD"] as const;
