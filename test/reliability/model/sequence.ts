import { performance } from "node:perf_hooks";
import { checkStep, worktreeAt } from "./invariants.js";
import {
  applyVerb,
  applyWorldOp,
  chooseVerbOp,
  chooseWorldOp,
  describeOp,
  isVerb,
  liveBerths,
  type Op,
  type VerbOp,
  type VerbOutcome,
  type WorldOp,
} from "./ops.js";
import { Prng } from "./prng.js";
import { branchesOf, fileView, gitView, type QueueRow, type Snapshot } from "./snapshot.js";
import { randomConfig, World } from "./world.js";

/**
 * One random history. First a random fleet is built with the verbs
 * themselves (trains of varying depth, twins, commits, uncommitted files,
 * locks, hand-landed stages, deleted folders, kept refs), then random hand
 * changes and verbs follow. Every verb, in both phases, is judged against the
 * snapshot taken right before it. The first step that breaks something ends
 * the sequence; the report carries the history so far, to read or to replay
 * from the seed.
 */

export interface SequenceOptions {
  /** How many random verbs follow the fleet: drawn from [min, max]. */
  verbs?: [number, number];
}

export interface SequenceStats {
  verbs: number;
  handChanges: number;
  /** Resource and setup commands that failed on purpose (fault switches). */
  faults: number;
  /** Sum over steps of the commits whose reachability invariant 1 checked. */
  commitsChecked: number;
  byVerb: Record<string, number>;
  /** "<verb>: <outcome>" counts. */
  byCode: Record<string, number>;
  /** Hand changes by kind. */
  byHand: Record<string, number>;
  /** What the verbs did that the invariants care most about. */
  events: Record<string, number>;
  /** Wall time spent, by kind of work (setup, snapshot, hand, each verb). */
  ms: Record<string, number>;
}

export interface SequenceReport {
  seed: number;
  log: string[];
  /** What broke at the failing step; empty when the sequence passed. */
  violations: string[];
  stats: SequenceStats;
}

class Broken extends Error {}

export function emptyStats(): SequenceStats {
  return {
    verbs: 0,
    handChanges: 0,
    faults: 0,
    commitsChecked: 0,
    byVerb: {},
    byCode: {},
    byHand: {},
    events: {},
    ms: {},
  };
}

export async function runSequence(
  seed: number,
  options: SequenceOptions = {},
): Promise<SequenceReport> {
  const rng = new Prng(seed);
  // The queue's choices have a generator of their own: a sequence without a queue
  // episode draws what the same seed drew before the queue was modelled.
  const queueRng = new Prng((seed ^ 0x51ed270b) >>> 0);
  const started = performance.now();
  const world = new World({ ...randomConfig(rng), batch: queueRng.pick([1, 1, 2, 3]) });
  const run = new SequenceRun(rng, world, options, queueRng);
  run.stats.ms.setup = Math.round(performance.now() - started);
  try {
    await run.buildFleet();
    if (queueRng.chance(0.4)) await run.queueEpisode();
    await run.wander();
    run.crossCheck();
  } catch (error) {
    if (!(error instanceof Broken)) {
      run.violations.push(`[harness] ${(error as Error).stack ?? String(error)}`);
    }
  } finally {
    run.stats.faults = world.faultsInjected();
    world.cleanup();
  }
  return { seed, log: run.log, violations: run.violations, stats: run.stats };
}

class SequenceRun {
  readonly stats = emptyStats();
  readonly log: string[];
  violations: string[] = [];
  private before: Snapshot;
  private stale = false;

  constructor(
    private readonly rng: Prng,
    private readonly world: World,
    private readonly options: SequenceOptions,
    private readonly queueRng: Prng,
  ) {
    this.log = [`config ${JSON.stringify(world.config)}`];
    this.before = this.time("snapshot", () => world.snapshot());
  }

