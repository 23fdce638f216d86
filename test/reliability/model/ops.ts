import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandOutcome } from "../../../src/commands/outcome.js";
import { startBerth } from "../../../src/core/lifecycle/start.js";
import { UserError } from "../../../src/errors.js";
import { asApplied } from "../../../src/result.js";
import { renderJson } from "../../../src/ui/envelope.js";
import { colorsFor } from "../../../src/ui/style.js";
import type { Prng } from "./prng.js";
import {
  branchesOf,
  isAncestorIn,
  reachable,
  type Snapshot,
  type WorktreeRow,
} from "./snapshot.js";
import { type Fault, type GateCheck, PREFIX, submoduleSource, TRUNK, type World } from "./world.js";

/**
 * The operations a sequence is made of. Hand changes ("world" operations:
 * commits, uncommitted edits, locks, deleted folders, fault switches) shape
 * the fleet the way people and agents do; verbs are what the invariants
 * judge. Verbs run in process through the command modules (the same code the
 * CLI runs after argument parsing, confirmation included).
 */

export type WorldOp =
  | {
      kind: "commit";
      path: string;
      mode: "all" | "one" | "empty" | "fail" | "unfail";
      file: string;
    }
  | { kind: "commit-trunk"; file: string }
  | { kind: "dirty"; path: string; mode: "untracked" | "modify" | "delete"; file: string }
  | { kind: "lock"; path: string }
  | { kind: "unlock"; path: string }
  | { kind: "remove-folder"; path: string }
  | { kind: "foreign"; branch: string }
  | { kind: "detach"; path: string }
  | { kind: "land-by-hand"; branch: string }
  /** A forge's squash-merge: the branch's work reaches the trunk as one new commit (integrated). */
  | { kind: "squash-by-hand"; branch: string }
  | { kind: "tag"; name: string; commit: string }
  | { kind: "fault"; fault: Fault; on: boolean }
  | { kind: "redefine-gate"; change: GateChange }
  | { kind: "add-submodule"; path: string }
  | { kind: "dirty-submodule"; path: string }
  /** A commit on a new branch inside the submodule, never pushed; its HEAD back where the superproject records it. */
  | { kind: "submodule-commit"; path: string }
  | { kind: "start-merge"; path: string }
  /** `git am` of the checkout's own last commit: it stops at once, the tree clean, HEAD on the branch. */
  | { kind: "stop-am"; path: string }
  | { kind: "ignored-collision"; path: string };

/** How a hand edit of berth.toml changes the declared checks (each changes the digest). */
export type GateChange =
  | "add-extra"
  | "remove-extra"
  | "alter-command"
  | "alter-timeout"
  | "reorder";

export type VerbOp =
  | { kind: "start"; cwd: string; name: string | undefined; from: string | undefined }
  | { kind: "gate"; cwd: string }
  | { kind: "update"; cwd: string; from: string | undefined }
  | { kind: "status"; cwd: string }
  | { kind: "accept"; cwd: string; target: string | undefined; subject: string | null }
  | { kind: "prune"; contained: boolean; yes: boolean }
  | {
      kind: "drop";
      target: string;
      subject: string | null;
      force: boolean;
      yes: boolean;
      /**
       * A file written into the subject between the forced drop's plan and its
       * apply (an edit made while the confirmation waited): the plan never
       * named it, so it is not the person's to lose (invariant 2).
       */
      raced?: string | undefined;
    }
  | { kind: "setup"; cwd: string }
  | { kind: "teardown"; cwd: string }
  /**
   * `berth accept <berth> --no-wait`: submitted to the landing queue, not
   * drained. A person's (`--yes`) is queued; an agent's, without a grant,
   * awaits approval.
   */
  | { kind: "submit"; target: string; subject: string | null; approved: boolean }
  /**
   * An accept that brings no confirmation: the MCP `accept` tool, or `berth
   * accept` with no terminal and no `--yes` (decision 0076). Lands at once
   * with a grant, else waits for approval.
   */
  | { kind: "agent-accept"; target: string; subject: string | null; via: "mcp" | "cli" }
  | { kind: "queue-run" }
  | { kind: "queue-approve"; target: string }
  | { kind: "queue-withdraw"; target: string };

export type Op = WorldOp | VerbOp;

