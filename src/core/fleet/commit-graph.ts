import { octopusBase, readCommitGraph } from "../../git/ancestry.js";

/**
 * The fleet's commit graph, read once: every commit reachable from the trunk
 * or any branch tip, down to a common ancestor of them all. Ancestry, ahead
 * and behind counts then follow in memory, so classifying N branches costs
 * two git processes, never one per branch or per pair (spec section 10).
 */
export interface Ancestry {
  /** Whether `ancestor` is reachable from `descendant` (equal commits count). */
  isAncestor(ancestor: string, descendant: string): boolean;
  /** Commits reachable from `from` and not from `not`. */
  countExclusive(from: string, not: string): number;
  /**
   * The first commit on `tip`'s first-parent line that `trunkTip` reaches
   * (where the branch forked), or null when the graph cannot tell.
   */
  forkPoint(tip: string, trunkTip: string): string | null;
}

export async function readAncestry(cwd: string, roots: readonly string[]): Promise<Ancestry> {
  const unique = [...new Set(roots)];
  if (unique.length <= 1) return singleCommitAncestry();
  const base = await octopusBase(cwd, unique);
  const graph = await readCommitGraph(cwd, unique, base);
  return new GraphAncestry(graph);
}

function singleCommitAncestry(): Ancestry {
  return {
    isAncestor: (a, b) => a === b,
    countExclusive: () => 0,
    forkPoint: (tip, trunkTip) => (tip === trunkTip ? tip : null),
  };
}

class GraphAncestry implements Ancestry {
  private readonly index = new Map<string, number>();
  private readonly parents: number[][] = [];
  private readonly firstParents: (string | undefined)[] = [];
  private readonly reach = new Map<string, Uint32Array>();

  constructor(graph: Map<string, string[]>) {
    for (const commit of graph.keys()) this.index.set(commit, this.index.size);
    for (const parentList of graph.values()) {
      this.firstParents.push(parentList[0]);
      // Parents outside the graph are at or below the common base: reachable from every root.
      this.parents.push(parentList.flatMap((p) => this.index.get(p) ?? []));
    }
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    if (ancestor === descendant) return true;
    const a = this.index.get(ancestor);
    // Outside the graph means at the common base, which every root reaches.
    if (a === undefined) return true;
    return hasBit(this.reachOf(descendant), a);
  }

  countExclusive(from: string, not: string): number {
    const fromSet = this.reachOf(from);
    const notSet = this.reachOf(not);
    let count = 0;
    for (let i = 0; i < fromSet.length; i++) {
      count += popcount((fromSet[i] ?? 0) & ~(notSet[i] ?? 0));
    }
    return count;
  }

  forkPoint(tip: string, trunkTip: string): string | null {
    let id: string | undefined = tip;
    while (id !== undefined) {
      const at = this.index.get(id);
      // Outside the graph is at or below the common base, which the trunk reaches.
      if (at === undefined || this.isAncestor(id, trunkTip)) return id;
      id = this.firstParents[at];
    }
    return null;
  }

  /** Commits (inside the graph) reachable from `commit`, as a bitset; memoised per root. */
  private reachOf(commit: string): Uint32Array {
    const cached = this.reach.get(commit);
    if (cached) return cached;
    const bits = new Uint32Array(Math.ceil(this.index.size / 32));
    const start = this.index.get(commit);
    if (start !== undefined) {
      const stack = [start];
      setBit(bits, start);
      while (stack.length > 0) {
        const current = stack.pop() as number;
        for (const parent of this.parents[current] ?? []) {
          if (!hasBit(bits, parent)) {
            setBit(bits, parent);
            stack.push(parent);
          }
        }
      }
    }
    this.reach.set(commit, bits);
    return bits;
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
