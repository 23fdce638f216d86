import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * What the invariants compare: read with plain git and file reads, never with
 * berth's own code, so a bug in berth's readers cannot hide a loss.
 */

export interface WorktreeRow {
  path: string;
  head: string | null;
  branch: string | null;
  detached: boolean;
  locked: boolean;
  prunable: boolean;
  isMain: boolean;
  /** The folder name under `<common>/worktrees/`; null for the main checkout. */
  adminKey: string | null;
  /** The id in berth's ready marker; null when berth did not make it. */
  markerId: string | null;
  /** The checkout folder exists. */
  folder: boolean;
}

export interface LedgerRow {
  key: string;
  id: string;
  resource: string;
}

export interface Snapshot {
  /** Every ref (`refs/...`) to the object it names. */
  refs: Map<string, string>;
  /** Commit → parents, for everything reachable from any ref or worktree HEAD. */
  graph: Map<string, string[]>;
  worktrees: WorktreeRow[];
  ledger: LedgerRow[];
  /** Live resources: files the create commands made (`<id>.<resource>`). */
  resources: Set<string>;
  trunkTip: string | null;
  /** The landing queue's entries, in order. */
  queue: QueueRow[];
}

/** One landing-queue entry, as the model reads it. */
export interface QueueRow {
  seq: number;
  id: string;
  /** The tip submitted: what the entry lands. */
  tip: string;
  state: string;
  /** null: no one has let it land (an agent's submission awaiting approval). */
  authority: string | null;
  /** How it landed, once landed. */
  via: string | null;
  /** When the entry was last written. */
  updated: string;
}

export interface SnapshotPlace {
  mainPath: string;
  commonDir: string;
  resourceDir: string;
  trunk: string;
  env: NodeJS.ProcessEnv;
}

