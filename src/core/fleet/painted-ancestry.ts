import type { Ancestry, FarCounts } from "./commit-graph.js";

/**
 * The in-memory side of the fleet's commit graph (./commit-graph.ts reads
 * it): the paint table (which roots reach a commit, as bit sets shared
 * between commits), the answers to ancestry questions drawn from the
 * paints, and the time-ordered heap the walk's stopping rule uses.
 */

export const EMPTY = 0;
export const NO_PARENTS: number[] = [];

export class PaintedAncestry implements Ancestry {
  /** Commits read, per paint. */
  private readonly countOf: Map<number, number>;
  /** Per root: the commits read that it reaches. */
  private readonly sizeOf: Float64Array;
  /** Per root b (on demand): per root x, the commits read that both reach. */
  private readonly shared = new Map<number, Float64Array>();
  private readonly reach = new Map<number, Uint32Array>();

  constructor(
    private readonly rootCount: number,
    private readonly index: Map<string, number>,
    private readonly oids: string[],
    private readonly parents: number[][],
    private readonly received: boolean[],
    private readonly paintOf: number[],
    private readonly paints: PaintTable,
    readonly walked: number,
    /** The root handed off to git, if any (AncestryBuilder), with git's counts for it. */
    private readonly far: { node: number; primary: number; counts: FarCounts } | null = null,
  ) {
    this.countOf = new Map();
    for (let node = 0; node < oids.length; node++) {
      if (!received[node]) continue;
      const paint = paintOf[node] as number;
      this.countOf.set(paint, (this.countOf.get(paint) ?? 0) + 1);
    }
    this.sizeOf = new Float64Array(rootCount);
    for (const [paint, count] of this.countOf) {
      paints.forEachBit(paint, (bit) => {
        this.sizeOf[bit] = (this.sizeOf[bit] ?? 0) + count;
      });
    }
  }

  get countedByGit(): number {
    return this.far === null ? 0 : this.far.counts.behind + this.far.counts.ahead;
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    if (ancestor === descendant) return true;
    if (this.far !== null) {
      const far = this.oids[this.far.node];
      // Every read root reaches the far root when the primary does (it lies below them all), none otherwise.
      if (ancestor === far) return this.far.counts.ahead === 0;
      // Nothing read lies in the far root's history: it is older than all of it.
      if (descendant === far) return this.readNode(ancestor) === undefined;
    }
    const a = this.readNode(ancestor);
    // Not read: below the walk, where every root's history is common.
    if (a === undefined) return true;
    const d = this.index.get(descendant);
    if (d !== undefined && d < this.rootCount) return this.paints.has(this.paintOf[a] as number, d);
    return hasBit(this.reachOf(descendant), a);
  }

  countExclusive(from: string, not: string): number {
    if (from === not) return 0;
    if (this.far !== null) {
      const far = this.oids[this.far.node];
      // The far root's own commits, whichever read root it is compared with.
      if (from === far) return this.far.counts.ahead;
      if (not === far) {
        // `from`'s read commits, and what lies below the walk outside the far root's history
        // (the same for every read root: each reaches all of it).
        const below = this.far.counts.behind - (this.sizeOf[this.far.primary] as number);
        const f = this.index.get(from);
        const read = f !== undefined && f < this.rootCount ? (this.sizeOf[f] as number) : 0;
        return read + below;
      }
    }
    const f = this.index.get(from);
    const n = this.index.get(not);
    if (f === undefined || n === undefined || f >= this.rootCount || n >= this.rootCount) {
      return this.countByWalk(from, not);
    }
    const size = this.sizeOf[f] as number;
    // `not` inside `from`: every commit `not` reaches, `from` reaches too.
    if (this.paints.has(this.paintOf[n] as number, f)) return size - (this.sizeOf[n] as number);
    // Shared commits are symmetric: use a root already tallied (the trunk, asked of every row).
    const shared = this.shared.get(f)?.[n] ?? (this.sharedWith(n)[f] as number);
    return size - shared;
  }

