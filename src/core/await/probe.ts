import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { isAncestor } from "../../git/ancestry.js";
import { readRefTips } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { readHeadFile } from "../../io/admin-dirs.js";
import { landingLogDir, readLandingEntries } from "../../io/landing-log.js";
import { monthFileName } from "../../io/month-files.js";
import { readyMarkerPath } from "../../io/paths.js";
import { readReadyMarker } from "../../io/ready-marker.js";
import { receiptPath } from "../../io/receipt-file.js";
import { fileFingerprint, type WatchedFolder } from "../../io/watch.js";
import { isTipIntegrated } from "../fleet/integration.js";
import { landedQuestion } from "../fleet/landed.js";
import { readReceiptView } from "../fleet/receipt-state.js";
import { refFiles, refWatchFolders } from "../fleet/ref-watch.js";
import type { GateDefinition } from "../landing/gate-definition.js";
import { type BranchLanding, landingsOf } from "../landing/landings.js";
import type { AwaitCondition } from "./request.js";
import type { AwaitTarget } from "./target.js";
import type { Probe } from "./wait.js";

/**
 * The await probe: the one place an await condition is evaluated against
 * live state, one evaluation per wake-up (docs/decisions/0012, 0019). In
 * order:
 *   1. nothing to do when the files the answer depends on are untouched
 *      (ref files per fleet/ref-watch.ts, the receipt, marker and HEAD, the
 *      registration, the landing log);
 *   2. the trunk's and the branch's tips, in one for-each-ref run in the
 *      common dir (never in the caller's checkout, which may be removed);
 *   3. trunk-moved: the trunk tip differs from the wait's first one;
 *   4. the branch's new tip is remembered; it is pinned when it is not on
 *      the trunk (work of its own, held while unlanded);
 *   5. landed: a landing record names the branch at a tip it held (or
 *      during the wait), else a pinned tip passes the landed rule
 *      (fleet/survey.ts `landedQuestion`) with live ancestry;
 *   6. green: also met by 5, else by the receipt inspection
 *      (fleet/receipt-state.ts) for a pinned tip the checkout has checked
 *      out, and the checkout's tree now;
 *   7. not met, and the berth's checkout or branch is gone: the answer a
 *      fresh call would give (a refusal ends the wait), or the target as a
 *      fresh call sees it now.
 * It never decides landed or honored itself.
 */

/** What made the condition true: a green waiter is also satisfied by a landing. */
export type MetBy = "receipt" | "landed" | "trunk-moved";

/** Wake-ups answered from unchanged files in a row before git is asked anyway (~30 s of polls). */
export const FULL_CHECK_EVERY = 15;
/** The newest tips kept: a wait sees a handful, a continuation carries them. */
export const MAX_PINNED = 64;
export const MAX_HELD = 256;

export interface Observation {
  met: boolean;
  metBy: MetBy | null;
  tip: string | null;
  trunkTip: string | null;
  /** The branch's commit that landed: a pinned tip on the trunk, or the landing record's tip. */
  landedCommit: string | null;
  /** The landing record that answered; null when the trunk's history did (or nothing landed). */
  landing: BranchLanding | null;
}

/** What a wait remembers between evaluations and, through a continuation, between calls. */
export interface WaitMemory {
  /** Tips the branch held while unlanded, oldest first. */
  pinned: string[];
  /** Every tip the branch was seen at, oldest first. */
  held: string[];
  /** Commits its ready marker named as its fork point: a tip there gained nothing. */
  forkPoints: string[];
  /** The branch was already gone at the wait's start: any landing record naming it answers. */
  goneAtStart: boolean;
  /** When the wait's first call began (ISO). */
  startedAt: string;
  /** The trunk tip at the wait's first call's start. */
  trunkTipAtStart: string | null;
}

export interface ProbeSetup {
  commonDir: string;
  condition: AwaitCondition;
  trunkName: string;
  /**
   * `refs/remotes/<remote>/<trunk>` with `[remote].name`, else null: the
   * landed rule counts work on the remote's trunk as last fetched as landed,
   * as status does (fleet/landed.ts, step 3).
   */
  remoteTrunkRef: string | null;
  target: AwaitTarget | null;
  gate: GateDefinition;
  memory: WaitMemory;
  /**
   * The target as a fresh call would resolve it now, called when the
   * berth's checkout or branch went away; throws that call's refusal.
   */
  reresolve: (() => Promise<AwaitTarget>) | null;
}

