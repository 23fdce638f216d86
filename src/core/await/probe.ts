import { existsSync } from "node:fs";
import { isAncestor } from "../../git/ancestry.js";
import { readRefTips } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { readyMarkerPath } from "../../io/paths.js";
import { readReadyMarker } from "../../io/ready-marker.js";
import { receiptPath } from "../../io/receipt-file.js";
import { fileFingerprint, type WatchedFolder } from "../../io/watch.js";
import { readReceiptView } from "../fleet/receipt-state.js";
import { refFiles, refWatchFolders } from "../fleet/ref-watch.js";
import { landedQuestion } from "../fleet/survey.js";
import type { GateDefinition } from "../landing/gate-definition.js";
import type { AwaitCondition } from "./request.js";
import type { AwaitTarget } from "./target.js";
import type { Probe } from "./wait.js";

/**
 * The await probe: the one place an await condition is evaluated against
 * live state, one evaluation per wake-up. In order: nothing to do when the
 * ref files, receipt and marker are untouched (fleet/ref-watch.ts names the
 * ref files); else the trunk's and the branch's tips (one for-each-ref);
 * trunk-moved compares the trunk tip with the one at call start; landed asks
 * the landed rule (fleet/survey.ts) with live ancestry (a process only when
 * a tip or the trunk changed); green is also met by a landing, else by the
 * receipt inspection (fleet/receipt-state.ts) for the tip and the checkout's
 * tree now (one status and one tree read). It never decides landed or
 * honored itself.
 */

/** What made the condition true: a green waiter is also satisfied by a landing. */
export type MetBy = "receipt" | "landed" | "trunk-moved";

/** Wake-ups answered from unchanged files in a row before git is asked anyway (~30 s of polls). */
export const FULL_CHECK_EVERY = 15;

export interface Observation {
  met: boolean;
  metBy: MetBy | null;
  tip: string | null;
  trunkTip: string | null;
}

/**
 * Evaluates one condition against live state; remembers what a deleted
 * branch can no longer say. A wake-up whose ref files, receipt and marker are
 * untouched since the last evaluation reuses its answer without a process
 * (ref values live only in those files), unless the answer hangs on the
 * working tree, which no watched file reflects; every FULL_CHECK_EVERY
 * skips it asks git anyway.
 */
export class ConditionProbe implements Probe<Observation> {
  private readonly trunkRef: string;
  private readonly branchRef: string | null;
  /** The newest tip seen: a branch deleted after landing is judged by it. */
  private lastTip: string | null;
  /** The commit the berth forked from (ready marker); a tip still there gained nothing. */
  private fromTip: string | null;
  private ancestry: { key: string; value: boolean } | null = null;
  /** The last evaluation's tips, and whether the branch was still at its fork point. */
  private previous: { tip: string | null; trunkTip: string | null; fresh: boolean } | null = null;
  private caughtUp: { tip: string; trunkTip: string } | null = null;
  private readonly files: string[];
  private fingerprint: string | null = null;
  private last: Observation | null = null;
  /** The last answer depends on the working tree (a receipt for the tip, tree not clean). */
  private dependsOnWorkingTree = false;
  private skipped = 0;

  constructor(
    private readonly cwd: string,
    private readonly commonDir: string,
    private readonly condition: AwaitCondition,
    private readonly trunkName: string,
    private readonly trunkTipAtStart: string | null,
    private readonly target: AwaitTarget | null,
    private readonly gate: GateDefinition,
  ) {
    this.trunkRef = `refs/heads/${trunkName}`;
    this.branchRef = target === null ? null : `refs/heads/${target.branch}`;
    this.lastTip = target?.tip ?? null;
    this.fromTip = target?.worktree?.marker?.from_tip ?? null;
    const adminDir = target?.worktree?.adminDir ?? null;
    this.files = [
      ...refFiles(commonDir, this.branches()),
      ...(adminDir === null ? [] : [receiptPath(adminDir), readyMarkerPath(adminDir)]),
    ];
  }

  /** The answer now: evaluated, or the last one when nothing it depends on changed. */
  async observe(): Promise<Observation> {
    // Taken before the reads: a change during the evaluation shows at the next wake-up.
    const fingerprint = fileFingerprint(this.files);
    const unchanged = this.last !== null && fingerprint === this.fingerprint;
    if (unchanged && !this.dependsOnWorkingTree && this.skipped < FULL_CHECK_EVERY) {
      this.skipped += 1;
      return this.last as Observation;
    }
    this.skipped = 0;
    this.last = await this.evaluate();
    this.fingerprint = fingerprint;
    return this.last;
  }