const VERBS: ReadonlySet<string> = new Set([
  "start",
  "gate",
  "update",
  "status",
  "accept",
  "prune",
  "drop",
  "setup",
  "teardown",
  "submit",
  "agent-accept",
  "queue-run",
  "queue-approve",
  "queue-withdraw",
]);

export function isVerb(op: Op): op is VerbOp {
  return VERBS.has(op.kind);
}

/** How a verb ended, whichever way it ran. */
export interface VerbOutcome {
  ok: boolean;
  code: string | null;
  /** false when the verb said it got part-way; null when it did not say. */
  nothingChanged: boolean | null;
  // biome-ignore lint/suspicious/noExplicitAny: the invariants read the documented envelope.
  data: any;
  /** An error that is not a refusal: a bug (the CLI would say "unexpected failure"). */
  unexpected: string | null;
  /** The error message, for the history. */
  message: string | null;
}

/** Commits one file only (its own changes), leaving every other change as it is. */
const COMMIT_ONE = 'git add -- "$1" && git commit -q --only -m "$2" -- "$1"';

/** Adds the local repository $1 as submodule `sub` and commits just that. */
const ADD_SUBMODULE =
  'git -c protocol.file.allow=always submodule add -q "$1" sub && git commit -q -m "$2" -- .gitmodules sub';

/**
 * Leaves a conflicting merge in progress: "theirs" (made with plumbing, on no
 * branch) and "ours" (committed on the checkout's branch) both add $2 with
 * different content; `git merge` stops on the add/add conflict with MERGE_HEAD.
 */
/**
 * A `git am` stopped half-way on a clean tree: the patch is the checkout's own
 * last commit, which applies to nothing there. The patch file sits in the git
 * dir, so the tree stays clean. Exit 1 if am did not stop.
 */
const STOP_AM = `set -e
gitdir=$(git rev-parse --absolute-git-dir)
git format-patch -1 HEAD --stdout > "$gitdir/fuzz-again.patch"
if git am "$gitdir/fuzz-again.patch" >/dev/null 2>&1; then exit 1; fi
test -e "$gitdir/rebase-apply/applying"`;

/** In a submodule: a commit on branch w$1, then HEAD detached back where it was. */
const SUBMODULE_COMMIT =
  'git switch -q -c "w$1" && echo "$1" > "w$1.txt" && git add "w$1.txt" && git commit -q -m "w$1" -- "w$1.txt" && git switch -q --detach HEAD~1';

const START_MERGE = `set -e
base=$(git rev-parse HEAD)
gitdir=$(git rev-parse --absolute-git-dir)
blob=$(printf 'theirs %s\n' "$1" | git hash-object -w --stdin)
GIT_INDEX_FILE="$gitdir/fuzz-index" git read-tree "$base"
GIT_INDEX_FILE="$gitdir/fuzz-index" git update-index --add --cacheinfo "100644,$blob,$2"
tree=$(GIT_INDEX_FILE="$gitdir/fuzz-index" git write-tree)
rm -f "$gitdir/fuzz-index"
theirs=$(git commit-tree "$tree" -p "$base" -m "theirs $1")
printf 'ours %s\n' "$1" > "$2"
git add -- "$2"
git commit -q --only -m "ours $1" -- "$2"
if git merge -q --no-edit "$theirs" >/dev/null 2>&1; then exit 1; fi
test -f "$gitdir/MERGE_HEAD"`;

/** The trunk force-adds $1 (ignored everywhere) with content $2, from the main checkout. */
const FORCE_ADD =
  'printf "%s\\n" "$2" > "$1" && git add -f -- "$1" && git commit -q --only -m "$2" -- "$1"';
const FILES = ["f1.txt", "f2.txt", "f3.txt", "shared.txt"];
const NAMES = ["a", "b", "c", "Fix login!", "", "ÜBER über", "x".repeat(50), "--", "a/b"];

// ---------------------------------------------------------------------------
// Choosing

export function liveBerths(s: Snapshot): WorktreeRow[] {
  return s.worktrees.filter((w) => !w.isMain && w.markerId !== null && w.folder);
}

function checkouts(s: Snapshot): WorktreeRow[] {
  return s.worktrees.filter((w) => w.folder);
}