/** A fresh wait's memory: nothing seen yet. */
export function freshMemory(
  target: AwaitTarget | null,
  trunkTip: string | null,
  startedAt: Date,
): WaitMemory {
  const fork = target?.worktree?.marker?.from_tip;
  return {
    pinned: [],
    held: [],
    forkPoints: fork === undefined ? [] : [fork],
    goneAtStart: target?.gone ?? false,
    startedAt: startedAt.toISOString(),
    trunkTipAtStart: trunkTip,
  };
}

/**
 * Evaluates one condition against live state and keeps the wait's memory.
 * A wake-up whose files are untouched since the last evaluation reuses its
 * answer without a process, unless the answer hangs on the working tree,
 * which no watched file reflects; every FULL_CHECK_EVERY skips it asks git anyway.
 */
export class ConditionProbe implements Probe<Observation> {
  private readonly trunkRef: string;
  private target: AwaitTarget | null;
  private readonly pinned: string[];
  private readonly held: string[];
  private readonly forkPoints: Set<string>;
  private readonly ancestry = new Map<string, boolean>();
  private fingerprint: string | null = null;
  private last: Observation | null = null;
  /** The last answer depends on the working tree (a receipt for the tip, tree not clean). */
  private dependsOnWorkingTree = false;
  private skipped = 0;

  constructor(private readonly setup: ProbeSetup) {
    this.trunkRef = `refs/heads/${setup.trunkName}`;
    this.target = setup.target;
    this.pinned = [...setup.memory.pinned];
    this.held = [...setup.memory.held];
    this.forkPoints = new Set(setup.memory.forkPoints);
  }

  /** What the wait remembers now (for a continuation). */
  memory(): WaitMemory {
    const { memory } = this.setup;
    return {
      ...memory,
      pinned: [...this.pinned],
      held: [...this.held],
      forkPoints: [...this.forkPoints],
    };
  }

  /** The branch followed now and its checkout (it may have lost it under the wait). */
  currentTarget(): AwaitTarget | null {
    return this.target;
  }

  /** The answer now: evaluated, or the last one when nothing it depends on changed. */
  async observe(): Promise<Observation> {
    // Taken before the reads: a change during the evaluation shows at the next wake-up.
    const fingerprint = fileFingerprint(this.files());
    const unchanged = this.last !== null && fingerprint === this.fingerprint;
    if (unchanged && !this.dependsOnWorkingTree && this.skipped < FULL_CHECK_EVERY) {
      this.skipped += 1;
      return this.last as Observation;
    }
    this.skipped = 0;
    this.last = await this.evaluate(true);
    this.fingerprint = fingerprint;
    return this.last;
  }