  rootsReaching(commit: string): readonly string[] {
    if (this.far !== null && commit === this.oids[this.far.node]) {
      return this.far.counts.ahead === 0 ? this.oids.slice(0, this.rootCount) : [commit];
    }
    const node = this.readNode(commit);
    if (node === undefined) return this.oids.slice(0, this.rootCount);
    const roots: string[] = [];
    this.paints.forEachBit(this.paintOf[node] as number, (bit) => {
      roots.push(this.oids[bit] as string);
    });
    return roots;
  }

  forkPoint(tip: string, trunkTip: string): string | null {
    let id = tip;
    for (;;) {
      if (this.isAncestor(id, trunkTip)) return id;
      const node = this.readNode(id);
      // Not read: below the walk, where every root's history (the trunk's too) is common.
      if (node === undefined) return id;
      const first = this.parents[node]?.[0];
      if (first === undefined) return null;
      id = this.oids[first] as string;
    }
  }

  mergeBase(tip: string, trunkTip: string): string | null {
    const from = this.index.get(tip);
    const trunk = this.index.get(trunkTip);
    if (from === undefined || trunk === undefined) return null;
    if (from >= this.rootCount || trunk >= this.rootCount) return null;
    if (this.far !== null && (from === this.far.node || trunk === this.far.node)) return null;
    // The first commits the trunk reaches on every path down from the tip: every common
    // ancestor lies below one of them, so the best ones are those no other one reaches.
    const firstMet: number[] = [];
    const seen = new Set<number>();
    const stack = [from];
    while (stack.length > 0) {
      const node = stack.pop() as number;
      if (seen.has(node)) continue;
      seen.add(node);
      // Below the walk every root reaches it, the trunk too; with others met, their order is unknown.
      if (!this.received[node] || this.paints.has(this.paintOf[node] as number, trunk)) {
        firstMet.push(node);
        continue;
      }
      for (const parent of this.parents[node] as number[]) stack.push(parent);
    }
    if (firstMet.length === 1) return this.oids[firstMet[0] as number] as string;
    if (firstMet.some((node) => !this.received[node])) return null;
    const best = firstMet.filter((node) =>
      firstMet.every((other) => other === node || !hasBit(this.reachOfNode(other), node)),
    );
    return best.length === 1 ? (this.oids[best[0] as number] as string) : null;
  }

  private readNode(commit: string): number | undefined {
    const node = this.index.get(commit);
    return node !== undefined && this.received[node] ? node : undefined;
  }

  /** Per root x, the commits read that both `root` and x reach; one pass over the paints holding `root`. */
  private sharedWith(root: number): Float64Array {
    const cached = this.shared.get(root);
    if (cached) return cached;
    const both = new Float64Array(this.rootCount);
    for (const [paint, count] of this.countOf) {
      if (!this.paints.has(paint, root)) continue;
      this.paints.forEachBit(paint, (bit) => {
        both[bit] = (both[bit] ?? 0) + count;
      });
    }
    this.shared.set(root, both);
    return both;
  }

  /**
   * For commits other than the roots (no caller asks today): the commits read
   * that one reaches and the other does not, by walking the graph. What lies
   * below the walk is taken as common, as for the roots.
   */
  private countByWalk(from: string, not: string): number {
    const fromSet = this.reachOf(from);
    const notSet = this.reachOf(not);
    let count = 0;
    for (let i = 0; i < fromSet.length; i++) {
      count += popcount((fromSet[i] ?? 0) & ~(notSet[i] ?? 0));
    }
    return count;
  }

  private reachOf(commit: string): Uint32Array {
    return this.reachOfNode(this.readNode(commit));
  }

  /** The read commits reachable from `start` through read commits (none when it was not read). */
  private reachOfNode(start: number | undefined): Uint32Array {
    const key = start ?? -1;
    const cached = this.reach.get(key);
    if (cached) return cached;
    const bits = new Uint32Array(Math.ceil(this.oids.length / 32));
    if (start !== undefined) {
      const stack = [start];
      while (stack.length > 0) {
        const node = stack.pop() as number;
        if (hasBit(bits, node)) continue;
        setBit(bits, node);
        for (const parent of this.parents[node] as number[]) {
          if (this.received[parent] && !hasBit(bits, parent)) stack.push(parent);
        }
      }
    }
    this.reach.set(key, bits);
    return bits;
  }
}

