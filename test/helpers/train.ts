import { type FleetSurvey, surveyFleet } from "../../src/core/fleet/survey.js";
import { startBerth } from "../../src/core/lifecycle/start.js";
import { openRepository } from "../../src/core/repo/repository.js";
import { type TestRepo, testContext } from "./repo.js";

export interface StartedBerth {
  id: string;
  branch: string;
  path: string;
}

/** Starts a berth in-process (optionally stacked on another) and gives it one commit. */
export async function startWithCommit(
  repo: TestRepo,
  name: string,
  from?: StartedBerth,
  commits = 1,
): Promise<StartedBerth> {
  const { ctx } = testContext(repo.path, repo.env);
  const result = await startBerth(ctx, { name, from: from?.branch });
  const data = result.data;
  if (!data) throw new Error(`start ${name} failed`);
  for (let i = 0; i < commits; i++) {
    repo.write(`${name}-${i}.txt`, `${name} ${i}\n`, data.path);
    repo.commit(`${name} ${i}`, data.path);
  }
  return { id: data.id, branch: data.branch, path: data.path };
}

/** A survey as seen from `cwd` (default: the main checkout). */
export async function surveyFrom(repo: TestRepo, cwd = repo.path): Promise<FleetSurvey> {
  const { ctx } = testContext(cwd, repo.env);
  return surveyFleet(await openRepository(ctx));
}