export function chooseWorldOp(rng: Prng, world: World, s: Snapshot): WorldOp | null {
  const live = liveBerths(s);
  const onBranch = live.filter((w) => w.branch !== null);
  const locked = s.worktrees.filter((w) => w.locked);
  const prefixBranches = [...branchesOf(s).keys()].filter((b) => b.startsWith(PREFIX));
  // Berths on a branch with no merge left in progress: the new hand changes' subjects.
  const quiet = onBranch.filter((w) => !world.merging.has(w.path));
  const withSub = live.filter((w) => world.submodules.has(w.path));
  const kind = rng.weighted({
    commit: live.length > 0 ? 14 : 0,
    "commit-trunk": 3,
    dirty: 6,
    lock: live.length > 0 ? 1.5 : 0,
    unlock: locked.length > 0 ? 3 : 0,
    "remove-folder": live.length > 0 ? 1 : 0,
    foreign: 0.7,
    detach: onBranch.length > 0 ? 0.7 : 0,
    "land-by-hand": prefixBranches.length > 0 ? 3 : 0,
    "squash-by-hand": prefixBranches.length > 0 ? 2 : 0,
    tag: 0.7,
    fault: 3,
    "redefine-gate": 1.5,
    "add-submodule": quiet.length > 0 ? 0.5 : 0,
    "dirty-submodule": withSub.length > 0 ? 1.5 : 0,
    "submodule-commit": withSub.length > 0 ? 1 : 0,
    "start-merge": quiet.length > 0 ? 0.7 : 0,
    "stop-am": quiet.length > 0 ? 0.5 : 0,
    "ignored-collision": quiet.length > 0 && s.worktrees[0]?.branch === TRUNK ? 0.7 : 0,
  });
  switch (kind) {
    case "commit": {
      const w = rng.pick(live);
      const mode = rng.weighted({ all: 6, one: 3, empty: 1, fail: 1.5, unfail: 1.5 });
      return { kind, path: w.path, mode, file: rng.pick(FILES) };
    }
    case "commit-trunk":
      return { kind, file: rng.pick(["t1.txt", "t2.txt", "shared.txt", "f1.txt"]) };
    case "dirty": {
      const w = rng.pick(checkouts(s));
      const mode = rng.weighted({ untracked: 5, modify: 4, delete: 1 });
      const file =
        mode === "untracked"
          ? rng.pick(["u1.txt", "u2.txt", "f1.txt", "f2.txt", "t1.txt"])
          : rng.pick(["README.md", "shared.txt"]);
      return { kind, path: w.path, mode, file };
    }
    case "lock":
      return { kind, path: rng.pick(live).path };
    case "unlock":
      return { kind, path: rng.pick(locked).path };
    case "remove-folder":
      return { kind, path: rng.pick(live).path };
    case "foreign":
      return {
        kind,
        branch: rng.chance(0.5) ? `manual-${world.next()}` : `${PREFIX}manual-${world.next()}`,
      };
    case "detach":
      return { kind, path: rng.pick(onBranch).path };
    case "land-by-hand":
    case "squash-by-hand":
      return { kind, branch: rng.pick(prefixBranches) };
    case "tag": {
      const branches = [...branchesOf(s)];
      const [branch, tip] = rng.pick(branches);
      // Sometimes a tag named like a branch: `start --from` must then refuse as ambiguous.
      return { kind, name: rng.chance(0.4) ? branch : `v${world.next()}`, commit: tip };
    }
    case "fault": {
      const fault = rng.weighted<Fault>({ "fail-destroy": 5, "fail-create": 2, "fail-setup": 2 });
      return { kind, fault, on: !world.faults.has(fault) };
    }
    case "redefine-gate": {
      const extra = world.gate.some((c) => c.name === "extra");
      const change = rng.weighted<GateChange>({
        "add-extra": extra ? 0 : 2,
        "remove-extra": extra ? 2 : 0,
        "alter-command": 2,
        "alter-timeout": 3,
        reorder: extra ? 1 : 0,
      });
      return { kind, change };
    }
    case "add-submodule":
      return { kind, path: rng.pick(quiet).path };
    case "dirty-submodule":
    case "submodule-commit":
      return { kind, path: rng.pick(withSub).path };
    case "start-merge":
    case "stop-am":
      return { kind, path: rng.pick(quiet).path };
    case "ignored-collision":
      return { kind, path: rng.pick(quiet).path };
  }
}

