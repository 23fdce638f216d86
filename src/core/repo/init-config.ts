import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { listRefs } from "../../git/refs.js";
import { renderStarterConfig } from "../../io/config-template.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { appliedResult, type PlanApplyResult, plannedResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { openRepository } from "./repository.js";
import { createTrunkHint, detectTrunk, TRUNK_REF_PREFIXES } from "./trunk.js";
import { planUntrackedCache } from "./untracked-cache.js";

export interface InitData {
  path: string;
  trunk: string;
}

/** Writes a commented berth.toml at the repository root; never overwrites one. */
export async function initConfig(
  ctx: Context,
  options: { dryRun?: boolean; untrackedCache?: boolean },
): Promise<PlanApplyResult<InitData>> {
  const repo = await openRepository(ctx);
  const path = join(repo.mainPath, "berth.toml");
  if (pathExistsOrBroken(path)) {
    throw new UserError(
      "precondition_failed",
      `${path} already exists; berth init never overwrites it (edit it instead).`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  const trunk = detectTrunk(repo.config, await listRefs(repo.location.cwd, TRUNK_REF_PREFIXES));
  const trunkName = trunk.name ?? "main";
  const data: InitData = { path, trunk: trunkName };
  const cache = await planUntrackedCache(repo, options.untrackedCache === true);
  const plan = [
    { step: "write berth.toml", target: path, detail: `trunk = "${trunkName}"` },
    ...cache.plan,
  ];
  // The file names the trunk either way; berth start needs the local branch.
  const create = createTrunkHint(trunk);
  const trunkHints = create === null ? [] : [create];
  if (options.dryRun) {
    return plannedResult("init", data, plan, { hints: [...trunkHints, ...cache.hints] });
  }
  await writeFile(path, renderStarterConfig(trunkName), { flag: "wx" });
  const cacheSteps = await cache.apply();
  return appliedResult(
    "init",
    data,
    plan,
    [{ step: "write berth.toml", target: path, outcome: "done" }, ...cacheSteps],
    {
      hints: [
        ...trunkHints,
        "berth.toml is yours to commit; berth never commits anything itself",
        ...cache.hints,
      ],
    },
  );
}
