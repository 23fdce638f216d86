import { realpath } from "node:fs/promises";
import { GitError, UserError } from "../../errors.js";
import type { RefEntry, StatusSummary, WorktreeEntry } from "../../git/parse.js";
import { listRefs } from "../../git/refs.js";
import { readStatusesByPath } from "../../git/status.js";
import { readAdminKeys } from "../../io/admin-dirs.js";
import { adminDirFor } from "../../io/paths.js";
import { type ReadyMarker, readReadyMarkerSync } from "../../io/ready-marker.js";
import { shellCommand } from "../../text.js";
import { mainCheckoutIndex } from "../repo/main-checkout.js";
import type { Repository } from "../repo/repository.js";
import { detectTrunk, type Trunk } from "../repo/trunk.js";
import { type Ancestry, readAncestry } from "./commit-graph.js";
import type { EarlyStatuses } from "./early-statuses.js";
import { type FleetLists, startFleetLists } from "./fleet-lists.js";
import { findIntegratedTips, type IntegrationTrunk, integrationTrunk } from "./integration.js";
import { isLanded, landedQuestion, onTrunk } from "./landed.js";
import { DEFAULT_POOL_SIZE } from "./pool.js";

/**
 * The fleet survey: everything status, prune, the desk and await know about
 * the worktrees, read with a fixed number of git processes (worktree list,
 * for-each-ref, merge-base, rev-list) plus one `git status` per worktree in a
 * bounded pool. Later facts are derived from this in memory, never by adding
 * git calls per row or per pair.
 */

export interface WorktreeFacts {
  entry: WorktreeEntry;
  isMain: boolean;
  isCurrent: boolean;
  /** Linked worktrees only: the folder name under `<common>/worktrees/`. */
  adminKey: string | null;
  /** `<common>/worktrees/<key>` for linked worktrees, the common dir for the main checkout. */
  adminDir: string | null;
  /** Present when berth created (and so owns) this worktree. */
  marker: ReadyMarker | null;
  /** `git status` of the checkout; null when not read (prunable, out of scope) or unreadable. */
  status: StatusSummary | null;
  /** false when git could not read the checkout; null when it was not asked. */
  readable: boolean | null;
  /** Commits on HEAD not on the trunk, and the reverse; null when either is unknown. */
  ahead: number | null;
  behind: number | null;
  /** HEAD is on the trunk (local or remote, fleet/landed.ts) and gained commits since it forked. */
  landed: boolean;
  /** Not landed, but its work is in the trunk (a squash or rebase merge; fleet/integration.ts). */
  integrated: boolean;
}

export interface FleetSurvey {
  repo: Repository;
  trunk: Trunk;
  /** The tips a commit on the trunk is reached from (fleet/landed.ts, step 3). */
  trunkTips: readonly string[];
  /** Local branches: short name → tip. */
  branches: Map<string, string>;
  worktrees: WorktreeFacts[];
  ancestry: Ancestry;
  /** The trunk integration is judged against (the remote's, as last fetched, with a remote). */
  integration: IntegrationTrunk | null;
  /** Branches under the prefix, with no checkout, whose work is integrated (not landed). */
  integratedBranches: Set<string>;
  /** `refs/remotes/<remote>/...` as last fetched: short name under the remote → tip (empty without one). */
  remoteBranches: Map<string, string>;
}

export interface SurveyOptions {
  /**
   * Which worktrees get a `git status` (default: all). Leave it unset when all
   * are wanted: the statuses then start before `git worktree list` answers.
   */
  readStatusOf?: (facts: Pick<WorktreeFacts, "isMain" | "isCurrent" | "entry">) => boolean;
  poolSize?: number;
  /** Told each worktree's `git status` (null: unreadable) as it arrives, keyed by path. */
  onStatus?: (path: string, status: StatusSummary | null) => void;
  /**
   * The `git status` of the checkout berth runs in, started by the caller
   * before the repository was even opened (its status is always wanted, and
   * it need not wait for discovery). Used for that checkout instead of a
   * second read.
   */
  currentStatus?: Promise<StatusSummary | null>;
  /** The worktree list and the branches, started by the caller before discovery (fleet-lists.ts). */
  lists?: Promise<FleetLists>;
  /** The fleet's statuses, started by the caller before discovery; taken if its guess holds. */
  early?: EarlyStatuses | null;
}