export function redefinedGate(gate: GateCheck[], change: GateChange): GateCheck[] {
  const next = gate.map((c) => ({ ...c }));
  const fuzz = next.find((c) => c.name === "fuzz") as GateCheck;
  switch (change) {
    case "add-extra":
      return [...next, { name: "extra", variant: 0, timeout: null }];
    case "remove-extra":
      return next.filter((c) => c.name !== "extra");
    case "alter-command":
      // Three variants: a definition can come back, and with it the receipts it proved.
      fuzz.variant = (fuzz.variant + 1) % 3;
      return next;
    case "alter-timeout":
      fuzz.timeout = fuzz.timeout === null ? 300 : null;
      return next;
    case "reorder":
      return next.reverse();
  }
}

export function chooseVerbOp(rng: Prng, world: World, s: Snapshot): VerbOp {
  const live = liveBerths(s);
  const registered = s.worktrees.filter((w) => !w.isMain && w.markerId !== null);
  const prefixBranches = [...branchesOf(s).keys()].filter((b) => b.startsWith(PREFIX));
  const kind = rng.weighted({
    start: live.length < 2 ? 6 : live.length < 4 ? 2.5 : 1,
    "start-from": prefixBranches.length > 0 ? 6 : 0,
    gate: live.length > 0 ? 8 : 1,
    update: live.length > 0 ? 5 : 1,
    status: 1,
    accept: registered.length + prefixBranches.length > 0 ? 7 : 0,
    prune: 4,
    "prune-contained": 5,
    "prune-no-yes": 1,
    drop: registered.length > 0 ? 3 : 0.5,
    "drop-force": registered.length > 0 ? 3 : 0.5,
    setup: live.length > 0 ? 0.7 : 0,
    teardown: live.length > 0 ? 0.7 : 0,
  });
  const somewhere = () =>
    live.length > 0 && rng.chance(0.85) ? rng.pick(live).path : world.mainPath;
  switch (kind) {
    case "start":
      return {
        kind: "start",
        cwd: rng.chance(0.8) ? world.mainPath : somewhere(),
        name: rng.chance(0.1) ? undefined : rng.pick(NAMES),
        from: undefined,
      };
    case "start-from":
      return {
        kind: "start",
        cwd: world.mainPath,
        name: rng.pick(NAMES),
        from: chooseBase(rng, s, prefixBranches),
      };
    case "gate":
      return { kind, cwd: somewhere() };
    case "update": {
      const others = [...branchesOf(s).keys()];
      return { kind, cwd: somewhere(), from: rng.chance(0.25) ? rng.pick(others) : undefined };
    }
    case "status":
      return { kind, cwd: somewhere() };
    case "accept": {
      if (live.length > 0 && rng.chance(0.15)) {
        return { kind, cwd: rng.pick(live).path, target: undefined, subject: null };
      }
      // Mostly berths that pass accept's preconditions, so validation, landing and
      // teardown run often; the rest exercise the refusals.
      const landable = live.filter(
        (w) =>
          w.branch !== null &&
          !w.locked &&
          w.head !== null &&
          !world.hasDirt(w.path) &&
          s.trunkTip !== null &&
          isAncestorIn(s.graph, s.trunkTip, w.head) &&
          w.head !== s.trunkTip,
      );
      const onBranch =
        landable.length > 0 && rng.chance(0.75) ? landable : live.filter((w) => w.branch !== null);
      if (onBranch.length > 0 && rng.chance(0.8)) {
        const w = rng.pick(onBranch);
        return {
          kind,
          cwd: world.mainPath,
          target: rng.chance(0.7) ? (w.markerId as string) : (w.branch as string),
          subject: w.path,
        };
      }
      const { target, subject } = chooseTarget(rng, world, s, prefixBranches);
      return { kind, cwd: world.mainPath, target, subject };
    }
    case "prune":
      return { kind, contained: false, yes: true };
    case "prune-contained":
      return { kind: "prune", contained: true, yes: true };
    case "prune-no-yes":
      return { kind: "prune", contained: rng.chance(0.7), yes: false };
    case "drop":
    case "drop-force": {
      const { target, subject } = chooseTarget(rng, world, s, prefixBranches);
      const force = kind === "drop-force";
      const raced =
        force && subject !== null && existsSync(subject) && rng.chance(0.3)
          ? `raced-${world.next()}.txt`
          : undefined;
      return { kind: "drop", target, subject, force, yes: true, raced };
    }
    case "setup":
      return { kind, cwd: rng.pick(live).path };
    case "teardown":
      return { kind, cwd: rng.pick(live).path };
  }
}

