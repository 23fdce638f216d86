import { dirname, join } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { readHeadBranch } from "../../git/head.js";
import { resolveCommit } from "../../git/refs.js";
import { discoverRepo, type RepoLocation, refuseNewlinePath } from "../../git/repo.js";
import { listWorktrees } from "../../git/worktrees.js";
import { loadConfig } from "../../io/config.js";
import type { Config } from "../../io/config-types.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { shellCommand } from "../../text.js";
import { findMainCheckout } from "./main-checkout.js";

/** A repository as every verb needs it: where it lives and how it is configured. */
export interface Repository {
  location: RepoLocation;
  /** The main checkout (core/repo/main-checkout.ts): berth.toml is read from here. */
  mainPath: string;
  /**
   * The bare repository whose linked worktrees make up the fleet
   * (`git clone --bare`, then `git worktree add`); null for a repository
   * with a working tree of its own.
   */
  bareDir: string | null;
  config: Config;
}

/** `discovery`: discoverRepo(ctx.cwd), when the caller started it already (status-reads.ts). */
export async function openRepository(
  ctx: Context,
  discovery: Promise<RepoLocation> = discoverRepo(ctx.cwd),
): Promise<Repository> {
  const location = await discovery;
  const { mainPath, bareDir } =
    location.mainPath === null
      ? await locateMainCheckout(location)
      : { mainPath: location.mainPath, bareDir: null };
  refuseNewlinePath(mainPath);
  const config = await loadConfig(mainPath);
  ctx.journal.bind?.({
    commonDir: location.commonDir,
    gitDir: location.gitDir,
    toplevel: location.toplevel,
    enabled: config.logbook.enabled,
  });
  return { location, mainPath, bareDir, config };
}

/** A main checkout with a separate git dir, or a bare repository's: ask git's worktree list. */
async function locateMainCheckout(
  location: RepoLocation,
): Promise<{ mainPath: string; bareDir: string | null }> {
  const entries = await listWorktrees(location.cwd);
  const first = entries[0];
  if (first === undefined) return { mainPath: location.cwd, bareDir: null };
  if (!first.bare) return { mainPath: first.path, bareDir: null };
  const headBranch = await readHeadBranch(location.commonDir);
  const main = findMainCheckout(entries, headBranch);
  if (main === null) {
    const born =
      headBranch !== null && (await resolveCommit(first.path, `refs/heads/${headBranch}`));
    throw bareWithoutMainCheckout(first.path, born ? headBranch : null);
  }
  return { mainPath: main.path, bareDir: first.path };
}

/** No checkout of the default branch; `headBranch` is null when HEAD names no branch with commits. */
function bareWithoutMainCheckout(bareDir: string, headBranch: string | null): UserError {
  const why = "berth reads berth.toml from the worktree that has its default branch checked out";
  if (headBranch === null) {
    return new UserError(
      "not_a_repository",
      `${bareDir} is a bare repository whose HEAD names no branch with commits; ${why}. Clone it with a working tree (git clone <url>) and run berth there.`,
    );
  }
  const path = freeFolder(join(dirname(bareDir), headBranch.replace(/\//g, "-")));
  return new UserError(
    "not_a_repository",
    `${bareDir} is a bare repository and no worktree has its default branch ${headBranch} checked out; ${why}.`,
    { next: shellCommand(["git", "-C", bareDir, "worktree", "add", path, headBranch]) },
  );
}

/** `path`, or `path-2`, `path-3`, ... : the first nothing sits at, so `git worktree add` there works. */
function freeFolder(path: string): string {
  let candidate = path;
  for (let n = 2; pathExistsOrBroken(candidate); n++) candidate = `${path}-${n}`;
  return candidate;
}
