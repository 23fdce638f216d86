import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { readRefTips } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { perBerthDir, readyMarkerPath } from "../../io/paths.js";
import { readReadyMarker } from "../../io/ready-marker.js";
import { receiptPath } from "../../io/receipt-file.js";
import { fileFingerprint, type WatchedFolder, watchFolders } from "../../io/watch.js";
import type { VerbResult } from "../../result.js";
import { nearestLiveContainer } from "../fleet/containment.js";
import { readReceiptView } from "../fleet/receipt-state.js";
import { type FleetSurvey, surveyFleet, type WorktreeFacts } from "../fleet/survey.js";
import { type GateDefinition, gateDefinitionOf } from "../landing/gate-definition.js";
import { resolveTarget } from "../repo/berth-target.js";
import { openRepository } from "../repo/repository.js";

/**
 * `berth await` (spec section 5): block until a sibling is green, a branch
 * has landed, or the trunk moved. Agents in a train coordinate through it,
 * so it answers from live state at every evaluation, refuses at call start
 * what can never become true, and never waits past its timeout.
 *
 * An evaluation costs one for-each-ref, plus an ancestry check only when a
 * tip or the trunk changed, plus (green, with a receipt on disk) one status
 * and one tree read. Evaluations run at call start, on file events in the
 * ref storage and the berth's receipt folder, and every 2 s as a backstop.
 */

export type AwaitCondition = "green" | "landed" | "trunk-moved";

/** What made the condition true: a green waiter is also satisfied by a landing. */
export type MetBy = "receipt" | "landed" | "trunk-moved";

export interface AwaitOptions {
  green?: string | undefined;
  landed?: string | undefined;
  trunkMoved?: boolean | undefined;
  /** Seconds, as typed. */
  timeout?: string | undefined;
}

export interface AwaitRequest {
  condition: AwaitCondition;
  /** The berth id, path or branch; null for --trunk-moved. */
  target: string | null;
  timeoutS: number;
}

export interface AwaitData {
  met: boolean;
  condition: AwaitCondition;
  /** The awaited branch; the trunk for --trunk-moved. */
  branch: string | null;
  /** The checkout holding the branch at call start, if any. */
  path: string | null;
  /** The branch tip at the last evaluation (the last tip seen, if the branch was deleted). */
  tip: string | null;
  trunk: string | null;
  trunk_tip: string | null;
  trunk_tip_at_start: string | null;
  met_by: MetBy | null;
  timeout_s: number;
  waited_ms: number;
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before the condition held. */
  interrupted: boolean;
}

export const DEFAULT_TIMEOUT_S = 3300;
/** The backstop: file events are fast but not guaranteed. */
export const POLL_MS = 2000;
/** Events this close together cause one evaluation (a ref update is several file operations). */
export const DEBOUNCE_MS = 75;
/** Exit codes other than 0/1/2 (docs/decisions/0012-await.md). */
export const EXIT_NOT_MET = 124;
export const EXIT_INTERRUPTED = 130;

/** Wake-ups answered from unchanged files in a row before git is asked anyway (~30 s of polls). */
export const FULL_CHECK_EVERY = 15;

/** setTimeout's limit; longer waits are ended by the poll's deadline check instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface AwaitRun {
  /** Aborting stops the wait promptly (Ctrl-C). */
  signal?: AbortSignal | undefined;
  /** Called once when the verb starts waiting (not when it answers at once). */
  onWaiting?: ((data: AwaitData) => void) | undefined;
  /** A failed re-evaluation (it is retried at the next event or poll). */
  onEvaluationError?: ((error: unknown) => void) | undefined;
}

/** Exactly one condition and a non-negative timeout, or a usage error (exit 2). */
export function parseAwaitRequest(options: AwaitOptions): AwaitRequest {
  const chosen: Array<[AwaitCondition, string | null]> = [];
  if (options.green !== undefined) chosen.push(["green", options.green]);
  if (options.landed !== undefined) chosen.push(["landed", options.landed]);
  if (options.trunkMoved === true) chosen.push(["trunk-moved", null]);
  if (chosen.length !== 1) {
    throw new UserError(
      "usage",
      chosen.length === 0
        ? "berth await needs a condition: --green <berth>, --landed <berth> or --trunk-moved."
        : `berth await waits for exactly one condition, not ${chosen.length} (${chosen
            .map(([c]) => `--${c}`)
            .join(", ")}).`,
      { next: "berth await --green <berth> | --landed <berth> | --trunk-moved" },
    );
  }
  const [condition, target] = chosen[0] as [AwaitCondition, string | null];
  if (target !== null && target.trim() === "") {
    throw new UserError("usage", `--${condition} needs a berth id, path or branch.`, {
      next: `berth await --${condition} <berth>`,
    });
  }
  return { condition, target, timeoutS: parseTimeout(options.timeout) };
}