/**
 * Distinct sets of roots, each stored once and named by a small id; unions
 * are remembered, so painting a long chain allocates nothing.
 */
export class PaintTable {
  private readonly words: number;
  private readonly sets: Uint32Array[];
  private readonly full: boolean[];
  private readonly byKey = new Map<string, number>();
  private readonly unions = new Map<number, number>();

  constructor(private readonly rootCount: number) {
    this.words = Math.ceil(rootCount / 32);
    this.sets = [new Uint32Array(this.words)];
    this.full = [rootCount === 0];
  }

  single(bit: number): number {
    const set = new Uint32Array(this.words);
    setBit(set, bit);
    return this.intern(set);
  }

  isFull(paint: number): boolean {
    return this.full[paint] === true;
  }

  has(paint: number, bit: number): boolean {
    return hasBit(this.sets[paint] as Uint32Array, bit);
  }

  union(a: number, b: number): number {
    if (a === b || b === EMPTY) return a;
    if (a === EMPTY) return b;
    if (this.full[a]) return a;
    if (this.full[b]) return b;
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    const key = lo * 0x200000 + hi;
    const memo = hi < 0x200000 ? this.unions.get(key) : undefined;
    if (memo !== undefined) return memo;
    const x = this.sets[a] as Uint32Array;
    const y = this.sets[b] as Uint32Array;
    const merged = new Uint32Array(this.words);
    let sameAsA = true;
    let sameAsB = true;
    for (let i = 0; i < this.words; i++) {
      const word = ((x[i] as number) | (y[i] as number)) >>> 0;
      merged[i] = word;
      if (word !== x[i]) sameAsA = false;
      if (word !== y[i]) sameAsB = false;
    }
    const result = sameAsA ? a : sameAsB ? b : this.intern(merged);
    if (hi < 0x200000) this.unions.set(key, result);
    return result;
  }

  forEachBit(paint: number, visit: (bit: number) => void): void {
    const set = this.sets[paint] as Uint32Array;
    for (let i = 0; i < set.length; i++) {
      let word = set[i] as number;
      while (word !== 0) {
        const low = word & -word;
        visit(i * 32 + 31 - Math.clz32(low));
        word ^= low;
      }
    }
  }

  private intern(set: Uint32Array): number {
    const key = set.join(",");
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const id = this.sets.length;
    this.sets.push(set);
    let bits = 0;
    for (const word of set) bits += popcount(word);
    this.full.push(bits === this.rootCount);
    this.byKey.set(key, id);
    return id;
  }
}

/** A min-heap of (time, node). */
export class TimeHeap {
  private readonly timesOf: number[] = [];
  private readonly nodes: number[] = [];

  get size(): number {
    return this.nodes.length;
  }

  topTime(): number {
    return this.timesOf[0] as number;
  }

  topNode(): number {
    return this.nodes[0] as number;
  }

  push(time: number, node: number): void {
    let i = this.nodes.length;
    this.timesOf.push(time);
    this.nodes.push(node);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if ((this.timesOf[up] as number) <= time) break;
      this.move(up, i);
      i = up;
    }
    this.timesOf[i] = time;
    this.nodes[i] = node;
  }

  pop(): void {
    const lastTime = this.timesOf.pop() as number;
    const lastNode = this.nodes.pop() as number;
    const size = this.nodes.length;
    if (size === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const child =
        right < size && (this.timesOf[right] as number) < (this.timesOf[left] as number)
          ? right
          : left;
      if ((this.timesOf[child] as number) >= lastTime) break;
      this.move(child, i);
      i = child;
    }
    this.timesOf[i] = lastTime;
    this.nodes[i] = lastNode;
  }

  private move(from: number, to: number): void {
    this.timesOf[to] = this.timesOf[from] as number;
    this.nodes[to] = this.nodes[from] as number;
  }
}

function hasBit(bits: Uint32Array, i: number): boolean {
  return ((bits[i >>> 5] ?? 0) & (1 << (i & 31))) !== 0;
}

function setBit(bits: Uint32Array, i: number): void {
  bits[i >>> 5] = (bits[i >>> 5] ?? 0) | (1 << (i & 31));
}

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
