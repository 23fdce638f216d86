import type { ChangedCommit } from "../../git/changed-files.js";
import { naturalCompare } from "../../text.js";

/**
 * THE overlap rule (spec section 8, issue 21): the one place that decides
 * which unlanded berths change the same files. status (and so the desk)
 * asks here. In order:
 *   1. the candidates are the unlanded berths the caller names (status: live
 *      berths with commits of their own, contained stages left out, since
 *      their work travels inside their container, which is a candidate);
 *   2. one `git log --name-only` over all their tips, minus the trunk, gives
 *      every unlanded commit with its parents and paths (git/changed-files.ts);
 *      which berth holds which commit follows in memory;
 *   3. two berths overlap on a file when each holds a commit changing it that
 *      the other does not hold: a train's stages share their commits and so
 *      never overlap each other, and a stage two berths forked from is no
 *      overlap between them;
 *   4. the berths that overlap on a file form its group; files with the same
 *      group are listed together.
 * No git process here, and none per pair: the pairs are checked in memory,
 * and only among the berths that touch one file.
 */

export interface OverlapCandidate {
  id: string;
  branch: string;
  tip: string;
}

export interface Overlap {
  /** The berths (ids) changing these files independently, in natural order. */
  berths: string[];
  /** Their branches, in the same order. */
  branches: string[];
  files: string[];
}

export function findOverlaps(
  candidates: readonly OverlapCandidate[],
  commits: readonly ChangedCommit[],
): Overlap[] {
  if (candidates.length < 2) return [];
  const index = new Map<string, number>();
  for (const commit of commits) index.set(commit.oid, index.size);
  const words = Math.ceil(index.size / 32);
  // Which commits each candidate holds: a walk over parents inside the unlanded set.
  const holds = candidates.map((candidate) => {
    const bits = new Uint32Array(words);
    const start = index.get(candidate.tip);
    const stack = start === undefined ? [] : [start];
    if (start !== undefined) setBit(bits, start);
    while (stack.length > 0) {
      const commit = commits[stack.pop() as number] as ChangedCommit;
      for (const parent of commit.parents) {
        const p = index.get(parent);
        if (p !== undefined && !hasBit(bits, p)) {
          setBit(bits, p);
          stack.push(p);
        }
      }
    }
    return bits;
  });

  // file -> commits changing it
  const byFile = new Map<string, number[]>();
  commits.forEach((commit, i) => {
    for (const path of commit.paths) {
      const list = byFile.get(path);
      if (list === undefined) byFile.set(path, [i]);
      else list.push(i);
    }
  });

  const groups = new Map<string, { members: number[]; files: string[] }>();
  for (const [file, changes] of byFile) {
    const touching = candidates
      .map((_, b) => b)
      .filter((b) => changes.some((c) => hasBit(holds[b] as Uint32Array, c)));
    if (touching.length < 2) continue;
    const members = new Set<number>();
    for (let x = 0; x < touching.length; x++) {
      for (let y = x + 1; y < touching.length; y++) {
        const a = holds[touching[x] as number] as Uint32Array;
        const b = holds[touching[y] as number] as Uint32Array;
        const aOwn = changes.some((c) => hasBit(a, c) && !hasBit(b, c));
        const bOwn = changes.some((c) => hasBit(b, c) && !hasBit(a, c));
        if (aOwn && bOwn) {
          members.add(touching[x] as number);
          members.add(touching[y] as number);
        }
      }
    }
    if (members.size < 2) continue;
    const sorted = [...members].sort((a, b) => compareCandidates(candidates, a, b));
    const key = sorted.join(",");
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { members: sorted, files: [file] });
    else group.files.push(file);
  }

  return [...groups.values()]
    .map((group) => ({
      berths: group.members.map((m) => (candidates[m] as OverlapCandidate).id),
      branches: group.members.map((m) => (candidates[m] as OverlapCandidate).branch),
      files: group.files.sort(),
    }))
    .sort(
      (a, b) =>
        naturalCompare(a.berths.join(" "), b.berths.join(" ")) ||
        naturalCompare(a.files[0] ?? "", b.files[0] ?? ""),
    );
}

function compareCandidates(candidates: readonly OverlapCandidate[], a: number, b: number): number {
  return naturalCompare(
    (candidates[a] as OverlapCandidate).id,
    (candidates[b] as OverlapCandidate).id,
  );
}

function hasBit(bits: Uint32Array, i: number): boolean {
  return ((bits[i >>> 5] ?? 0) & (1 << (i & 31))) !== 0;
}

function setBit(bits: Uint32Array, i: number): void {
  bits[i >>> 5] = (bits[i >>> 5] ?? 0) | (1 << (i & 31));
}