function chooseBase(rng: Prng, s: Snapshot, prefixBranches: string[]): string {
  const roll = rng.weighted({ branch: 8, trunk: 1, commit: 1, tag: 1, unknown: 0.5 });
  const tags = [...s.refs.keys()].filter((r) => r.startsWith("refs/tags/"));
  if (roll === "trunk") return TRUNK;
  if (roll === "unknown") return "no-such-ref";
  if (roll === "tag" && tags.length > 0) return rng.pick(tags).slice("refs/tags/".length);
  const branch = rng.pick(prefixBranches);
  if (roll === "commit") {
    const tip = branchesOf(s).get(branch) as string;
    return rng.chance(0.5) ? tip : tip.slice(0, 10);
  }
  return branch;
}

/** A `<berth>` argument, and the checkout it should name (null: no berth / not a checkout). */
function chooseTarget(
  rng: Prng,
  world: World,
  s: Snapshot,
  prefixBranches: string[],
): { target: string; subject: string | null } {
  const registered = s.worktrees.filter((w) => !w.isMain && w.markerId !== null);
  const roll = rng.weighted({
    berth: registered.length > 0 ? 12 : 0,
    ref: prefixBranches.length > 0 ? 1 : 0,
    main: 0.5,
    foreign: s.worktrees.some((w) => !w.isMain && w.markerId === null) ? 1 : 0,
    unknown: 0.3,
  });
  if (roll === "main") return { target: world.mainPath, subject: world.mainPath };
  if (roll === "unknown") return { target: "no-such-berth", subject: null };
  if (roll === "foreign") {
    const w = rng.pick(s.worktrees.filter((x) => !x.isMain && x.markerId === null));
    return { target: w.path, subject: w.path };
  }
  if (roll === "ref") {
    const branch = rng.pick(prefixBranches);
    const holder = s.worktrees.find((w) => w.branch === branch);
    return { target: branch, subject: holder?.path ?? null };
  }
  const w = rng.pick(registered);
  const how = rng.weighted({ id: 5, path: 2, branch: w.branch ? 2 : 0 });
  const target =
    how === "id" ? (w.markerId as string) : how === "path" ? w.path : (w.branch as string);
  return { target, subject: w.path };
}

// ---------------------------------------------------------------------------
// Applying hand changes