  private async evaluate(mayReresolve: boolean): Promise<Observation> {
    this.dependsOnWorkingTree = false;
    const { commonDir, condition } = this.setup;
    const target = this.target;
    const branchRef = target === null ? null : `refs/heads/${target.branch}`;
    // The common dir always exists: the caller's checkout may be removed under the wait.
    const remoteRef = this.setup.remoteTrunkRef;
    const tips = await readRefTips(commonDir, [
      this.trunkRef,
      ...(remoteRef === null ? [] : [remoteRef]),
      ...(branchRef ? [branchRef] : []),
    ]);
    const trunkTip = tips.get(this.trunkRef) ?? null;
    const remoteTip = remoteRef === null ? null : (tips.get(remoteRef) ?? null);
    const trunkTips = [trunkTip, ...(remoteTip === trunkTip ? [] : [remoteTip])];
    const none = { landedCommit: null, landing: null };
    if (condition === "trunk-moved" || target === null || branchRef === null) {
      const met = trunkTip !== this.setup.memory.trunkTipAtStart;
      return { met, metBy: met ? "trunk-moved" : null, tip: trunkTip, trunkTip, ...none };
    }
    const branchTip = tips.get(branchRef) ?? null;
    if (branchTip !== null) await this.noteTip(branchTip, trunkTip);
    const tip = branchTip ?? this.held.at(-1) ?? target.tip;
    const worktree = target.worktree;
    const adminDir = worktree?.adminDir ?? null;
    if (adminDir !== null) {
      // `berth update` moves from_tip when it fast-forwards a fresh berth: re-read it.
      const marker = await readReadyMarker(adminDir);
      if (marker !== null) this.forkPoints.add(marker.from_tip);
    }
    const notMet: Observation = { met: false, metBy: null, tip, trunkTip, ...none };

    const landing = await this.landingRecord(target.branch);
    if (landing !== null) {
      return {
        ...notMet,
        met: true,
        metBy: "landed",
        tip: landing.tip,
        landedCommit: landing.tip,
        landing,
      };
    }
    const pin = await this.pinOnTrunk(target.branch, trunkTips);
    if (pin !== null) return { ...notMet, met: true, metBy: "landed", landedCommit: pin };

    if (condition === "green" && worktree !== null && adminDir !== null && branchTip !== null) {
      if (await this.receiptHonored(worktree, adminDir, target.branch, branchTip)) {
        return { ...notMet, met: true, metBy: "receipt" };
      }
    }
    if (!mayReresolve || !this.targetWentAway(branchTip)) return notMet;
    const fresh = await this.reresolve();
    if (fresh === null) return notMet;
    this.target = fresh;
    if (fresh.gone) this.setup.memory.goneAtStart = true;
    return this.evaluate(false);
  }

  /** The berth's checkout (registration or folder) or its branch went away since the last look. */
  private targetWentAway(branchTip: string | null): boolean {
    const target = this.target;
    if (target === null) return false;
    const w = target.worktree;
    const checkoutGone =
      w !== null &&
      w.adminDir !== null &&
      (!existsSync(join(w.adminDir, "gitdir")) || !existsSync(join(w.entry.path, ".git")));
    return checkoutGone || (branchTip === null && !target.gone);
  }

  private async reresolve(): Promise<AwaitTarget | null> {
    return this.setup.reresolve === null ? null : this.setup.reresolve();
  }

  /** Remembers a tip; pins it when it is not on the trunk as first seen (work of its own). */
  private async noteTip(tip: string, trunkTip: string | null): Promise<void> {
    if (this.held.includes(tip)) return;
    const onTrunk = trunkTip !== null && (await this.isAncestor(tip, trunkTip));
    this.held.push(tip);
    if (this.held.length > MAX_HELD) this.held.shift();
    if (!onTrunk) {
      this.pinned.push(tip);
      if (this.pinned.length > MAX_PINNED) this.pinned.shift();
    }
  }

  /**
   * The newest landing record naming the branch (as itself or as a stage)
   * that belongs to this wait: at a tip it was seen at, recorded since the
   * wait began, or any when the branch was already gone at the start. A
   * record since the start at a tip behind a pinned one landed older work,
   * not the pinned (a stage that moved on while the stack above it gated).
   */
  private async landingRecord(branch: string): Promise<BranchLanding | null> {
    const entries = await readLandingEntries(this.setup.commonDir).catch(() => []);
    const since = Date.parse(this.setup.memory.startedAt);
    const anyCounts = this.setup.memory.goneAtStart;
    for (const landing of landingsOf(entries, branch)) {
      if (anyCounts || this.held.includes(landing.tip)) return landing;
      if (Date.parse(landing.at) >= since && !(await this.behindPinned(landing.tip))) {
        return landing;
      }
    }
    return null;
  }

  private async behindPinned(tip: string): Promise<boolean> {
    for (const pin of this.pinned) {
      if (pin !== tip && (await this.isAncestor(tip, pin))) return true;
    }
    return false;
  }

  /** A pinned tip the landed rule calls landed now (newest first), or null. */
  private async pinOnTrunk(
    branch: string,
    trunkTips: readonly (string | null)[],
  ): Promise<string | null> {
    for (const pin of [...this.pinned].reverse()) {
      for (const tip of trunkTips) {
        const question = landedQuestion(pin, this.forkPoints.has(pin) ? pin : null, branch, {
          name: this.setup.trunkName,
          tip,
        });
        if (question === null) continue;
        if (await this.isAncestor(question.tip, question.trunkTip)) return pin;
        // A squash or rebase merge: the work is in the trunk, the commits are not (spec 13).
        if (await this.isIntegrated(question.tip, question.trunkTip)) return pin;
      }
    }
    return null;
  }

