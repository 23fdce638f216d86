import { isObjectId } from "./object-id.js";

/**
 * Pure parsers for git's machine-readable output. No I/O here, so each one is
 * tested on captured output.
 */

export interface WorktreeEntry {
  path: string;
  /** null for a registration with no commit yet or a bare entry. */
  head: string | null;
  /** Short branch name, null when detached. */
  branch: string | null;
  detached: boolean;
  bare: boolean;
  locked: boolean;
  lockReason: string | null;
  prunable: boolean;
  prunableReason: string | null;
}

/** `git worktree list --porcelain -z`: attributes separated by NUL, records by an empty one. */
export function parseWorktreeList(output: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of output.split("\0")) {
    if (field === "") {
      if (current) entries.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(" ");
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? null : field.slice(space + 1);
    if (key === "worktree") {
      if (current) entries.push(current);
      current = {
        path: value ?? "",
        head: null,
        branch: null,
        detached: false,
        bare: false,
        locked: false,
        lockReason: null,
        prunable: false,
        prunableReason: null,
      };
      continue;
    }
    if (!current) continue;
    switch (key) {
      case "HEAD":
        current.head = value && !/^0+$/.test(value) ? value : null;
        break;
      case "branch":
        current.branch = value ? shortBranchName(value) : null;
        break;
      case "detached":
        current.detached = true;
        break;
      case "bare":
        current.bare = true;
        break;
      case "locked":
        current.locked = true;
        current.lockReason = value;
        break;
      case "prunable":
        current.prunable = true;
        current.prunableReason = value;
        break;
    }
  }
  if (current) entries.push(current);
  return entries;
}

export function shortBranchName(ref: string): string {
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
}

export interface RefEntry {
  /** Full name, e.g. refs/heads/berth/x. */
  ref: string;
  oid: string;
  /** Target of a symbolic ref (e.g. refs/remotes/origin/HEAD), else null. */
  symref: string | null;
  /** For annotated tags, the commit they peel to; else null. */
  peeled: string | null;
  /** The commit's tree (free with the ref), else null: what the integrated rule compares. */
  tree: string | null;
  /** The commit's committer time in seconds (free with the ref); absent for other objects. */
  time?: number;
}

/** The `--format` that `parseRefs` reads. */
export const REF_FORMAT =
  "%(refname)%00%(objectname)%00%(symref)%00%(*objectname)%00%(tree)%00%(committerdate:unix)";

export function parseRefs(output: string): RefEntry[] {
  const refs: RefEntry[] = [];
  for (const line of output.split("\n")) {
    if (line === "") continue;
    const [ref = "", oid = "", symref = "", peeled = "", tree = "", time = ""] = line.split("\0");
    const entry: RefEntry = {
      ref,
      oid,
      symref: symref || null,
      peeled: peeled || null,
      tree: tree || null,
    };
    if (time !== "") entry.time = Number(time);
    refs.push(entry);
  }
  return refs;
}

export interface StatusSummary {
  /** Entries git reports: staged, modified, unmerged and untracked paths. */
  changedFiles: number;
  untrackedFiles: number;
  /** Tracked changes only (staged, modified, unmerged). */
  trackedChanges: number;
  paths: string[];
}

/**
 * `git status --porcelain=v2 -z`; renamed entries carry one extra NUL-separated
 * field. A submodule with changes inside is one entry at its path: a tracked
 * change, unless all it has is untracked files (then it counts as untracked).
 */
export function parseStatusPorcelainV2(output: string): StatusSummary {
  const fields = output.split("\0");
  const tracked: string[] = [];
  const untracked: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? "";
    if (field === "" || field.startsWith("#")) continue;
    const kind = field[0];
    if (kind === "?") {
      untracked.push(field.slice(2));
    } else if (kind === "1" || kind === "2" || kind === "u") {
      const columns = kind === "1" ? 8 : kind === "2" ? 9 : 10;
      const parts = field.split(" ");
      const path = parts.slice(columns).join(" ");
      // A submodule whose only change is untracked files inside it ("S..U").
      if (kind === "1" && parts[1] === ".M" && parts[2] === "S..U") untracked.push(path);
      else tracked.push(path);
      if (kind === "2") i++; // the rename's original path
    }
  }
  return {
    changedFiles: tracked.length + untracked.length,
    untrackedFiles: untracked.length,
    trackedChanges: tracked.length,
    // Tracked entries first, as git lists them.
    paths: [...tracked, ...untracked],
  };
}

export interface CommitSubject {
  oid: string;
  subject: string;
}

/** `git log --format=%H%x00%s`: one commit per line, its id and subject. */
export function parseCommitSubjects(output: string): CommitSubject[] {
  const commits: CommitSubject[] = [];
  for (const line of output.split("\n")) {
    if (line === "") continue;
    const nul = line.indexOf("\0");
    if (nul === -1) continue;
    commits.push({ oid: line.slice(0, nul), subject: line.slice(nul + 1) });
  }
  return commits;
}

/** `git rev-list --parents`: one commit per line, followed by its parents. */
export function parseRevListParents(output: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const line of output.split("\n")) {
    if (line === "") continue;
    const [commit = "", ...parents] = line.split(" ");
    graph.set(commit, parents);
  }
  return graph;
}

/** NUL-separated paths (`-z` output), empty entries dropped. */
export function parseNulList(output: string): string[] {
  return output.split("\0").filter((entry) => entry !== "");
}

/** An object `git cat-file --batch-check` found: its id and its type. */
export interface ObjectAt {
  oid: string;
  type: string;
}

/**
 * `git cat-file --batch-check=%(objectname) %(objecttype)`: one line per
 * input, either the object's id and type or `<input> missing` (or
 * `ambiguous`). Unknown inputs are null.
 */
export function parseBatchCheck(output: string): (ObjectAt | null)[] {
  const lines = output.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => {
    const [oid = "", type = "", ...more] = line.split(" ");
    return more.length === 0 && isObjectId(oid) && /^\w+$/.test(type) ? { oid, type } : null;
  });
}

/** One entry of `git diff --name-status -z --no-renames`. */
export interface NameStatus {
  /** git's status letter: A, D, M, T, ... */
  status: string;
  path: string;
}

/** `git diff --name-status -z --no-renames`: a status field, then its path, NUL-separated. */
export function parseNameStatus(output: string): NameStatus[] {
  const fields = output.split("\0");
  const entries: NameStatus[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i] ?? "";
    const path = fields[i + 1] ?? "";
    if (status === "" || path === "") continue;
    entries.push({ status: status.slice(0, 1), path });
  }
  return entries;
}
