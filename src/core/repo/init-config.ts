import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { readHeadBranch } from "../../git/head.js";
import { listRefs } from "../../git/refs.js";
import { renderStarterConfig } from "../../io/config-template.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { appliedResult, type PlanApplyResult, plannedResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { type AgentsFileOutcome, planAgentsSection, writeAgentsSection } from "./init-agents.js";
import { openRepository, type Repository } from "./repository.js";
import { createTrunkHint, detectTrunk, TRUNK_REF_PREFIXES, type Trunk } from "./trunk.js";
import { planUntrackedCache } from "./untracked-cache.js";

export interface InitData {
  path: string;
  trunk: string;
  /** `--agents`: the files the agents' section goes to, and what happens to each. */
  agents?: AgentsFileOutcome[];
}

/**
 * Writes a commented berth.toml at the repository root; never overwrites one.
 * With `--agents`, appends the agents' workflow section (init-agents.ts), and
 * with `--untracked-cache` sets git's untracked cache; either keeps an
 * existing berth.toml instead of refusing.
 */
export async function initConfig(
  ctx: Context,
  options: { dryRun?: boolean; untrackedCache?: boolean; agents?: boolean },
): Promise<PlanApplyResult<InitData>> {
  const repo = await openRepository(ctx);
  const path = join(repo.mainPath, "berth.toml");
  if (options.agents === true) return initAgents(repo, path, options, ctx);
  if (pathExistsOrBroken(path)) {
    // The hint a first init gives ("or berth init --untracked-cache") works once the file exists.
    if (options.untrackedCache === true) {
      return untrackedCacheOnly(repo, path, options.dryRun === true);
    }
    throw new UserError(
      "precondition_failed",
      `${path} already exists; berth init never overwrites it (edit it instead).`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  const trunk = await repositoryTrunk(repo);
  // Nothing detected (the only branch is "trunk" or "develop"): the main
  // checkout's branch, rather than a "main" that does not exist.
  const trunkName = trunk.name ?? (await readHeadBranch(repo.mainPath)) ?? "main";
  const data: InitData = { path, trunk: trunkName };
  const cache = await planUntrackedCache(repo, options.untrackedCache === true);
  const plan = [
    { step: "write berth.toml", target: path, detail: `trunk = "${trunkName}"` },
    ...cache.plan,
  ];
  // The file names the trunk either way; berth start needs the local branch.
  const create = createTrunkHint(trunk);
  const trunkHints = create === null ? [] : [create];
  if (trunk.name === null && trunkName !== "main") {
    trunkHints.push(
      `trunk ${trunkName} is the main checkout's branch (no origin/HEAD, main or master to detect); berth.toml names it`,
    );
  }
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

/** The trunk as configured, or as the branches show it. */
async function repositoryTrunk(repo: Repository): Promise<Trunk> {
  return detectTrunk(repo.config, await listRefs(repo.location.cwd, TRUNK_REF_PREFIXES));
}

/** berth.toml kept as it is; only `--untracked-cache` is done (or planned). */
async function untrackedCacheOnly(
  repo: Repository,
  path: string,
  dryRun: boolean,
): Promise<PlanApplyResult<InitData>> {
  const data: InitData = { path, trunk: (await repositoryTrunk(repo)).name ?? "main" };
  const cache = await planUntrackedCache(repo, true);
  if (dryRun) return plannedResult("init", data, cache.plan, { hints: cache.hints });
  return appliedResult("init", data, cache.plan, await cache.apply(), { hints: cache.hints });
}

async function initAgents(
  repo: Repository,
  configPath: string,
  options: { dryRun?: boolean; untrackedCache?: boolean },
  ctx: Context,
): Promise<PlanApplyResult<InitData>> {
  const dryRun = options.dryRun === true;
  const agents = await planAgentsSection(repo.mainPath);
  const asked = options.untrackedCache === true;
  let config: PlanApplyResult<InitData> | null = null;
  if (!pathExistsOrBroken(configPath))
    config = await initConfig(ctx, { dryRun, untrackedCache: asked });
  else if (asked) config = await untrackedCacheOnly(repo, configPath, dryRun);
  const plan = [
    ...(config?.plan.steps ?? []),
    ...agents.map((a) => ({ step: "write agents section", target: a.file, detail: a.outcome })),
  ];
  // The trunk berth.toml names: the one written now, or the configured/detected one.
  const trunk = config?.data?.trunk ?? (await repositoryTrunk(repo)).name ?? "main";
  const data: InitData = { path: configPath, trunk, agents };
  if (dryRun) return plannedResult("init", data, plan, { hints: config?.hints ?? [] });
  await writeAgentsSection(agents);
  const steps = [
    ...(config?.steps ?? []),
    ...agents.map((a) => ({
      step: "write agents section",
      target: a.file,
      outcome: a.outcome === "already present" ? ("skipped" as const) : ("done" as const),
      ...(a.outcome === "already present" ? { reason: "already present" } : {}),
    })),
  ];
  return appliedResult("init", data, plan, steps, { hints: config?.hints ?? [] });
}