  private time<T>(what: string, fn: () => T): T {
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.add(this.stats.ms, what, performance.now() - started);
    }
  }

  private add(into: Record<string, number>, key: string, n = 1): void {
    into[key] = Math.round((into[key] ?? 0) + n);
  }

  /** The snapshot as of now (re-read after hand changes that touch git state). */
  current(): Snapshot {
    if (this.stale) this.before = this.time("snapshot", () => this.world.snapshot());
    this.stale = false;
    return this.before;
  }

  hand(op: WorldOp): void {
    const note = this.time("hand", () => applyWorldOp(this.world, op, this.before, this.rng));
    this.log.push(`${describeOp(op)} -> ${note}`);
    this.stats.handChanges += 1;
    this.add(this.stats.byHand, op.kind);
    // A hand commit may have concluded a merge left in progress: then it is no longer one.
    for (const path of [...this.world.merging]) {
      if (!this.world.mergeHeadExists(path)) this.world.merging.delete(path);
    }
    for (const path of [...this.world.patching]) {
      if (!this.world.amStopped(path)) this.world.patching.delete(path);
    }
    // Edits, fault switches and berth.toml change no ref, registration, ledger entry or resource.
    if (
      !["dirty", "fault", "redefine-gate", "dirty-submodule", "submodule-commit"].includes(op.kind)
    )
      this.stale = true;
  }

  /** The file-read snapshot must agree with what git itself reports. */
  crossCheck(): void {
    const files = fileView(this.world.snapshot());
    const git = gitView(this.world.place);
    if (files.refs !== git.refs || files.worktrees !== git.worktrees) {
      this.violations = [
        `[harness] the snapshot read from files differs from git:\n${JSON.stringify({ files, git }, null, 1)}`,
      ];
    }
  }

  /** Runs one verb and judges it; throws Broken at the first violation. */
  async verb(op: VerbOp): Promise<VerbOutcome> {
    const before = this.current();
    const world = this.world;
    const facts = {
      mainFiles: this.time("snapshot", () => world.mainFiles()),
      mainTrackedDirty:
        op.kind === "accept" &&
        world.git(world.mainPath, ["status", "--porcelain", "--untracked-files=no"]).trim() !== "",
    };
    const started = performance.now();
    const outcome = await applyVerb(world, op, this.rng);
    this.add(this.stats.ms, op.kind, performance.now() - started);
    const after = this.time("snapshot", () => world.snapshot());
    const check = this.time("check", () => checkStep(world, op, outcome, before, after, facts));
    this.stats.verbs += 1;
    this.stats.commitsChecked += check.commitsChecked;
    this.add(this.stats.byVerb, op.kind);
    const code = outcome.ok ? "ok" : (outcome.code ?? "failed");
    const flags = `${op.kind === "prune" && op.contained ? " --contained" : ""}${op.kind === "drop" && op.force ? " --force" : ""}${op.kind === "drop" && op.raced ? " (edited after the plan)" : ""}`;
    this.add(this.stats.byCode, `${op.kind}${flags}: ${code}`);
    this.countEvents(before, after);
    this.countEntries(before.queue, after.queue);
    const why =
      outcome.message === null ? "" : `: ${outcome.message.split("\n")[0]?.slice(0, 160)}`;
    this.log.push(`${describeOp(op)} -> ${code}${why}`);
    this.before = after;
    if (check.violations.length > 0) {
      this.violations = check.violations;
      throw new Broken();
    }
    for (const w of before.worktrees) {
      if (!after.worktrees.some((x) => x.path === w.path && x.folder)) world.forget(w.path);
    }
    return outcome;
  }

  /** Queue entries the verb decided: "entries landed (integration)", "entries rejected", ... */
  private countEntries(before: QueueRow[], after: QueueRow[]): void {
    const was = new Map(before.map((e) => [e.seq, e.state]));
    for (const e of after) {
      if (was.get(e.seq) === e.state || !["landed", "rejected", "withdrawn"].includes(e.state))
        continue;
      const how = e.state === "landed" ? ` (${e.via})` : "";
      this.add(this.stats.events, `entries ${e.state}${how}`);
    }
  }

  private countEvents(before: Snapshot, after: Snapshot): void {
    const gone = before.worktrees.filter((w) => !after.worktrees.some((x) => x.path === w.path));
    if (gone.length > 0) this.add(this.stats.events, "checkouts removed", gone.length);
    const branchesAfter = branchesOf(after);
    const deleted = [...branchesOf(before).keys()].filter((b) => !branchesAfter.has(b));
    if (deleted.length > 0) this.add(this.stats.events, "branches deleted", deleted.length);
    const keptRefs = gone.filter((w) => w.branch !== null && branchesAfter.has(w.branch));
    if (keptRefs.length > 0)
      this.add(this.stats.events, "checkouts removed, ref kept", keptRefs.length);
    if (before.trunkTip !== after.trunkTip) this.add(this.stats.events, "trunk moved");
    const recovery = [...after.refs.keys()].filter(
      (r) => r.startsWith("refs/berth/recovery/") && !before.refs.has(r),
    );
    if (recovery.length > 0) this.add(this.stats.events, "recovery refs written", recovery.length);
  }

  private async start(name: string, from?: string): Promise<string | null> {
    const outcome = await this.verb({ kind: "start", cwd: this.world.mainPath, name, from });
    return outcome.ok ? (outcome.data?.path as string) : null;
  }

  /**
   * A random fleet: one or two trains of depth 1-3 whose stages carry 0-2
   * commits each (0 makes a twin of the stage before), sometimes a stage
   * landed by hand, a twin, uncommitted files, a lock, a detached HEAD, a
   * deleted folder, a hand-made worktree, gates, and kept refs from a reclaim.
   */
  async buildFleet(): Promise<void> {
    const { rng, world } = this;
    const names = ["a", "b", "c", "d"];
    let total = 0;
    for (let t = rng.int(1, 2); t > 0; t--) {
      let base: string | undefined;
      const stages: string[] = [];
      for (let depth = rng.int(1, 3); depth > 0 && total < 3; depth--) {
        const path = await this.start(names[total] as string, base);
        total += 1;
        if (path === null) break;
        const commits = rng.weighted({ zero: 1, one: 4, two: 2 });
        for (let c = commits === "zero" ? 0 : commits === "one" ? 1 : 2; c > 0; c--) {
          const mode = rng.chance(0.15) ? "fail" : rng.chance(0.5) ? "one" : "all";
          this.hand({ kind: "commit", path, mode, file: rng.pick(["f1.txt", "f2.txt", "f3.txt"]) });
        }
        stages.push(path);
        base = worktreeAt(this.current(), path)?.branch ?? undefined;
      }
      if (stages.length > 1 && rng.chance(0.25)) {
        const first = worktreeAt(this.current(), stages[0] as string)?.branch;
        if (first) this.hand({ kind: "land-by-hand", branch: first });
      }
    }
    const live = () => liveBerths(this.current());
    const some = () => rng.pick(live()).path;
    if (live().length > 0 && rng.chance(0.2)) {
      const branch = rng.pick(live()).branch;
      if (branch !== null) await this.start("twin", branch);
    }
    for (const w of live()) {
      if (rng.chance(0.25)) await this.verb({ kind: "gate", cwd: w.path });
    }
    // berth.toml edited between gate and accept: older receipts prove another gate.
    // A timeout change alters nothing but the digest: only the digest can tell.
    if (rng.chance(0.3)) {
      const extra = world.gate.some((c) => c.name === "extra");
      const change = rng.chance(0.5)
        ? "alter-timeout"
        : rng.pick(
            extra
              ? (["remove-extra", "reorder"] as const)
              : (["add-extra", "alter-command"] as const),
          );
      this.hand({ kind: "redefine-gate", change });
    }
    if (live().length > 0 && rng.chance(0.35)) {
      this.hand({
        kind: "dirty",
        path: some(),
        mode: rng.pick(["untracked", "modify"] as const),
        file: rng.pick(["u1.txt", "README.md", "f1.txt"]),
      });
    }
    if (rng.chance(0.15)) {
      this.hand({
        kind: "dirty",
        path: world.mainPath,
        mode: "untracked",
        file: rng.pick(["u1.txt", "f1.txt", "f2.txt"]),
      });
    }
    // Issue 15's states: a submodule (clean or changed inside), a merge left in
    // progress, and an ignored file the trunk then force-adds.
    const quiet = () =>
      live()
        .filter(
          (w) => w.branch !== null && !world.merging.has(w.path) && !world.patching.has(w.path),
        )
        .map((w) => w.path);
    if (quiet().length > 0 && rng.chance(0.15)) {
      const path = rng.pick(quiet());
      this.hand({ kind: "add-submodule", path });
      const inside = rng.weighted({ "dirty-submodule": 2, "submodule-commit": 1, nothing: 1 });
      if (inside !== "nothing") this.hand({ kind: inside, path });
      await this.soon(path, ["gate", "status", "drop"]);
    }
    if (quiet().length > 0 && rng.chance(0.1)) {
      const path = rng.pick(quiet());
      this.hand({ kind: "start-merge", path });
      await this.soon(path, ["update", "gate"]);
    }
    if (quiet().length > 0 && rng.chance(0.1)) {
      // A spent stage someone is applying patches in: clean, idle to the logbook, not to be reclaimed.
      const path = rng.pick(quiet());
      this.hand({ kind: "stop-am", path });
      if (rng.chance(0.7)) await this.verb({ kind: "prune", contained: true, yes: true });
    }
    if (quiet().length > 0 && rng.chance(0.1) && this.current().worktrees[0]?.branch === "main") {
      const path = rng.pick(quiet());
      this.hand({ kind: "ignored-collision", path });
      await this.soon(path, ["update"]);
    }
    if (live().length > 0 && rng.chance(0.15)) this.hand({ kind: "lock", path: some() });
    if (live().length > 0 && rng.chance(0.08)) this.hand({ kind: "detach", path: some() });
    if (live().length > 1 && rng.chance(0.08)) this.hand({ kind: "remove-folder", path: some() });
    if (rng.chance(0.08)) this.hand({ kind: "foreign", branch: `manual-${world.next()}` });
    if (rng.chance(0.25)) await this.verb({ kind: "prune", contained: true, yes: true });
  }

  /**
   * The landing queue (spec section 11), which the wander's accepts use one
   * entry at a time: sometimes a grant ("land when green") first; a few
   * berths submitted with `--no-wait` (a person's, queued; an agent's,
   * awaiting approval), by the MCP `accept` tool or by `berth accept` with
   * no terminal (awaiting approval, or landed at once when granted); while they wait, the trunk moves,
   * a submitted berth gets a commit or an edit, the gate is redefined, a
   * destroy starts failing, entries are approved or withdrawn, a grant is
   * given; then one lander drains them (`queue run`, or another berth's
   * accept), in batches when `[acceptance].batch` says so, or none does and
   * the wander's verbs meet the waiting entries.
   */
  async queueEpisode(): Promise<void> {
    const q = this.queueRng;
    const berths = () =>
      liveBerths(this.current()).filter((w) => w.branch !== null && w.markerId !== null);
    const pool = berths();
    // "Land when green", given before a berth is submitted: an agent's accept of it then lands.
    const granted = pool.length > 0 && q.chance(0.35) ? q.pick(pool).markerId : null;
    if (granted) await this.verb({ kind: "queue-approve", target: granted });
    const submitted: { id: string; path: string }[] = [];
    for (let n = Math.min(pool.length, q.int(1, 3)); n > 0; n--) {
      const [w] = pool.splice(q.int(0, pool.length - 1), 1);
      if (!w?.markerId) continue;
      const mine = granted === w.markerId;
      const by = q.weighted({ person: 5, agent: 2, mcp: mine ? 4 : 1.5, cli: mine ? 2 : 1 });
      const target = w.markerId;
      if (by === "mcp" || by === "cli") {
        await this.verb({ kind: "agent-accept", target, subject: w.path, via: by });
      } else
        await this.verb({ kind: "submit", target, subject: w.path, approved: by === "person" });
      submitted.push({ id: w.markerId, path: w.path });
    }
    if (submitted.length === 0) return;
    for (let k = q.int(0, 3); k > 0; k--) {
      const { id, path } = q.pick(submitted);
      const alive = liveBerths(this.current()).some((w) => w.path === path);
      const others = berths().filter((w) => !submitted.some((s) => s.path === w.path));
      const change = q.weighted({
        trunk: 3,
        commit: alive ? 1.5 : 0,
        dirty: alive ? 1.5 : 0,
        gate: 1,
        fault: 1,
        approve: 2.5,
        withdraw: 1,
        grant: others.length > 0 ? 0.7 : 0,
      });
      if (change === "trunk")
        this.hand({ kind: "commit-trunk", file: q.pick(["t1.txt", "shared.txt", "f1.txt"]) });
      else if (change === "commit")
        this.hand({ kind: "commit", path, mode: q.pick(["all", "fail"] as const), file: "f2.txt" });
      else if (change === "dirty")
        this.hand({ kind: "dirty", path, mode: "untracked", file: q.pick(["u1.txt", "u2.txt"]) });
      else if (change === "gate") this.hand({ kind: "redefine-gate", change: "alter-timeout" });
      else if (change === "fault")
        this.hand({
          kind: "fault",
          fault: "fail-destroy",
          on: !this.world.faults.has("fail-destroy"),
        });
      else if (change === "approve") await this.verb({ kind: "queue-approve", target: id });
      else if (change === "withdraw") await this.verb({ kind: "queue-withdraw", target: id });
      else await this.verb({ kind: "queue-approve", target: q.pick(others).markerId as string });
    }
    const lander = q.weighted({ run: 4, accept: 1.5, none: 1 });
    const others = berths().filter((w) => !submitted.some((s) => s.path === w.path));
    if (lander === "accept" && others.length > 0) {
      const w = q.pick(others);
      const target = w.markerId as string;
      await this.verb({ kind: "accept", cwd: this.world.mainPath, target, subject: w.path });
    } else if (lander !== "none") await this.verb({ kind: "queue-run" });
    if (q.chance(0.25)) await this.verb({ kind: "queue-run" });
  }

  /** Often, a verb aimed right at a berth just put in a new state (else the wander may miss it). */
  private async soon(
    path: string,
    kinds: ("gate" | "status" | "update" | "drop")[],
  ): Promise<void> {
    if (!this.rng.chance(0.7)) return;
    const kind = this.rng.pick(kinds);
    if (kind === "drop") {
      const w = worktreeAt(this.current(), path);
      if (w?.markerId)
        await this.verb({ kind, target: w.markerId, subject: path, force: false, yes: true });
    } else if (kind === "update") await this.verb({ kind, cwd: path, from: undefined });
    else await this.verb({ kind, cwd: path });
  }

  /** Random hand changes and verbs, until the wanted number of verbs has run. */
  async wander(): Promise<void> {
    const { rng, world } = this;
    const [min, max] = this.options.verbs ?? [3, 6];
    const wanted = this.stats.verbs + rng.int(min, max);
    while (this.stats.verbs < wanted) {
      if (rng.chance(0.4)) {
        const op = chooseWorldOp(rng, world, this.before);
        if (op !== null) this.hand(op);
        continue;
      }
      const op = chooseVerbOp(rng, world, this.current());
      const outcome = await this.verb(op);
      if (op.kind === "accept" && outcome.code === "partial") await this.finishAccept(op);
    }
  }

  /** Spec: after a partial landing, running accept again finishes the job. */
  private async finishAccept(op: Extract<VerbOp, { kind: "accept" }>): Promise<void> {
    const subject = op.subject ?? (op.target === undefined ? op.cwd : null);
    const branch = subject === null ? undefined : worktreeAt(this.before, subject)?.branch;
    for (const fault of [...this.world.faults]) this.hand({ kind: "fault", fault, on: false });
    const again = await this.verb({
      kind: "accept",
      cwd: this.world.mainPath,
      target: op.target ?? branch ?? undefined,
      subject,
    });
    if (!again.ok) {
      this.violations = [
        `[invariant 7] accept after a partial landing (faults cleared) did not finish: ${again.code}`,
      ];
      throw new Broken();
    }
  }
}

export type { Op };
export { isVerb };
