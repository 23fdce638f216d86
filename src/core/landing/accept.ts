import type { CommitSubject } from "../../git/parse.js";
import type { DiskUsage } from "../../io/disk-usage.js";
import type { LandingRecord } from "../../io/unfinished-landing.js";
import type { PlanStep } from "../../result.js";
import type { TeardownTarget } from "../lifecycle/teardown.js";
import type { Repository } from "../repo/repository.js";
import type { GateData, GateOptions } from "./gate.js";
import type { QueueEntryView } from "./queue-entries.js";

/**
 * `berth accept [<berth>]` (spec sections 5 and 9): the only verb that moves
 * the trunk. Plan (reads only, every refusal), validate (an honored receipt
 * for the tip, or the gate run now on that exact commit), then under the
 * fleet lock: re-check, write a landing record, compare-and-swap the trunk
 * from its planned tip to the validated commit, bring the main checkout's
 * files along when it has the trunk checked out, tear the berth down, and
 * delete its branch by compare-and-swap on the landed commit.
 *
 * A run that stops after the trunk moved returns `partial`; `berth accept`
 * again (naming the berth or its branch) plans only what is left: a berth
 * whose tip is already on the trunk is finished, never landed twice.
 *
 * This module holds the verb's data; the work is split by step:
 *   ./accept-subject.ts        which berth or branch, and the checkout's refusals;
 *   ./accept-plan.ts           the plan: land or finish, every other refusal;
 *   ./accept-apply.ts          under the lock: land, tear down, delete the branch;
 *   ./main-checkout-follow.ts  bringing the main checkout's files along.
 */

export { applyAccept } from "./accept-apply.js";
export { planAccept } from "./accept-plan.js";

export type ValidatedBy = "receipt" | "gate" | "trunk";

export interface LandingFlags {
  trunk_landed: boolean;
  /** null when the main checkout does not have the trunk checked out. */
  main_checkout_updated: boolean | null;
  resources_destroyed: boolean;
  worktree_removed: boolean;
  branch_deleted: boolean;
}

/** Another branch whose commits this landing brings onto the trunk (an earlier stage). */
export interface LandingStage {
  branch: string;
  tip: string;
  /** The checkout holding it, or null for a kept ref. */
  path: string | null;
}

export interface AcceptData {
  id: string;
  branch: string;
  /** The berth's checkout; null when none holds the branch any more. */
  path: string | null;
  /**
   * The commit that lands and what proves it: an honored receipt, the gate
   * run by this accept, or "trunk" when it was already on the trunk (an
   * earlier accept landed it and this run finishes the job).
   */
  validated: { commit: string; by: ValidatedBy; checks: number | null };
  /** The trunk's move: `old` → `new` (equal when this run only finishes). */
  trunk: { name: string; old: string; new: string };
  /** Commits landing, newest first (at most MAX_COMMITS listed), and how many in all. */
  commits: CommitSubject[];
  commit_count: number;
  stages: LandingStage[];
  main_checkout: { path: string; follows_trunk: boolean };
  /** Recorded resources, in the order the teardown destroys them. */
  resources: string[];
  /** Ignored files that go with the checkout; null when there is no checkout. */
  ignored: DiskUsage | null;
  /** The branch deleted after the teardown, or null when berth keeps it. */
  delete_branch: string | null;
  /** This run finishes an earlier landing. */
  resumed: boolean;
  landing: LandingFlags;
  destroyed: string[];
  /** The gate this accept ran; null when a receipt proved the tip (or in a dry run). */
  gate: GateData | null;
  /** The landing-queue entry this accept submitted (absent when it only finished a landing). */
  queue?: QueueEntryView | null;
}

export interface AcceptPlan {
  repo: Repository;
  /** land: validate, move the trunk, tear down. finish: it already landed; the rest remains.
   * integrate: the trunk moved on; the landing queue lands it through an integration commit. */
  mode: "land" | "finish" | "integrate";
  data: AcceptData;
  steps: PlanStep[];
  hints: string[];
  /** The berth's checkout to tear down; null when no checkout holds the branch. */
  teardown: TeardownTarget | null;
  adminDir: string | null;
  /** The tip's tree an honored receipt proves (land mode, by receipt). */
  provenTree: string | null;
  /** Finish: the landing being finished, when recorded. */
  record: LandingRecord | null;
  /** Finish: the main checkout's files have still to follow the trunk from `record.old`. */
  followPending: boolean;
  /** The tip the branch is deleted at (compare-and-swap). */
  branchTip: string | null;
  isCurrent: boolean;
}

export interface AcceptOptions {
  /** A berth id, path or branch; default the checkout berth runs in. */
  target?: string | undefined;
}

export interface AcceptApplyOptions {
  /** Aborting stops a running gate (an interrupt). */
  signal?: AbortSignal | undefined;
  onEvent?: GateOptions["onEvent"];
  /**
   * The queue's throwaway integration berth: its landing is recorded as the
   * entries' own (./queue-finish.ts), never as a landing of its own.
   */
  integration?: boolean;
}