  private async evaluate(): Promise<Observation> {
    this.dependsOnWorkingTree = false;
    const tips = await readRefTips(this.cwd, [
      this.trunkRef,
      ...(this.branchRef === null ? [] : [this.branchRef]),
    ]);
    const trunkTip = tips.get(this.trunkRef) ?? null;
    if (this.condition === "trunk-moved" || this.target === null || this.branchRef === null) {
      const met = trunkTip !== this.trunkTipAtStart;
      return { met, metBy: met ? "trunk-moved" : null, tip: trunkTip, trunkTip };
    }
    const branchTip = tips.get(this.branchRef) ?? null;
    if (branchTip !== null) this.lastTip = branchTip;
    const tip = this.lastTip;
    const worktree = this.target.worktree;
    const adminDir = worktree?.adminDir ?? null;
    if (adminDir !== null) {
      // `berth update` moves from_tip when it fast-forwards a fresh berth: re-read it.
      const marker = await readReadyMarker(adminDir);
      if (marker !== null) this.fromTip = marker.from_tip;
    }
    this.noteCatchUp(tip, trunkTip);
    const notMet: Observation = { met: false, metBy: null, tip, trunkTip };
    if (await this.hasLanded(tip, trunkTip)) return { ...notMet, met: true, metBy: "landed" };
    if (this.condition === "landed" || worktree === null || adminDir === null) return notMet;
    if (branchTip === null || !existsSync(receiptPath(adminDir))) return notMet;
    // THE receipt inspection, for the branch's tip now and the checkout's tree now.
    const status = await readWorktreeStatus(worktree.entry.path).catch(() => null);
    const view = await readReceiptView(
      this.cwd,
      {
        ...worktree,
        entry: { ...worktree.entry, head: branchTip },
        status,
        readable: status !== null,
      },
      this.gate,
    );
    this.dependsOnWorkingTree = view.state === "dirty";
    return view.state === "honored" ? { ...notMet, met: true, metBy: "receipt" } : notMet;
  }

  /**
   * A fresh berth fast-forwarded onto the trunk (`berth update`) moves its
   * branch first and its marker's from_tip a moment later. In between, its tip
   * is on the trunk and differs from the recorded fork point, yet nothing
   * landed: a landing moves the trunk, not the branch. So a fresh tip that
   * moved while the trunk stood still is remembered as caught up, not landed,
   * for as long as both stay where they are.
   */
  private noteCatchUp(tip: string | null, trunkTip: string | null): void {
    const before = this.previous;
    if (
      before?.fresh &&
      tip !== null &&
      trunkTip !== null &&
      tip !== before.tip &&
      trunkTip === before.trunkTip
    ) {
      this.caughtUp = { tip, trunkTip };
    }
    this.previous = { tip, trunkTip, fresh: tip !== null && tip === this.fromTip };
  }

  /**
   * The landed rule (fleet/survey.ts `landedQuestion`), with the fork point
   * the marker will name: a tip caught up while the trunk stood still counts
   * as the fork point until either moves.
   */
  private async hasLanded(tip: string | null, trunkTip: string | null): Promise<boolean> {
    const caughtUp = this.caughtUp?.tip === tip && this.caughtUp.trunkTip === trunkTip;
    const question = landedQuestion(
      tip,
      caughtUp ? tip : this.fromTip,
      this.target?.branch ?? null,
      {
        name: this.trunkName,
        tip: trunkTip,
      },
    );
    return question !== null && (await this.isAncestor(question.tip, question.trunkTip));
  }

  /** Live ancestry: equal tips need no process, and each new pair of tips one. */
  private async isAncestor(tip: string, trunkTip: string): Promise<boolean> {
    if (tip === trunkTip) return true;
    const key = `${tip} ${trunkTip}`;
    if (this.ancestry?.key !== key) {
      this.ancestry = { key, value: await isAncestor(this.cwd, tip, trunkTip) };
    }
    return this.ancestry.value;
  }

  /** The trunk, and the awaited branch if any. */
  private branches(): string[] {
    return [this.trunkName, ...(this.target === null ? [] : [this.target.branch])];
  }

  /** Where a change that matters shows up as a file event. */
  folders(): WatchedFolder[] {
    const adminDir = this.target?.worktree?.adminDir ?? null;
    return refWatchFolders(this.commonDir, {
      branches: this.branches(),
      berths: this.condition === "green" && adminDir !== null ? [adminDir] : [],
    });
  }
}
