import { GitError } from "../../errors.js";
import { countLeftRight, type WalkedCommit, walkHistory } from "../../git/ancestry.js";
import { hasCommitGraphFile } from "../../io/commit-graph-file.js";
import { thousands } from "../../text.js";
import { EMPTY, NO_PARENTS, PaintedAncestry, PaintTable, TimeHeap } from "./painted-ancestry.js";

/**
 * The fleet's commit graph, read once: one history walk from the trunk and
 * every branch tip and worktree head (the roots), newest first, stopped as
 * soon as every root's history has met the others'. Ancestry, ahead and
 * behind counts then follow in memory, so classifying N branches costs one
 * git process, never one per branch or per pair (spec section 10).
 *
 * The walk paints each commit with the set of roots that reach it. Commits
 * every root reaches count for no question ("a not b" needs a root that does
 * not reach it), so the walk stops once nothing it has yet to read can change
 * a paint that is not full (docs/decisions/0031):
 *   - every root has been read, and every commit still waiting to be read (a
 *     parent named but not printed yet) is reached by every root; and
 *   - every commit read so far whose paint is not full is newer than the
 *     commit just read: with parents never newer than their children, nothing
 *     still to come descends from it. (Equal times keep the walk going, so a
 *     history written within one second is read to the end.)
 * A branch far behind the trunk therefore costs one walk down to where it
 * forked — the walk its behind count needs — and nothing for any other row.
 */
export interface Ancestry {
  /** Whether `ancestor` is reachable from `descendant` (equal commits count). */
  isAncestor(ancestor: string, descendant: string): boolean;
  /** Commits reachable from `from` and not from `not`. */
  countExclusive(from: string, not: string): number;
  /**
   * The roots `commit` is reachable from (itself included when it is one):
   * its descendants among the commits the graph was read from.
   */
  rootsReaching(commit: string): readonly string[];
  /** How many commits the walk read. */
  readonly walked: number;
  /** Commits git's count of a far root went through (its behind and ahead counts); 0 without one. */
  readonly countedByGit: number;
  /**
   * The first commit on `tip`'s first-parent line that `trunkTip` reaches
   * (where the branch forked), or null when the graph cannot tell.
   */
  forkPoint(tip: string, trunkTip: string): string | null;
  /**
   * The one best common ancestor of two roots (`git merge-base --all` would
   * print just it), or null when there are several or the graph cannot tell.
   */
  mergeBase(tip: string, trunkTip: string): string | null;
}

export interface AncestryOptions {
  /** The trunk's tip (one of the roots): counts against it are asked of every row. */
  primary?: string | null;
  /**
   * Committer times of the roots, as far as known (they come free with the
   * refs). A single root far behind the rest, with a known time, is counted by
   * git instead of read (see AncestryBuilder): git's count walks the history
   * faster than berth reads what a walk prints, commit-graph or not.
   */
  times?: ReadonlyMap<string, number>;
}

export async function readAncestry(
  cwd: string,
  roots: readonly string[],
  options: AncestryOptions = {},
): Promise<Ancestry> {
  const unique = [...new Set(roots)];
  if (unique.length <= 1) return singleCommitAncestry(unique);
  const primary = options.primary ?? null;
  const handOff: HandOff | null =
    options.times !== undefined && primary !== null && unique.includes(primary)
      ? { primary, times: options.times, minWalk: HAND_OFF_MIN_WALK }
      : null;
  const builder = new AncestryBuilder(unique, handOff);
  await walkHistory(cwd, unique, (commit) => builder.add(commit));
  const far = builder.handedOff();
  if (far !== null && primary !== null) {
    const { left, right } = await countLeftRight(cwd, primary, far);
    return builder.finish({ behind: left, ahead: right });
  }
  // git prints every commit it was asked to walk from; one it skipped is no commit.
  const notCommit = builder.unreadRoots()[0];
  if (notCommit !== undefined) {
    throw new GitError(["rev-list", "--stdin"], 128, `error: object ${notCommit} is not a commit`);
  }
  return builder.finish();
}

/**
 * The walk reads at least this far before handing a far root to git: below it, reading on is
 * cheaper. Starting git for the count costs about 5 ms; reading a printed commit about 10 µs
 * (measured: 2,005 commits read 15–30 ms before the count, 30 read 4 ms, docs/decisions/0031).
 */
export const HAND_OFF_MIN_WALK = 500;

/** A walk this long is worth a commit-graph file: a few hundred milliseconds without one. */
export const LONG_WALK_COMMITS = 10_000;

/**
 * The hint for a long walk in a repository without a commit-graph file
 * (docs/decisions/0031); null when the walk was short or git has one. berth
 * never writes one itself: it changes the repository, so the user decides.
 */
export function longWalkHint(ancestry: Ancestry, commonDir: string): string | null {
  const history = ancestry.walked + ancestry.countedByGit;
  if (history < LONG_WALK_COMMITS || hasCommitGraphFile(commonDir)) return null;
  return (
    `reading the fleet walked ${thousands(history)} commits of history ` +
    "(a branch far behind the trunk) in a repository with no commit-graph file: " +
    "git commit-graph write --reachable makes git's history walks, this one included, several times faster"
  );
}