export function applyWorldOp(world: World, op: WorldOp, s: Snapshot, rng: Prng): string {
  const n = world.next();
  // Chosen from the last snapshot: an earlier hand change may have deleted the folder since.
  if ("path" in op && op.kind !== "unlock" && op.kind !== "lock" && !existsSync(op.path)) {
    return "skipped: the folder is gone";
  }
  switch (op.kind) {
    case "commit": {
      const dirt = world.dirtyOf(op.path);
      if (op.mode === "all" || op.mode === "fail") {
        const file = op.mode === "fail" ? "FAIL" : op.file;
        writeFileSync(join(op.path, file), `${file} ${rng.int(0, 3)}\n`);
        const ok = world.trySh(
          op.path,
          'git add -A && git commit -q --allow-empty -m "$1"',
          `c${n}`,
        );
        if (!ok) throw new Error(`git commit -a failed in ${op.path}`);
        // A submodule's own changes are not the superproject's to commit.
        for (const file of [...dirt.keys()]) if (!file.startsWith("sub/")) dirt.delete(file);
        return "committed all";
      }
      if (op.mode === "unfail") {
        if (!world.tryGit(op.path, ["rm", "-q", "--cached", "--ignore-unmatch", "FAIL"]))
          return "no FAIL";
        rmSync(join(op.path, "FAIL"), { force: true });
        dirt.delete("FAIL");
        world.tryGit(op.path, ["commit", "-q", "--allow-empty", "--only", "-m", `c${n} unfail`]);
        return "removed FAIL";
      }
      if (op.mode === "empty") {
        world.tryGit(op.path, ["commit", "-q", "--allow-empty", "--only", "-m", `c${n} empty`]);
        return "empty commit";
      }
      const content = `${op.file} ${n}\n`;
      writeFileSync(join(op.path, op.file), content);
      const ok = world.trySh(op.path, COMMIT_ONE, op.file, `c${n}`);
      // A failed commit (the file already had this content) leaves it as git sees it.
      if (ok || world.isClean(op.path, op.file)) dirt.delete(op.file);
      else dirt.set(op.file, content);
      return ok ? "committed one file" : "nothing to commit";
    }
    case "commit-trunk": {
      const main = world.mainPath;
      const dirt = world.dirtyOf(main);
      if (dirt.has(op.file)) return "skipped: the file has uncommitted changes";
      if (s.worktrees[0]?.branch !== TRUNK) return "skipped: main checkout is not on the trunk";
      writeFileSync(join(main, op.file), `trunk ${n}\n`);
      const ok = world.trySh(main, COMMIT_ONE, op.file, `trunk ${n}`);
      if (!ok && !world.isClean(main, op.file)) dirt.set(op.file, `trunk ${n}\n`);
      return ok ? "trunk commit" : "trunk commit failed";
    }
    case "dirty": {
      const file = join(op.path, op.file);
      const dirt = world.dirtyOf(op.path);
      if (op.mode === "delete") {
        rmSync(file, { force: true });
        dirt.set(op.file, null);
        return "deleted a file";
      }
      const content = `${op.mode} ${n}\n`;
      writeFileSync(file, content);
      dirt.set(op.file, content);
      return `wrote ${op.file}`;
    }
    case "lock":
      return world.tryGit(world.mainPath, ["worktree", "lock", "--reason", "fuzz", op.path])
        ? "locked"
        : "lock failed";
    case "unlock":
      return world.tryGit(world.mainPath, ["worktree", "unlock", op.path])
        ? "unlocked"
        : "unlock failed";
    case "remove-folder":
      rmSync(op.path, { recursive: true, force: true });
      world.forget(op.path);
      return "folder deleted by hand";
    case "foreign": {
      const path = join(`${world.mainPath}.worktrees`, op.branch.replace(/\//g, "-"));
      return world.tryGit(world.mainPath, ["worktree", "add", "-q", "-b", op.branch, path, TRUNK])
        ? `hand-made worktree ${path}`
        : "worktree add failed";
    }
    case "detach":
      return world.tryGit(op.path, ["checkout", "-q", "--detach"]) ? "detached" : "detach failed";
    case "land-by-hand": {
      const main = world.mainPath;
      // git's own fast-forward may rewrite a dirty main checkout's files (a deleted
      // file comes back); that loss is git's, so the model lands by hand only when clean.
      if (world.hasDirt(main)) return "skipped: the main checkout has uncommitted changes";
      const ok = world.tryGit(main, ["merge", "-q", "--ff-only", op.branch]);
      return ok ? "fast-forwarded the trunk by hand" : "not a fast-forward";
    }
    case "squash-by-hand": {
      const main = world.mainPath;
      if (world.hasDirt(main)) return "skipped: the main checkout has uncommitted changes";
      if (!world.tryGit(main, ["merge", "-q", "--squash", op.branch])) {
        world.tryGit(main, ["reset", "-q", "--merge"]);
        return "the squash conflicts";
      }
      const ok = world.tryGit(main, ["commit", "-q", "-m", `c${n} squash of ${op.branch}`]);
      return ok ? "squash-merged into the trunk by hand" : "nothing to squash";
    }
    case "tag":
      return world.tryGit(world.mainPath, ["tag", op.name, op.commit]) ? "tagged" : "tag failed";
    case "fault":
      world.setFault(op.fault, op.on);
      return op.on ? `${op.fault} on` : `${op.fault} off`;
    case "redefine-gate":
      world.redefineGate(redefinedGate(world.gate, op.change));
      return `berth.toml now declares ${JSON.stringify(world.gate)}`;
    case "add-submodule": {
      if (world.submodules.has(op.path)) return "skipped: it has one";
      const ok = world.trySh(op.path, ADD_SUBMODULE, submoduleSource(), `c${n} submodule`);
      if (!ok) return "submodule add failed";
      world.submodules.add(op.path);
      return "added and committed submodule sub";
    }
    case "dirty-submodule": {
      const file = join(op.path, "sub", "lib.txt");
      if (!existsSync(file)) return "skipped: the submodule is not populated";
      const content = `submodule edit ${n}\n`;
      writeFileSync(file, content);
      world.dirtyOf(op.path).set("sub/lib.txt", content);
      return "edited sub/lib.txt";
    }
    case "submodule-commit": {
      if (!existsSync(join(op.path, "sub", "lib.txt")))
        return "skipped: the submodule is not populated";
      if (!world.trySh(join(op.path, "sub"), SUBMODULE_COMMIT, String(n))) return "commit failed";
      const sub = join(op.path, "sub");
      const commit = world.git(sub, ["rev-parse", `w${n}`]).trim();
      const gitDir = world.git(sub, ["rev-parse", "--absolute-git-dir"]).trim();
      world.nestedCommits.set(commit, { berth: op.path, gitDir });
      return `committed ${commit.slice(0, 10)} on sub's branch w${n}, only there`;
    }
    case "start-merge": {
      const file = `conflict-${n}.txt`;
      if (!world.trySh(op.path, START_MERGE, String(n), file)) return "could not start the merge";
      world.dirtyOf(op.path).set(file, readFileSync(join(op.path, file), "utf8"));
      world.merging.add(op.path);
      return `merge left in progress (conflict in ${file})`;
    }
    case "stop-am": {
      if (!world.trySh(op.path, STOP_AM)) return "could not stop an am";
      world.patching.add(op.path);
      return "git am stopped half-way (rebase-apply/), the tree clean";
    }
    case "ignored-collision": {
      const main = world.mainPath;
      const file = `c${n}.local`;
      if (s.worktrees[0]?.branch !== TRUNK) return "skipped: main checkout is not on the trunk";
      const mine = `the berth's own ignored ${file}\n`;
      writeFileSync(join(op.path, file), mine);
      world.ignoredOf(op.path).set(file, mine);
      const ok = world.trySh(main, FORCE_ADD, file, `trunk force-adds ${file}`);
      if (!ok) throw new Error(`the trunk could not force-add ${file}`);
      return `the berth ignores ${file}; the trunk now tracks it`;
    }
  }
}

// ---------------------------------------------------------------------------
// Running verbs

export async function applyVerb(world: World, op: VerbOp, rng: Prng): Promise<VerbOutcome> {
  const ctx = world.context("cwd" in op ? op.cwd : world.mainPath);
  try {
    const outcome = await runInProcess(world, op, ctx, rng);
    // Rendering is part of the verb: a crash there is a crash the user sees.
    outcome.human(colorsFor(false, {}));
    renderJson(outcome.result);
    const { result } = outcome;
    return {
      ok: result.ok,
      code: result.error?.code ?? null,
      nothingChanged: null,
      data: result.data,
      unexpected: null,
      message: result.error?.message ?? null,
    };
  } catch (error) {
    if (error instanceof UserError) {
      return {
        ok: false,
        code: error.code,
        nothingChanged: error.nothingChanged,
        data: error.data ?? null,
        unexpected: null,
        message: error.message,
      };
    }
    const err = error as Error;
    return {
      ok: false,
      code: "internal",
      nothingChanged: null,
      data: null,
      unexpected: `${err.name}: ${err.message}\n${err.stack ?? ""}`,
      message: err.message,
    };
  }
}

async function runInProcess(
  world: World,
  op: VerbOp,
  ctx: ReturnType<World["context"]>,
  rng: Prng,
): Promise<CommandOutcome> {
  switch (op.kind) {
    case "start": {
      const result = await startBerth(ctx, {
        name: op.name,
        from: op.from,
        random: (digits) => rng.hex(digits),
      });
      const { renderStart } = await import("../../../src/ui/start-view.js");
      return { result, human: (c) => renderStart(result, c) };
    }
    case "gate":
      return (await import("../../../src/commands/gate.js")).gateCommand(ctx, {});
    case "update":
      return (await import("../../../src/commands/update.js")).updateCommand(
        ctx,
        op.from === undefined ? {} : { from: op.from },
      );
    case "status":
      return (await import("../../../src/commands/status.js")).statusCommand(ctx, {});
    case "accept":
      return (await import("../../../src/commands/accept.js")).acceptCommand(ctx, op.target, {
        yes: true,
      });
    case "prune":
      return (await import("../../../src/commands/worktree-prune.js")).worktreePruneCommand(ctx, {
        contained: op.contained,
        yes: op.yes,
      });
    case "drop": {
      const { dropOutcome, worktreeDropCommand } = await import(
        "../../../src/commands/worktree-drop.js"
      );
      if (op.raced === undefined || op.subject === null) {
        return worktreeDropCommand(ctx, op.target, { force: op.force, yes: op.yes });
      }
      const { applyDrop, planDrop } = await import("../../../src/core/lifecycle/drop.js");
      const plan = await planDrop(ctx, { target: op.target, force: true });
      const content = `raced ${op.raced}\n`;
      writeFileSync(join(op.subject, op.raced), content);
      world.dirtyOf(op.subject).set(op.raced, content);
      return dropOutcome(asApplied(await applyDrop(ctx, plan)));
    }
    case "setup":
      return (await import("../../../src/commands/worktree-setup.js")).worktreeSetupCommand(
        ctx,
        {},
      );
    case "teardown":
      return (await import("../../../src/commands/worktree-teardown.js")).worktreeTeardownCommand(
        ctx,
        { yes: true },
      );
    case "submit":
      return (await import("../../../src/commands/accept.js")).acceptCommand(ctx, op.target, {
        yes: op.approved,
        wait: false,
      });
    case "agent-accept": {
      const accept = await import("../../../src/commands/accept.js");
      // The model's context has no terminal: the CLI's accept without --yes hands it over.
      return op.via === "mcp"
        ? accept.agentAcceptCommand(ctx, op.target)
        : accept.acceptCommand(ctx, op.target, {});
    }
    case "queue-run":
      return (await import("../../../src/commands/queue.js")).queueRunCommand(ctx);
    case "queue-approve":
      return (await import("../../../src/commands/queue.js")).queueApproveCommand(ctx, op.target);
    case "queue-withdraw":
      return (await import("../../../src/commands/queue.js")).queueWithdrawCommand(ctx, op.target);
  }
}

/** Commits reachable from the trunk in a snapshot. */
export function onTrunk(s: Snapshot): Set<string> {
  return s.trunkTip === null ? new Set() : reachable(s.graph, [s.trunkTip]);
}

export function describeOp(op: Op): string {
  const q = (text: string | undefined) => (text === undefined ? "" : ` ${JSON.stringify(text)}`);
  switch (op.kind) {
    case "start":
      return `berth start${q(op.name)}${op.from === undefined ? "" : ` --from ${op.from}`}  (in ${op.cwd})`;
    case "gate":
    case "status":
    case "setup":
      return `berth ${op.kind === "setup" ? "worktree setup" : op.kind}  (in ${op.cwd})`;
    case "teardown":
      return `berth worktree teardown --yes  (in ${op.cwd})`;
    case "update":
      return `berth update${op.from === undefined ? "" : ` --from ${op.from}`}  (in ${op.cwd})`;
    case "accept":
      return `berth accept${q(op.target)} --yes  (in ${op.cwd})`;
    case "prune":
      return `berth worktree prune${op.contained ? " --contained" : ""}${op.yes ? " --yes" : ""}`;
    case "submit":
      return `berth accept ${op.target} --no-wait${op.approved ? " --yes" : ""}`;
    case "agent-accept":
      return op.via === "mcp"
        ? `[mcp] accept ${op.target}`
        : `berth accept ${op.target}  (no terminal)`;
    case "queue-run":
      return "berth queue run";
    case "queue-approve":
    case "queue-withdraw":
      return `berth queue ${op.kind.slice("queue-".length)} ${op.target}`;
    case "drop":
      return `berth worktree drop ${op.target}${op.force ? " --force" : ""}${op.yes ? " --yes" : ""}${op.raced ? `  (${op.raced} written after the plan)` : ""}`;
    default:
      return `[hand] ${JSON.stringify(op)}`;
  }
}