  /** The integrated rule (fleet/integration.ts), asked once per pair of tips. */
  private async isIntegrated(tip: string, trunkTip: string): Promise<boolean> {
    const key = `integrated ${tip} ${trunkTip}`;
    let value = this.ancestry.get(key);
    if (value === undefined) {
      value = await isTipIntegrated(this.setup.commonDir, trunkTip, tip);
      this.ancestry.set(key, value);
    }
    return value;
  }

  /**
   * THE receipt inspection, for a tip of the branch's own (pinned) that the
   * checkout has checked out, and the checkout's tree now. A checkout on
   * another commit (a detached side commit) says nothing about the branch.
   */
  private async receiptHonored(
    worktree: NonNullable<AwaitTarget["worktree"]>,
    adminDir: string,
    branch: string,
    branchTip: string,
  ): Promise<boolean> {
    if (!this.pinned.includes(branchTip) || !existsSync(receiptPath(adminDir))) return false;
    const head = readHeadFile(adminDir);
    const atTip =
      head !== null &&
      ("ref" in head ? head.ref === `refs/heads/${branch}` : head.oid === branchTip);
    if (!atTip) return false;
    const status = await readWorktreeStatus(worktree.entry.path).catch(() => null);
    const view = await readReceiptView(
      this.setup.commonDir,
      {
        ...worktree,
        entry: { ...worktree.entry, head: branchTip },
        status,
        readable: status !== null,
      },
      this.setup.gate,
    );
    this.dependsOnWorkingTree = view.state === "dirty";
    return view.state === "honored";
  }

  /** Live ancestry: equal tips need no process, and each new pair of tips one. */
  private async isAncestor(tip: string, trunkTip: string): Promise<boolean> {
    if (tip === trunkTip) return true;
    const key = `${tip} ${trunkTip}`;
    let value = this.ancestry.get(key);
    if (value === undefined) {
      value = await isAncestor(this.setup.commonDir, tip, trunkTip);
      if (this.ancestry.size > 1024) this.ancestry.clear();
      this.ancestry.set(key, value);
    }
    return value;
  }

  /** The trunk, and the awaited branch if any. */
  private branches(): string[] {
    return [this.setup.trunkName, ...(this.target === null ? [] : [this.target.branch])];
  }

  /** Every file whose change can change the answer (a fingerprint of them tells "untouched"). */
  private files(): string[] {
    const { commonDir, condition } = this.setup;
    const worktree = this.target?.worktree ?? null;
    const adminDir = worktree?.adminDir ?? null;
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0));
    const remoteRef = this.setup.remoteTrunkRef;
    return [
      ...refFiles(commonDir, this.branches()),
      ...(remoteRef === null ? [] : [join(commonDir, remoteRef)]),
      ...(adminDir === null
        ? []
        : [
            receiptPath(adminDir),
            readyMarkerPath(adminDir),
            join(adminDir, "HEAD"),
            join(adminDir, "gitdir"),
          ]),
      ...(worktree === null ? [] : [join(worktree.entry.path, ".git")]),
      ...(condition === "trunk-moved"
        ? []
        : [
            join(landingLogDir(commonDir), monthFileName(now)),
            join(landingLogDir(commonDir), monthFileName(lastMonth)),
          ]),
    ];
  }

  /** Where a change that matters shows up as a file event. */
  folders(): WatchedFolder[] {
    const { commonDir, condition } = this.setup;
    const adminDir = this.target?.worktree?.adminDir ?? null;
    return [
      ...refWatchFolders(commonDir, {
        branches: this.branches(),
        berths: condition === "green" && adminDir !== null ? [adminDir] : [],
        registrations: this.target?.worktree != null,
      }),
      ...(condition === "trunk-moved" ? [] : [{ path: landingLogDir(commonDir) }]),
      ...(this.setup.remoteTrunkRef === null
        ? []
        : [{ path: dirname(join(commonDir, this.setup.remoteTrunkRef)) }]),
    ];
  }
}