/** What a survey knows of a worktree before its `git status` and the commit graph are in. */
export type WorktreeSkeleton = Pick<
  WorktreeFacts,
  "entry" | "isMain" | "isCurrent" | "adminKey" | "adminDir" | "marker"
>;

/**
 * A survey under way: the worktrees and branches are known, their statuses
 * and the commit graph are still being read. Whatever needs only the
 * skeleton (activity, receipt files, the first lines of a table) can be read
 * meanwhile, so nothing but in-memory work is left after the last status.
 */
export interface PendingSurvey {
  repo: Repository;
  trunk: Trunk;
  branches: Map<string, string>;
  /** In `git worktree list` order, the main checkout first. */
  worktrees: WorktreeSkeleton[];
  /** The whole survey, once every status and the commit graph are in. */
  complete(): Promise<FleetSurvey>;
}

export async function surveyFleet(
  repo: Repository,
  options: SurveyOptions = {},
): Promise<FleetSurvey> {
  return (await beginSurvey(repo, options)).complete();
}

export async function beginSurvey(
  repo: Repository,
  options: SurveyOptions = {},
): Promise<PendingSurvey> {
  const cwd = repo.location.cwd;
  const lanes = options.poolSize ?? DEFAULT_POOL_SIZE;
  const onStatus = options.onStatus;
  const toplevel = repo.location.toplevel;
  const current = toplevel === null ? undefined : options.currentStatus;
  // Lanes started before discovery, on a guess that discovery has now confirmed.
  const started =
    options.readStatusOf === undefined && options.early?.commonDir === repo.location.commonDir
      ? options.early
      : null;
  const adminKeys = started?.adminKeys ?? readAdminKeys(repo.location.commonDir);
  if (started !== null && onStatus !== undefined) started.listen(onStatus);
  // The per-worktree statuses are nearly all of a survey's cost, so with every
  // status wanted they start at once, on the paths git's own registration
  // files name, while worktree list, for-each-ref and the ancestry run beside
  // them. Each is still read fresh by this survey, never remembered.
  const early =
    started !== null
      ? started.statuses
      : options.readStatusOf === undefined
        ? readStatusesByPath(
            [repo.mainPath, ...adminKeys.keys()].filter(
              (path) => current === undefined || path !== toplevel,
            ),
            lanes,
            onStatus,
          )
        : null;
  // Awaited below; this only keeps a failure there from counting as unhandled meanwhile.
  early?.catch(() => undefined);
  const remote = repo.config.remote.name;
  // Local refs only: the remote's as last fetched. A survey never touches the network.
  // Lists started before the config was read hold no remote refs: with a remote, the
  // remote's are read beside them (origin/HEAD may be in both).
  const remoteRefs = remote === null ? null : listRefs(cwd, [`refs/remotes/${remote}`]);
  const [entries, listed] = await (options.lists ?? startFleetLists(cwd));
  const known = new Set(listed.map((r) => r.ref));
  const refs =
    remoteRefs === null
      ? listed
      : [...listed, ...(await remoteRefs).filter((r) => !known.has(r.ref))];
  const trunk = detectTrunk(repo.config, refs);
  const branches = new Map(
    refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => [r.ref.slice(11), r.oid]),
  );

  const remotePrefix = `refs/remotes/${remote}/`;
  const remoteBranches = new Map(
    remote === null
      ? []
      : refs
          .filter((r) => r.ref.startsWith(remotePrefix) && r.symref === null)
          .map((r) => [r.ref.slice(remotePrefix.length), r.oid]),
  );
  const remoteTrunk = trunk.name === null ? undefined : remoteBranches.get(trunk.name);
  const trunkTips = [
    ...(trunk.tip === null ? [] : [trunk.tip]),
    ...(remoteTrunk === undefined || remoteTrunk === trunk.tip ? [] : [remoteTrunk]),
  ];
  // Every branch tip is a root of the graph: containment finds a tip's
  // containers among the roots that reach it (containment.ts).
  const roots = [
    ...branches.values(),
    ...entries.flatMap((e) => (e.head ? [e.head] : [])),
    ...(remoteTrunk === undefined ? [] : [remoteTrunk]),
  ];
  const times = new Map(refs.flatMap((r) => (r.time === undefined ? [] : [[r.oid, r.time]])));
  const ancestryPromise = readAncestry(cwd, trunk.tip ? [trunk.tip, ...roots] : roots, {
    primary: trunk.tip,
    times,
  });
  // Awaited after the statuses: handled now, so that git failing early is thrown
  // there, not left as an unhandled rejection that kills the process.
  void ancestryPromise.catch(() => undefined);

  const currentPath = await findCurrentPath(entries, repo.location.toplevel);
  const wantStatus = options.readStatusOf ?? (() => true);
  const mainIndex = mainCheckoutIndex(entries, repo);
  // A bare repository's own entry is no checkout: the fleet is its worktrees.
  const partial = entries.flatMap((entry, i) => {
    if (entry.bare) return [];
    const isMain = i === mainIndex;
    const isCurrent = entry.path === currentPath;
    // A bare repository's main checkout is a linked worktree with an admin dir of its own.
    const adminKey = adminKeys.get(entry.path) ?? null;
    const adminDir =
      adminKey !== null
        ? adminDirFor(repo.location.commonDir, adminKey)
        : isMain
          ? repo.location.commonDir
          : null;
    const marker = adminDir && !isMain ? readReadyMarkerSync(adminDir) : null;
    const read = !entry.prunable && wantStatus({ isMain, isCurrent, entry });
    return [
      { entry, isMain, isCurrent, adminKey: isMain ? null : adminKey, adminDir, marker, read },
    ];
  });
  const currentEntry = partial.find((p) => p.isCurrent && p.read);
  const currentRead =
    current === undefined || currentEntry === undefined
      ? null
      : current.then((status) => {
          onStatus?.(currentEntry.entry.path, status);
          return [currentEntry.entry.path, status] as const;
        });

  // What the commit graph says of each row, worked out as soon as it is read
  // (usually while statuses still run), so it adds nothing after the last one.
  const fromGraph = ancestryPromise.then((ancestry) => ({
    ancestry,
    rows: partial.map(({ entry, marker }) => {
      const head = entry.head;
      const tip = trunk.tip;
      return {
        ahead: head !== null && tip !== null ? ancestry.countExclusive(head, tip) : null,
        behind: head !== null && tip !== null ? ancestry.countExclusive(tip, head) : null,
        landed: isLanded(head, marker, entry.branch, trunk, trunkTips, ancestry),
      };
    }),
  }));
  void fromGraph.catch(() => undefined);
  // The integrated rule needs the graph and the refs, not the statuses: its git
  // processes (diff-tree, cat-file) run while the statuses do, not after the last.
  const integratedRead = fromGraph.then(async ({ ancestry }) => {
    const integration = integrationTrunk(refs, trunk.name, remote, ancestry);
    const integrated = await readIntegrated(
      repo,
      refs,
      trunk,
      trunkTips,
      integration,
      partial,
      ancestry,
      lanes,
    );
    return { integration, integrated };
  });
  void integratedRead.catch(() => undefined);

  const complete = async (): Promise<FleetSurvey> => {
    const toRead = partial.filter((p) => p.read).map((p) => p.entry.path);
    const statusByPath = new Map(early === null ? [] : await early);
    if (currentRead !== null) statusByPath.set(...(await currentRead));
    // Worktrees the registration files did not name (added meanwhile, or a path
    // spelled differently) are read now; any status read but not asked for is dropped.
    const missing = toRead.filter((path) => !statusByPath.has(path));
    for (const [path, status] of await readStatusesByPath(missing, lanes, onStatus)) {
      statusByPath.set(path, status);
    }

    const { ancestry, rows } = await fromGraph.catch((error: unknown) => {
      throw unwalkableHistory(error);
    });
    const { integration, integrated } = await integratedRead;
    const worktrees = partial.map(({ read, ...facts }, i): WorktreeFacts => {
      const status = read ? (statusByPath.get(facts.entry.path) ?? null) : null;
      const readable = read ? status !== null : null;
      const counts = rows[i] as (typeof rows)[number];
      const known = readable !== false;
      return {
        ...facts,
        status,
        readable,
        ahead: known ? counts.ahead : null,
        behind: known ? counts.behind : null,
        landed: counts.landed,
        integrated: integrated.worktrees.has(facts.entry.path),
      };
    });
    return {
      repo,
      trunk,
      trunkTips,
      branches,
      worktrees,
      ancestry,
      integration,
      integratedBranches: integrated.branches,
      remoteBranches,
    };
  };
  let completed: Promise<FleetSurvey> | null = null;
  return {
    repo,
    trunk,
    branches,
    worktrees: partial.map(({ read: _read, ...facts }) => facts),
    complete: () => {
      completed ??= complete();
      return completed;
    },
  };
}