function parseTimeout(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_TIMEOUT_S;
  const text = raw.trim();
  const seconds = /^(\d+(\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(seconds)) {
    throw new UserError(
      "usage",
      `--timeout "${raw}": expected a number of seconds, 0 or more (0 checks once).`,
      { next: `berth await ... --timeout ${DEFAULT_TIMEOUT_S}` },
    );
  }
  return seconds;
}

export async function runAwait(
  ctx: Context,
  options: AwaitOptions,
  run: AwaitRun = {},
): Promise<VerbResult<AwaitData>> {
  const request = parseAwaitRequest(options);
  const startedAt = performance.now();
  const repo = await openRepository(ctx);
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  const { trunk } = survey;
  if (trunk.name === null) {
    throw new UserError(
      "precondition_failed",
      "No trunk found (no origin/HEAD, main or master), so nothing can land or move.",
      { next: "set [repository].trunk in berth.toml" },
    );
  }
  const target =
    request.target === null || request.condition === "trunk-moved"
      ? null
      : resolveAwaitTarget(survey, repo.location.cwd, request.target, request.condition);

  const probe = new ConditionProbe(
    repo.location.cwd,
    repo.location.commonDir,
    request.condition,
    trunk.name,
    trunk.tip,
    target,
    gateDefinitionOf(repo.config.gate),
  );
  if (request.condition === "green" && target !== null && target.worktree === null) {
    // No checkout, no receipt: only a landing that already happened can answer now.
    const now = await probe.observe();
    if (!now.met) refuseGreenWithoutCheckout(survey, target);
  }

  const caller = survey.worktrees.find((w) => w.isCurrent);
  // The row that is waiting is the caller's: status shows `running: await` there.
  ctx.journal.begin({
    branch: caller?.entry.branch ?? null,
    path: caller?.entry.path ?? repo.location.toplevel,
  });

  const dataOf = (observation: Observation, ending: Ending): AwaitData => ({
    met: ending === "met",
    condition: request.condition,
    branch: target?.branch ?? trunk.name,
    path: target?.worktree?.entry.path ?? null,
    tip: observation.tip,
    trunk: trunk.name,
    trunk_tip: observation.trunkTip,
    trunk_tip_at_start: trunk.tip,
    met_by: ending === "met" ? observation.metBy : null,
    timeout_s: request.timeoutS,
    waited_ms: Math.round(performance.now() - startedAt),
    interrupted: ending === "interrupted",
  });

  const { observation, ending } = await waitFor(probe, {
    timeoutMs: request.timeoutS * 1000,
    folders: probe.folders(),
    signal: run.signal,
    onWaiting: (first) => run.onWaiting?.(dataOf(first, "timeout")),
    onEvaluationError: run.onEvaluationError,
  });
  const data = dataOf(observation, ending);
  const exitCode =
    ending === "met" ? undefined : ending === "interrupted" ? EXIT_INTERRUPTED : EXIT_NOT_MET;
  return {
    ok: true,
    verb: "await",
    data,
    hints: hintsFor(data),
    ...(exitCode === undefined ? {} : { exitCode }),
  };
}

/** The branch an await follows, and the checkout holding it (null when none does). */
export interface AwaitTarget {
  branch: string;
  /** The tip at call start. */
  tip: string;
  worktree: WorktreeFacts | null;
}

/**
 * `<t>` as a berth id, path or branch. A checkout is found by the shared
 * resolver; a branch no checkout holds is found by name (as given, or with
 * the branch prefix: a reclaimed berth's id). Never guesses between them.
 */
export function resolveAwaitTarget(
  survey: FleetSurvey,
  cwd: string,
  argument: string,
  condition: Exclude<AwaitCondition, "trunk-moved">,
): AwaitTarget {
  const verb = `await --${condition}`;
  const prefix = survey.repo.config.repository.branch_prefix;
  const name = argument.replace(/^refs\/heads\//, "");
  const held = new Set(survey.worktrees.flatMap((w) => (w.entry.branch ? [w.entry.branch] : [])));
  const unheld = [...new Set([name, `${prefix}${name}`])].filter(
    (b) => survey.branches.has(b) && !held.has(b),
  );

  let worktree: WorktreeFacts | null = null;
  try {
    worktree = resolveTarget(survey, cwd, argument, verb);
  } catch (error) {
    if (!(error instanceof UserError && error.code === "unknown_target")) throw error;
    if (unheld.length === 0) {
      throw new UserError(
        "unknown_target",
        `No berth, worktree or branch of this repository is "${argument}" (by id, path or branch).`,
        { next: error.next, data: error.data },
      );
    }
  }
  const candidates = [...(worktree?.entry.branch ? [worktree.entry.branch] : []), ...unheld];
  if (candidates.length > 1 || (worktree !== null && unheld.length > 0)) {
    throw new UserError(
      "ambiguous_target",
      `"${argument}" matches ${candidates.length} branches: ${candidates.join(", ")}${
        worktree
          ? ` (${worktree.entry.branch ?? "detached"} is checked out at ${worktree.entry.path})`
          : ""
      }.`,
      { next: `berth ${verb} <branch> (name the full branch)`, data: { candidates } },
    );
  }

  const branch = worktree === null ? (unheld[0] as string) : worktree.entry.branch;
  if (branch === null || worktree?.entry.detached) {
    throw new UserError(
      "precondition_failed",
      `${worktree?.entry.path ?? argument} has a detached HEAD; await follows a branch.`,
      { next: `berth ${verb} <branch>` },
    );
  }
  if (branch === survey.trunk.name) {
    throw new UserError(
      "precondition_failed",
      `${branch} is the trunk; --${condition} follows a berth's branch onto the trunk.`,
      { next: "berth await --trunk-moved" },
    );
  }
  const tip = survey.branches.get(branch) ?? worktree?.entry.head ?? null;
  if (tip === null) {
    throw new UserError("precondition_failed", `${branch} has no commits yet.`, {
      next: "berth status",
    });
  }
  // A registration whose folder is gone holds the branch in name only.
  const live = worktree !== null && !worktree.entry.prunable ? worktree : null;
  return { branch, tip, worktree: live };
}

/**
 * A branch no checkout holds has no receipt and can never turn green (its
 * receipt died with its checkout, ADR 0225). Point at the stage that carries
 * its commits, and at --landed for the arrival question.
 */
function refuseGreenWithoutCheckout(survey: FleetSurvey, target: AwaitTarget): never {
  const container = nearestLiveContainer(survey, target.branch);
  const why =
    `No checkout holds ${target.branch} (never started, dropped, or reclaimed as a contained stage), ` +
    "so it has no gate receipt and can never turn green.";
  const pointer =
    container === null
      ? " No branch with a checkout contains its commits."
      : ` Its commits travel inside ${container.container} (${container.container_ahead} commit(s) further), ` +
        `which has a checkout: await --green ${container.container} instead.`;
  throw new UserError(
    "unknown_target",
    `${why}${pointer} To wait for its commits to reach the trunk, use --landed ${target.branch}.`,
    {
      next:
        container === null
          ? `berth await --landed ${target.branch}`
          : `berth await --green ${container.container}`,
      data: {
        branch: target.branch,
        tip: target.tip,
        contained_by: container?.container ?? null,
        container_tip: container?.container_tip ?? null,
        container_ahead: container?.container_ahead ?? null,
      },
    },
  );
}

interface Observation {
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
class ConditionProbe {
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
    trunkName: string,
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
      join(commonDir, this.trunkRef),
      ...(this.branchRef === null ? [] : [join(commonDir, this.branchRef)]),
      join(commonDir, "packed-refs"),
      join(commonDir, "reftable", "tables.list"),
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
    if (await this.isLanded(tip, trunkTip)) return { ...notMet, met: true, metBy: "landed" };
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

  /** Reachable from the trunk, and not a fresh fork still at (or caught up from) its fork point. */
  private async isLanded(tip: string | null, trunkTip: string | null): Promise<boolean> {
    if (tip === null || trunkTip === null) return false;
    if (this.fromTip !== null && tip === this.fromTip) return false;
    if (this.caughtUp?.tip === tip && this.caughtUp.trunkTip === trunkTip) return false;
    if (tip === trunkTip) return true;
    const key = `${tip} ${trunkTip}`;
    if (this.ancestry?.key !== key) {
      this.ancestry = { key, value: await isAncestor(this.cwd, tip, trunkTip) };
    }
    return this.ancestry.value;
  }

  /** Where a change that matters shows up as a file event. */
  folders(): WatchedFolder[] {
    const { commonDir } = this;
    const heads = join(commonDir, "refs", "heads");
    const folders: WatchedFolder[] = [
      { path: heads },
      { path: dirname(join(commonDir, this.trunkRef)) },
      // Packing moves refs into packed-refs (written via packed-refs.lock, then renamed).
      { path: commonDir, accepts: (name) => name.startsWith("packed-refs") },
      { path: join(commonDir, "reftable") },
    ];
    if (this.branchRef !== null) folders.push({ path: dirname(join(commonDir, this.branchRef)) });
    const adminDir = this.target?.worktree?.adminDir ?? null;
    if (this.condition === "green" && adminDir !== null) {
      folders.push({ path: perBerthDir(adminDir) });
    }
    const seen = new Set<string>();
    return folders.filter((f) => !seen.has(f.path) && seen.add(f.path));
  }
}

type Ending = "met" | "timeout" | "interrupted";

interface WaitOptions {
  timeoutMs: number;
  folders: WatchedFolder[];
  signal: AbortSignal | undefined;
  onWaiting: (first: Observation) => void;
  onEvaluationError: ((error: unknown) => void) | undefined;
}

/**
 * Evaluates at once, then on every wake-up (a debounced file event, the
 * poll, the deadline, an interrupt) until the condition holds, the deadline
 * passes or the signal aborts. Wake-ups that arrive during an evaluation
 * coalesce into one more evaluation; between them the process sleeps.
 */
async function waitFor(
  probe: ConditionProbe,
  options: WaitOptions,
): Promise<{ observation: Observation; ending: Ending }> {
  const { signal } = options;
  let observation = await probe.observe();
  if (observation.met) return { observation, ending: "met" };
  if (signal?.aborted) return { observation, ending: "interrupted" };
  if (options.timeoutMs <= 0) return { observation, ending: "timeout" };

  const deadline = performance.now() + options.timeoutMs;
  const wake = new Wakeup();
  const watch = watchFolders(options.folders, wake.fire, {
    debounceMs: DEBOUNCE_MS,
    pollMs: POLL_MS,
  });
  const timer = setTimeout(wake.fire, Math.min(options.timeoutMs, MAX_TIMER_MS));
  signal?.addEventListener("abort", wake.fire);
  options.onWaiting(observation);
  try {
    for (;;) {
      await wake.next();
      if (signal?.aborted) return { observation, ending: "interrupted" };
      const pastDeadline = performance.now() >= deadline;
      try {
        observation = await probe.observe();
      } catch (error) {
        options.onEvaluationError?.(error);
      }
      if (observation.met) return { observation, ending: "met" };
      if (signal?.aborted) return { observation, ending: "interrupted" };
      if (pastDeadline || performance.now() >= deadline) return { observation, ending: "timeout" };
    }
  } finally {
    watch.close();
    clearTimeout(timer);
    signal?.removeEventListener("abort", wake.fire);
  }
}

/** A wake-up flag: `fire` resolves the pending `next()`, or makes the next one resolve at once. */
class Wakeup {
  private pending = false;
  private resume: (() => void) | null = null;

  readonly fire = (): void => {
    const resume = this.resume;
    if (resume === null) {
      this.pending = true;
      return;
    }
    this.resume = null;
    resume();
  };

  next(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.resume = resolve;
    });
  }
}

function hintsFor(data: AwaitData): string[] {
  if (data.interrupted) return [];
  if (!data.met) {
    return [
      data.timeout_s === 0
        ? "checked once (--timeout 0); give a timeout in seconds to wait"
        : `not met within ${data.timeout_s}s; run berth await again to keep waiting`,
    ];
  }
  if (data.condition === "green" && data.tip !== null) {
    return [
      `build on it: berth start --from ${data.tip} (a new stage), or berth update --from ${data.tip} (merge it into this berth)`,
    ];
  }
  return [`berth update merges the new ${data.trunk ?? "trunk"} into this berth`];
}