function singleCommitAncestry(roots: readonly string[]): Ancestry {
  return {
    isAncestor: (a, b) => a === b,
    countExclusive: () => 0,
    rootsReaching: (commit) => roots.filter((root) => root === commit),
    walked: 0,
    countedByGit: 0,
    forkPoint: (tip, trunkTip) => (tip === trunkTip ? tip : null),
    mergeBase: (tip, trunkTip) => (tip === trunkTip ? tip : null),
  };
}

/** Commits read past the point where the walk may stop, against small clock skew (as git's own walks do). */
const SLOP = 5;

/** What the builder needs to hand one far root to git. */
export interface HandOff {
  primary: string;
  /** Committer times of the roots; a root without one is never handed off. */
  times: ReadonlyMap<string, number>;
  minWalk: number;
}

/** git's counts for the root handed off, against the primary root. */
export interface FarCounts {
  /** Commits the primary reaches and the far root does not (its behind count). */
  behind: number;
  /** Commits the far root reaches and the primary does not (its ahead count). */
  ahead: number;
}

/**
 * Builds the in-memory graph from a walk, newest first (or from any commit
 * list, for tests and the benchmark); `add` answers whether the walk may stop.
 *
 * The hand-off (given the roots' times): when every root but one (D) has
 * been read and has met the others — every commit still waiting to be read
 * is reached by all of them — and D itself is older than everything read, the
 * walk stops there instead of reading on down to where D forked. Nothing read
 * can then be reached from D (it is older), every read root reaches all that
 * is left below, so git's two counts of D against the primary
 * (`rev-list --left-right --count`) answer every question about D exactly:
 * `D not x` is D's ahead count for every read root x, and `x not D` is x's
 * read commits plus what lies below the walk outside D's history — the
 * primary's count less its own read commits.
 */
export class AncestryBuilder {
  private readonly rootCount: number;
  private readonly index = new Map<string, number>();
  private readonly oids: string[] = [];
  private readonly parents: number[][] = [];
  private readonly received: boolean[] = [];
  private readonly times: number[] = [];
  /** Each commit's paint (an id into `paints`): the roots known to reach it. */
  private readonly paintOf: number[] = [];
  private readonly paints: PaintTable;
  /** Commits named but not read yet whose paint is not full. */
  private waitingOpen = 0;
  private rootsUnread: number;
  /** Commits read whose paint is not full, oldest first (stale entries skipped on sight). */
  private readonly openRead = new TimeHeap();
  private slop = 0;
  private walkedCount = 0;
  /** Once one root is left unread (hand-off only): it, and the bookkeeping against it. */
  private far: { node: number; single: number } | null = null;
  /** Commits named but not read yet (the far root aside) that some read root does not reach. */
  private waitingNotMet = 0;
  /** Commits read that some read root does not reach, oldest first (stale entries skipped). */
  private readonly notMetRead = new TimeHeap();
  private handOffTo: string | null = null;

  constructor(
    roots: readonly string[],
    private readonly handOff: HandOff | null = null,
  ) {
    const unique = [...new Set(roots)];
    this.rootCount = unique.length;
    this.rootsUnread = unique.length;
    this.paints = new PaintTable(unique.length);
    unique.forEach((root, bit) => {
      const node = this.node(root);
      this.setPaint(node, this.paints.single(bit));
    });
  }

  /** Reads one commit of the walk; true when nothing further can change an answer. */
  add(commit: WalkedCommit): boolean {
    this.walkedCount++;
    const node = this.node(commit.commit);
    if (this.received[node]) return false;
    this.received[node] = true;
    this.times[node] = commit.time;
    if (node < this.rootCount) this.rootsUnread--;
    const paint = this.paintOf[node] as number;
    if (!this.paints.isFull(paint)) {
      this.waitingOpen--;
      this.openRead.push(commit.time, node);
    }
    if (this.far !== null) {
      if (node === this.far.node) this.far = null;
      else if (!this.metByReadRoots(paint)) {
        this.waitingNotMet--;
        this.notMetRead.push(commit.time, node);
      }
    }
    const parents = new Array<number>(commit.parents.length);
    for (let i = 0; i < parents.length; i++) parents[i] = this.node(commit.parents[i] as string);
    this.parents[node] = parents;
    this.spread(node);
    if (
      this.handOff !== null &&
      this.far === null &&
      this.rootsUnread === 1 &&
      node < this.rootCount
    ) {
      this.watchFarRoot();
    }
    return this.mayStop(commit.time);
  }

  /** The root left to git, once the walk stopped for it; null when it stopped (or ended) on its own. */
  handedOff(): string | null {
    return this.handOffTo;
  }

  /** Roots the walk has not printed (at its end: roots that are not commits). */
  unreadRoots(): string[] {
    return this.oids.slice(0, this.rootCount).filter((_, node) => !this.received[node]);
  }