/**
 * The integrated rule (fleet/integration.ts) for the rows no other rule
 * classified: worktrees with work of their own that is not landed, and
 * branches under the prefix that no checkout holds.
 */
async function readIntegrated(
  repo: Repository,
  refs: readonly RefEntry[],
  trunk: Trunk,
  trunkTips: readonly string[],
  integration: IntegrationTrunk | null,
  partial: readonly { entry: WorktreeEntry; isMain: boolean; marker: ReadyMarker | null }[],
  ancestry: Ancestry,
  lanes: number,
): Promise<{ worktrees: Set<string>; branches: Set<string> }> {
  const found = { worktrees: new Set<string>(), branches: new Set<string>() };
  if (integration === null || trunk.tip === null) return found;
  const treeOf = new Map(refs.filter((r) => r.tree !== null).map((r) => [r.oid, r.tree]));
  const rows = partial.filter(({ entry, isMain, marker }) => {
    if (isMain || entry.prunable || entry.branch === null) return false;
    if (isLanded(entry.head, marker, entry.branch, trunk, trunkTips, ancestry)) return false;
    return landedQuestion(entry.head, marker?.from_tip ?? null, entry.branch, trunk) !== null;
  });
  const held = new Set(partial.flatMap((p) => (p.entry.branch === null ? [] : [p.entry.branch])));
  const prefix = repo.config.repository.branch_prefix;
  const kept = refs.filter((r) => {
    const name = r.ref.slice(11);
    if (!r.ref.startsWith(`refs/heads/${prefix}`) || held.has(name) || name === trunk.name) {
      return false;
    }
    return !onTrunk(r.oid, trunkTips, ancestry);
  });
  // A tip another branch contains (a train's earlier stage) is judged by its container: its
  // work travels there, and asking for each stage would cost a process per stage.
  // Every branch tip is a root of the walk, so the roots reaching a tip name its containers.
  const allTips = new Set(refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => r.oid));
  const inside = (tip: string) =>
    ancestry.rootsReaching(tip).some((root) => root !== tip && allTips.has(root));
  const tips = [...rows.map((r) => r.entry.head as string), ...kept.map((r) => r.oid)].filter(
    (tip) => !inside(tip),
  );
  const candidates = tips.map((tip) => ({
    tip,
    tree: treeOf.get(tip) ?? null,
    fork: ancestry.forkPoint(tip, integration.tip),
  }));
  const cwd = repo.location.cwd;
  const yes = await findIntegratedTips(cwd, integration, candidates, ancestry, lanes);
  for (const r of rows) if (yes.has(r.entry.head as string)) found.worktrees.add(r.entry.path);
  for (const r of kept) if (yes.has(r.oid)) found.branches.add(r.ref.slice(11));
  return found;
}

/** git could not walk the branches' history (a ref naming a tree or blob, a missing object). */
function unwalkableHistory(error: unknown): Error {
  if (!(error instanceof GitError)) return error as Error;
  const why = error.stderr.trim().split("\n")[0] ?? "";
  return new UserError(
    "precondition_failed",
    `git cannot walk the history of this repository's branches: ${why} (a branch may name something that is not a commit)`,
    { next: shellCommand(["git", "fsck"]) },
  );
}

/** The registered path of the checkout berth runs in; worktree paths may differ by symlinks. */
async function findCurrentPath(
  entries: readonly WorktreeEntry[],
  toplevel: string | null,
): Promise<string | null> {
  if (toplevel === null) return null;
  if (entries.some((e) => e.path === toplevel)) return toplevel;
  for (const entry of entries) {
    const real = await realpath(entry.path).catch(() => null);
    if (real === toplevel) return entry.path;
  }
  return null;
}
