import type { Context } from "../../context.js";
import { discoverRepo, type RepoLocation } from "../../git/repo.js";
import { listWorktrees } from "../../git/worktrees.js";
import { loadConfig } from "../../io/config.js";
import type { Config } from "../../io/config-types.js";

/** A repository as every verb needs it: where it lives and how it is configured. */
export interface Repository {
  location: RepoLocation;
  /** The main checkout: berth.toml is read from here and resource commands run here. */
  mainPath: string;
  config: Config;
}

export async function openRepository(ctx: Context): Promise<Repository> {
  const location = await discoverRepo(ctx.cwd);
  // A main checkout with a separate git dir: ask git which checkout is first.
  const mainPath =
    location.mainPath ?? (await listWorktrees(location.cwd))[0]?.path ?? location.cwd;
  const config = await loadConfig(mainPath);
  ctx.journal.bind?.({
    commonDir: location.commonDir,
    gitDir: location.gitDir,
    toplevel: location.toplevel,
    enabled: config.logbook.enabled,
  });
  return { location, mainPath, config };
}
