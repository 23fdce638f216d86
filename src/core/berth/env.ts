import type { CommandEnvironment } from "../../text.js";
import { dbNameFor } from "./identity.js";

/** The facts a project command may read, all through `BERTH_*` variables (spec section 3). */
export interface BerthFacts {
  id: string;
  branch: string;
  path: string;
  port: number;
  trunk: string | null;
  /** The main checkout. */
  repo: string;
}

export function berthVariables(facts: BerthFacts, resource?: string): Record<string, string> {
  return {
    BERTH_ID: facts.id,
    BERTH_BRANCH: facts.branch,
    BERTH_PATH: facts.path,
    BERTH_PORT: String(facts.port),
    BERTH_DB: dbNameFor(facts.id),
    BERTH_TRUNK: facts.trunk ?? "",
    BERTH_REPO: facts.repo,
    ...(resource === undefined ? {} : { BERTH_RESOURCE: resource }),
  };
}

/**
 * What commandEnv changes in `base`, for a printed command that must run the
 * same (invariant 10): the variables berth sets, and the stale BERTH_* it drops.
 */
export function commandEnvChanges(
  base: NodeJS.ProcessEnv,
  variables: Record<string, string>,
): CommandEnvironment {
  const unset = Object.keys(base).filter(
    (key) => key.startsWith("BERTH_") && base[key] !== undefined && !(key in variables),
  );
  return { set: variables, unset: unset.sort() };
}

/** The caller's environment with berth's variables on top (stale BERTH_* values removed). */
export function commandEnv(
  base: NodeJS.ProcessEnv,
  variables: Record<string, string>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (!key.startsWith("BERTH_")) env[key] = value;
  }
  return { ...env, ...variables };
}