  /** The graph; `far` gives git's counts for the root handed off (required when there is one). */
  finish(far?: FarCounts): Ancestry {
    const farRoot =
      this.handOffTo === null || this.handOff === null
        ? null
        : {
            node: this.index.get(this.handOffTo) as number,
            primary: this.index.get(this.handOff.primary) as number,
            counts: far ?? { behind: 0, ahead: 0 },
          };
    if (farRoot !== null && far === undefined)
      throw new Error("finish: the far root's counts are missing");
    return new PaintedAncestry(
      this.rootCount,
      this.index,
      this.oids,
      this.parents,
      this.received,
      this.paintOf,
      this.paints,
      this.walkedCount,
      farRoot,
    );
  }

  private node(oid: string): number {
    const known = this.index.get(oid);
    if (known !== undefined) return known;
    const node = this.oids.length;
    this.index.set(oid, node);
    this.oids.push(oid);
    this.parents.push(NO_PARENTS);
    this.received.push(false);
    this.times.push(0);
    this.paintOf.push(EMPTY);
    this.waitingOpen++;
    if (this.far !== null) this.waitingNotMet++;
    return node;
  }

  /** Sets a commit's paint; false when it did not change. */
  private setPaint(node: number, paint: number): boolean {
    const old = this.paintOf[node] as number;
    if (old === paint) return false;
    this.paintOf[node] = paint;
    if (!this.received[node] && !this.paints.isFull(old) && this.paints.isFull(paint)) {
      this.waitingOpen--;
    }
    if (
      this.far !== null &&
      !this.received[node] &&
      node !== this.far.node &&
      !this.metByReadRoots(old) &&
      this.metByReadRoots(paint)
    ) {
      this.waitingNotMet--;
    }
    return true;
  }

  /** Reached by every root but the far one (which no read commit can be reached from). */
  private metByReadRoots(paint: number): boolean {
    const far = this.far as { single: number };
    return this.paints.isFull(this.paints.union(paint, far.single));
  }

  /** One root is left unread: from now on, count what the read roots have not met. */
  private watchFarRoot(): void {
    const handOff = this.handOff as HandOff;
    const node = this.oids.findIndex((_, n) => n < this.rootCount && !this.received[n]);
    if (node === -1 || this.oids[node] === handOff.primary) return;
    this.far = { node, single: this.paints.single(node) };
    this.waitingNotMet = 0;
    for (let n = 0; n < this.oids.length; n++) {
      if (n === node || this.metByReadRoots(this.paintOf[n] as number)) continue;
      if (this.received[n]) this.notMetRead.push(this.times[n] as number, n);
      else this.waitingNotMet++;
    }
  }

  /**
   * Whether the walk may end here and leave the one unread root to git (the
   * hand-off, see the class comment): the read roots have met, the far root
   * is older than everything read and no read commit is waiting on it.
   */
  private mayHandOff(lastTime: number): boolean {
    const far = this.far;
    const handOff = this.handOff;
    if (far === null || handOff === null) return false;
    if (this.walkedCount < handOff.minWalk || this.waitingNotMet > 0) return false;
    // No read commit names the far root as a parent unless every read root already reaches it.
    const farPaint = this.paintOf[far.node] as number;
    if (farPaint !== far.single && !this.paints.isFull(farPaint)) return false;
    const farTime = handOff.times.get(this.oids[far.node] as string);
    if (farTime === undefined || farTime >= lastTime) return false;
    while (
      this.notMetRead.size > 0 &&
      this.metByReadRoots(this.paintOf[this.notMetRead.topNode()] as number)
    ) {
      this.notMetRead.pop();
    }
    return this.notMetRead.size === 0 || this.notMetRead.topTime() > lastTime;
  }

  /** Pushes a commit's paint down to its parents, and on through any already read. */
  private spread(start: number): void {
    const stack = [start];
    while (stack.length > 0) {
      const node = stack.pop() as number;
      const paint = this.paintOf[node] as number;
      for (const parent of this.parents[node] as number[]) {
        const merged = this.paints.union(this.paintOf[parent] as number, paint);
        if (this.setPaint(parent, merged) && this.received[parent]) stack.push(parent);
      }
    }
  }

  private mayStop(lastTime: number): boolean {
    if (!this.mayEnd(lastTime)) {
      if (!this.mayHandOff(lastTime)) {
        this.slop = 0;
        return false;
      }
      this.slop++;
      if (this.slop <= SLOP) return false;
      this.handOffTo = this.oids[(this.far as { node: number }).node] as string;
      return true;
    }
    this.slop++;
    return this.slop > SLOP;
  }

  /** Nothing unread can change an answer (the class comment's two conditions). */
  private mayEnd(lastTime: number): boolean {
    if (this.rootsUnread > 0 || this.waitingOpen > 0) return false;
    while (
      this.openRead.size > 0 &&
      this.paints.isFull(this.paintOf[this.openRead.topNode()] as number)
    ) {
      this.openRead.pop();
    }
    return this.openRead.size === 0 || this.openRead.topTime() > lastTime;
  }
}
