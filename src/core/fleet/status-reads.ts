import type { StatusSummary } from "../../git/parse.js";
import { discoverRepo, folderProblem, type RepoLocation } from "../../git/repo.js";
import { runGit } from "../../git/run.js";
import { gitGroup } from "../../git/run-group.js";
import { readWorktreeStatus } from "../../git/status.js";
import { type EarlyStatuses, startEarlyStatuses } from "./early-statuses.js";
import { type FleetLists, startFleetLists } from "./fleet-lists.js";

/**
 * The git processes every `berth status` starts before it knows anything:
 * the status of the checkout it runs in, discovery's rev-parse, the worktree
 * list and the branches, and (when the fleet's are wanted) the other
 * checkouts' statuses. None needs another's answer, so they run side by
 * side, forked by one `sh` (git/run-group.ts); and a plain status
 * (cli-status.ts) starts them before anything else, so they run while the
 * verb is set up (docs/performance.md, start-up).
 * Each is still read fresh by this run: started a few milliseconds sooner,
 * never kept for another (decision 0014).
 */
export interface StatusReads {
  cwd: string;
  currentStatus: Promise<StatusSummary | null>;
  location: Promise<RepoLocation>;
  lists: Promise<FleetLists>;
  /** The fleet's statuses, when the run will want them (early-statuses.ts). */
  early: EarlyStatuses | null;
}

/** What decides whether status wants the fleet's statuses (status.ts: its scope). */
export interface StatusScope {
  all?: boolean;
  local?: boolean;
}

let started: StatusReads | null = null;

/** Starts the reads for `cwd` (cli-status.ts); the status verb takes them. */
export function startStatusReads(cwd: string, scope: StatusScope): StatusReads {
  // A path that is no folder (a hook's cwd or an MCP path naming a file): spawning
  // there throws Node's error, so nothing starts before discovery has refused it.
  if (folderProblem(cwd) !== null) return startAfterDiscovery(cwd);
  // The lanes first: they are the long pole, and the group's reads need only a few milliseconds.
  const early = startEarlyStatuses(cwd, scope);
  const group = gitGroup(cwd);
  const location = discoverRepo(cwd, group.run);
  // Awaited by the verb; handled now so that a refusal is not unhandled meanwhile.
  void location.catch(() => undefined);
  started = {
    cwd,
    currentStatus: readWorktreeStatus(cwd, group.run).catch(() => null),
    location,
    lists: startFleetLists(cwd, group.run),
    early,
  };
  group.start();
  return started;
}

function startAfterDiscovery(cwd: string): StatusReads {
  const location = discoverRepo(cwd);
  const lists = location.then((found) => startFleetLists(found.cwd, runGit));
  // Awaited by the verb after the location, which refuses; handled now so neither is unhandled.
  void lists.catch(() => undefined);
  started = { cwd, currentStatus: Promise.resolve(null), location, lists, early: null };
  return started;
}

/** The reads the entry started for this folder, once; otherwise they start now. */
export function takeStatusReads(cwd: string, scope: StatusScope): StatusReads {
  const reads = started?.cwd === cwd ? started : startStatusReads(cwd, scope);
  started = null;
  return reads;
}