export function git(
  place: Pick<SnapshotPlace, "env">,
  cwd: string,
  args: string[],
  input?: string,
) {
  return execFileSync("git", args, {
    cwd,
    env: place.env,
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * The snapshot of every step, read from git's own files: loose and packed
 * refs, `<common>/worktrees/<key>/{gitdir,HEAD,locked}`, berth's ledger and
 * the resource files. It spawns no process except `git rev-list` when a ref
 * or HEAD points at a commit the cached graph does not know (commits never
 * change, so the graph only grows). `gitView` reads the same facts through
 * git itself; each sequence compares the two once, at its end.
 */
export function takeSnapshot(place: SnapshotPlace, graph: Map<string, string[]>): Snapshot {
  const refs = readRefs(place.commonDir);
  const worktrees = readWorktreeRows(place, refs);
  const roots = new Set([...refs.values(), ...worktrees.flatMap((w) => (w.head ? [w.head] : []))]);
  if ([...roots].some((oid) => !graph.has(oid))) {
    const out = git(
      place,
      place.mainPath,
      ["rev-list", "--parents", "--stdin"],
      [...roots].join("\n"),
    );
    for (const line of out.split("\n")) {
      if (line === "") continue;
      const [commit, ...parents] = line.split(" ");
      graph.set(commit as string, parents);
    }
  }
  return {
    refs,
    graph,
    worktrees,
    ledger: readLedgerRows(place.commonDir),
    resources: new Set(existsSync(place.resourceDir) ? readdirSync(place.resourceDir) : []),
    trunkTip: refs.get(`refs/heads/${place.trunk}`) ?? null,
    queue: readQueueRows(place.commonDir),
  };
}

/**
 * The landing queue's entries as their files say: read by the model itself
 * (not berth's reader), so the queue's claims can be judged.
 */
function readQueueRows(commonDir: string): QueueRow[] {
  const dir = join(commonDir, "berth", "queue");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^\d+\.json$/.test(name))
    .sort()
    .map((name) => {
      const e = JSON.parse(readFileSync(join(dir, name), "utf8"));
      return {
        seq: e.seq,
        id: e.id,
        tip: e.tip,
        state: e.state,
        authority: e.authority,
        via: e.landed?.via ?? null,
        updated: e.updated_at,
      };
    });
}

/** Loose refs override packed ones; symbolic refs are skipped (none of them are branches). */
function readRefs(commonDir: string): Map<string, string> {
  const refs = new Map<string, string>();
  const packed = join(commonDir, "packed-refs");
  if (existsSync(packed)) {
    for (const line of readFileSync(packed, "utf8").split("\n")) {
      const match = /^([0-9a-f]{40}) (refs\/\S+)$/.exec(line);
      if (match) refs.set(match[2] as string, match[1] as string);
    }
  }
  const walk = (dir: string, name: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      const ref = `${name}/${entry.name}`;
      if (entry.isDirectory()) walk(full, ref);
      else if (!entry.name.endsWith(".lock")) {
        const text = readFileSync(full, "utf8").trim();
        if (/^[0-9a-f]{40}$/.test(text)) refs.set(ref, text);
      }
    }
  };
  walk(join(commonDir, "refs"), "refs");
  return new Map([...refs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function readWorktreeRows(place: SnapshotPlace, refs: Map<string, string>): WorktreeRow[] {
  const headOf = (file: string) => {
    const text = readFileSync(file, "utf8").trim();
    if (text.startsWith("ref: ")) {
      const ref = text.slice(5);
      return {
        head: refs.get(ref) ?? null,
        branch: ref.replace(/^refs\/heads\//, ""),
        detached: false,
      };
    }
    return { head: text, branch: null, detached: true };
  };
  const main: WorktreeRow = {
    path: place.mainPath,
    ...headOf(join(place.commonDir, "HEAD")),
    locked: false,
    prunable: false,
    isMain: true,
    adminKey: null,
    markerId: null,
    folder: existsSync(place.mainPath),
  };
  const root = join(place.commonDir, "worktrees");
  const linked: WorktreeRow[] = [];
  for (const key of existsSync(root) ? readdirSync(root) : []) {
    const admin = join(root, key);
    let path: string;
    try {
      path = dirname(readFileSync(join(admin, "gitdir"), "utf8").trim());
    } catch {
      continue; // not a registration git lists
    }
    const folder = existsSync(path);
    linked.push({
      path,
      ...headOf(join(admin, "HEAD")),
      locked: existsSync(join(admin, "locked")),
      prunable: !folder,
      isMain: false,
      adminKey: key,
      markerId: readMarkerId(place.commonDir, key),
      folder,
    });
  }
  return [main, ...linked.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))];
}

/**
 * Refs and registrations as git itself reports them, to check the file
 * reader above against (one shell, two git processes).
 */
export function gitView(place: SnapshotPlace): { refs: string; worktrees: string } {
  const refs = git(place, place.mainPath, ["for-each-ref", "--format=%(refname) %(objectname)"]);
  const list = git(place, place.mainPath, ["worktree", "list", "--porcelain", "-z"]);
  const rows = parseWorktrees(list, place.commonDir).map(describeRow).sort();
  return { refs: refs.trim(), worktrees: rows.join("\n") };
}

export function fileView(snapshot: Snapshot): { refs: string; worktrees: string } {
  return {
    refs: [...snapshot.refs].map(([r, o]) => `${r} ${o}`).join("\n"),
    worktrees: snapshot.worktrees.map(describeRow).sort().join("\n"),
  };
}

function describeRow(w: WorktreeRow): string {
  return JSON.stringify([
    w.path,
    w.head,
    w.branch,
    w.detached,
    w.locked,
    w.isMain,
    w.adminKey,
    w.markerId,
  ]);
}

function parseWorktrees(out: string, commonDir: string): WorktreeRow[] {
  const keys = adminKeys(commonDir);
  const rows: WorktreeRow[] = [];
  let current: WorktreeRow | null = null;
  for (const field of out.split("\0")) {
    if (field === "") {
      if (current) rows.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(" ");
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? "" : field.slice(space + 1);
    if (key === "worktree") {
      if (current) rows.push(current);
      const isMain: boolean = rows.length === 0;
      const adminKey: string | null = isMain ? null : (keys.get(value) ?? null);
      current = {
        path: value,
        head: null,
        branch: null,
        detached: false,
        locked: false,
        prunable: false,
        isMain,
        adminKey,
        markerId: adminKey === null ? null : readMarkerId(commonDir, adminKey),
        folder: existsSync(value),
      };
    } else if (current) {
      if (key === "HEAD") current.head = /^0+$/.test(value) ? null : value;
      if (key === "branch") current.branch = value.replace(/^refs\/heads\//, "");
      if (key === "detached") current.detached = true;
      if (key === "locked") current.locked = true;
      if (key === "prunable") current.prunable = true;
    }
  }
  if (current) rows.push(current);
  return rows;
}

function adminKeys(commonDir: string): Map<string, string> {
  const root = join(commonDir, "worktrees");
  const keys = new Map<string, string>();
  if (!existsSync(root)) return keys;
  for (const key of readdirSync(root)) {
    try {
      keys.set(dirname(readFileSync(join(root, key, "gitdir"), "utf8").trim()), key);
    } catch {
      // not a worktree admin dir
    }
  }
  return keys;
}

function readMarkerId(commonDir: string, key: string): string | null {
  try {
    const marker = JSON.parse(
      readFileSync(join(commonDir, "worktrees", key, "berth", "ready"), "utf8"),
    );
    return typeof marker.id === "string" ? marker.id : null;
  } catch {
    return null;
  }
}

function readLedgerRows(commonDir: string): LedgerRow[] {
  const root = join(commonDir, "berth", "ledger");
  if (!existsSync(root)) return [];
  const rows: LedgerRow[] = [];
  for (const key of readdirSync(root)) {
    let names: string[];
    try {
      names = readdirSync(join(root, key));
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith(".json"))) {
      try {
        const entry = JSON.parse(readFileSync(join(root, key, name), "utf8"));
        rows.push({ key, id: String(entry.id), resource: String(entry.resource) });
      } catch {
        rows.push({ key, id: "?", resource: name.replace(/\.json$/, "") });
      }
    }
  }
  return rows.sort((a, b) => `${a.key}/${a.resource}`.localeCompare(`${b.key}/${b.resource}`));
}

/** Every commit reachable from `roots` in `graph` (roots included). */
export function reachable(graph: Map<string, string[]>, roots: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const commit = stack.pop() as string;
    if (seen.has(commit)) continue;
    seen.add(commit);
    for (const parent of graph.get(commit) ?? []) stack.push(parent);
  }
  return seen;
}

export function isAncestorIn(graph: Map<string, string[]>, ancestor: string, of: string): boolean {
  return reachable(graph, [of]).has(ancestor);
}

/** Local branch short name → tip. */
export function branchesOf(snapshot: Snapshot): Map<string, string> {
  const out = new Map<string, string>();
  for (const [ref, oid] of snapshot.refs) {
    if (ref.startsWith("refs/heads/")) out.set(ref.slice("refs/heads/".length), oid);
  }
  return out;
}

/** The parts of a snapshot a refusal must leave exactly as they were. */
export function fingerprint(snapshot: Snapshot): string {
  return JSON.stringify({
    refs: [...snapshot.refs].sort(),
    worktrees: snapshot.worktrees.map((w) => [w.path, w.head, w.branch, w.locked, w.folder]),
    ledger: snapshot.ledger,
    resources: [...snapshot.resources].sort(),
  });
}
