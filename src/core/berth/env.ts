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
