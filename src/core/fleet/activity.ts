import { readAdminDirChange, readNewestReflogTime } from "../../io/reflog.js";
import {
  type LastAction,
  type LogbookDigest,
  localProcessProbe,
  type ProcessProbe,
  readLogbookDigest,
} from "../logbook/worktree-digest.js";
import type { Repository } from "../repo/repository.js";
import { mapPool } from "./pool.js";

/**
 * How recently each worktree was worked on, and whether a verb is in flight
 * there: the facts behind status's `running`, `last_action` and
 * `last_activity`, and behind the idle clause of the containment predicate.
 * Files only: no git process per worktree, nothing written.
 */

/** The quiet period that makes a worktree idle when only git's traces can tell (clause 4). */
export const GIT_QUIET_PERIOD_MS = 60 * 60 * 1000;

/** Where the idle question is answered from. */
export type ActivitySignal = "logbook" | "git";

export interface WorktreeActivity {
  /** The verb in flight per the logbook; always null when the logbook is off or unreadable. */
  running: string | null;
  lastAction: LastAction | null;
  /** Later of the HEAD reflog's newest entry and the admin dir's last change. */
  gitActivity: Date | null;
  /** Later of `gitActivity` and the logbook's newest event about this worktree. */
  lastActivity: Date | null;
  /** "logbook" when the logbook is on and was read; otherwise the git-derived fallback. */
  signal: ActivitySignal;
}

export interface FleetActivity {
  logbook: "on" | "off" | "unreadable";
  /** Logbook lines skipped as torn or unknown. */
  skipped: number;
  /** Keyed by worktree path. */
  worktrees: Map<string, WorktreeActivity>;
}

/** The shape of a survey row this needs (WorktreeFacts satisfies it). */
export interface ActivityTarget {
  entry: { path: string; branch: string | null };
  /** The worktree's git admin dir (the common dir for the main checkout). */
  adminDir: string | null;
}

const FILE_POOL_SIZE = 16;

/**
 * Activity for each worktree. The logbook only narrows: off or unreadable,
 * every row gets `running: null`, `signal: "git"`, and callers judge
 * idleness from git's traces alone.
 */
export async function readFleetActivity(
  repo: Pick<Repository, "location" | "config">,
  worktrees: readonly ActivityTarget[],
  now: Date,
  probe: ProcessProbe = localProcessProbe,
): Promise<FleetActivity> {
  let digest: LogbookDigest | null = null;
  let logbook: FleetActivity["logbook"] = "off";
  let skipped = 0;
  if (repo.config.logbook.enabled) {
    try {
      const read = await readLogbookDigest(repo.location.commonDir, now, probe);
      digest = read.digest;
      skipped = read.skipped;
      logbook = "on";
    } catch {
      logbook = "unreadable";
    }
  }
  const rows = await mapPool(worktrees, FILE_POOL_SIZE, async (w) => {
    const gitActivity = w.adminDir === null ? null : await readGitActivity(w.adminDir);
    const facts = digest?.factsFor({ path: w.entry.path, branch: w.entry.branch });
    const activity: WorktreeActivity = {
      running: facts?.running ?? null,
      lastAction: facts?.lastAction ?? null,
      gitActivity,
      lastActivity: laterOf(gitActivity, facts?.lastEventAt ?? null),
      signal: digest === null ? "git" : "logbook",
    };
    return [w.entry.path, activity] as const;
  });
  return { logbook, skipped, worktrees: new Map(rows) };
}

/** Git's own trace of work in a worktree: later of its newest reflog entry and admin dir change. */
export async function readGitActivity(adminDir: string): Promise<Date | null> {
  const [reflog, changed] = await Promise.all([
    readNewestReflogTime(adminDir),
    readAdminDirChange(adminDir),
  ]);
  return laterOf(reflog, changed);
}

/**
 * Clause 4 of the containment predicate (spec section 6): a worktree is idle
 * when, with the logbook on, no verb is in flight for it; with the logbook
 * off (or unreadable), when its git-derived last activity is at least an
 * hour old. An unknown time is not idle. The logbook never makes a worktree
 * eligible by itself deciding anything: an in-flight begin withholds a row.
 */
export function isIdle(activity: WorktreeActivity, now: Date): boolean {
  if (activity.signal === "logbook") return activity.running === null;
  if (activity.gitActivity === null) return false;
  return now.getTime() - activity.gitActivity.getTime() >= GIT_QUIET_PERIOD_MS;
}

function laterOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() >= b.getTime() ? a : b;
}
