import { existsSync, readFileSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";
import { isVerb, onTrunk, type VerbOp, type VerbOutcome } from "./ops.js";
import {
  branchesOf,
  fingerprint,
  isAncestorIn,
  type QueueRow,
  reachable,
  type Snapshot,
  type WorktreeRow,
} from "./snapshot.js";
import { PREFIX, RED_FILE, TRUNK, type World } from "./world.js";

/**
 * The safety invariants of spec section 9 (1-5, 7-9 and 11), checked after every verb
 * against the snapshot taken before it, plus what the spec says each verb
 * must or must not do to the fleet (the "model" checks). Each violation names
 * the invariant it breaks.
 */

export interface StepFacts {
  /** The main checkout had tracked changes before the verb (accept must refuse then). */
  mainTrackedDirty: boolean;
  /** Every file of the main checkout (tracked, untracked, ignored) before the verb. */
  mainFiles: Map<string, string>;
}

export interface StepCheck {
  violations: string[];
  /** Commits whose reachability was checked (invariant 1). */
  commitsChecked: number;
}

const RECOVERY = "refs/berth/recovery/";
const LANDING_NOTES = "refs/notes/berth-landings";
/** Codes after which something may have changed (the verb says how far it got). */
const CHANGING_CODES = new Set(["partial", "teardown_failed"]);

/**
 * The verbs that land: accept (and an agent's, when a grant lets it) drains the
 * queue until its own entry is decided, queue run all of it.
 */
function lands(op: VerbOp): boolean {
  return op.kind === "accept" || op.kind === "queue-run" || op.kind === "agent-accept";
}

export function checkStep(
  world: World,
  op: VerbOp,
  outcome: VerbOutcome,
  before: Snapshot,
  after: Snapshot,
  facts: StepFacts,
): StepCheck {
  const v: string[] = [];
  const forcedDrop = op.kind === "drop" && op.force;
  const newRecovery = new Map(
    [...after.refs].filter(([ref]) => ref.startsWith(RECOVERY) && !before.refs.has(ref)),
  );
  const landedAfter = onTrunk(after);
  const trunkBefore = onTrunk(before);
  // A recovery ref may hold what a forced drop discarded, or an integrated
  // berth's commits, which are not on the trunk (spec section 13): nothing else.
  const integrated = integratedJudge(world, after.trunkTip);
  const reliedOn = (tip: string) => forcedDrop || integrated(tip);
  const recovered = (tip: string) => [...newRecovery.values()].includes(tip) && reliedOn(tip);

  if (outcome.unexpected !== null)
    v.push(`[no stack traces] unexpected failure: ${outcome.unexpected}`);

  // Invariant 1: every commit reachable from a local branch before is reachable from a ref after
  // (a forced drop, or the removal of integrated work, may rely on the recovery ref it wrote).
  const mustHold = reachable(before.graph, branchesOf(before).values());
  const roots = [...after.refs]
    .filter(([ref, oid]) => !newRecovery.has(ref) || reliedOn(oid))
    .map(([, oid]) => oid);
  const held = reachable(after.graph, roots);
  const lost = [...mustHold].filter((c) => !held.has(c));
  if (lost.length > 0) {
    v.push(
      `[invariant 1] ${lost.length} commit(s) reachable from a branch before are unreachable from every ref after: ${lost
        .slice(0, 5)
        .map((c) => c.slice(0, 10))
        .join(", ")}`,
    );
  }

  // Invariant 1 in a berth's submodule: its own commits go only with a forced drop of the berth.
  for (const [commit, where] of world.nestedCommits) {
    if (forcedDrop && outcome.ok && op.subject === where.berth) {
      world.nestedCommits.delete(commit);
    } else if (!world.commitExistsIn(where.gitDir, commit)) {
      v.push(
        `[invariant 1] ${op.kind} deleted commit ${short(commit)} of ${where.berth}'s submodule, which no other repository has (${where.gitDir} is gone)`,
      );
      world.nestedCommits.delete(commit);
    }
  }

  // Invariant 2: uncommitted work is never destroyed, except by drop --force of that checkout.
  for (const [path, files] of world.dirty) {
    const forcedAway = forcedDrop && outcome.ok && op.subject === path;
    for (const [file, expected] of files) {
      // Written after the plan: a forced drop may not take it (the plan never named it).
      const chosen = forcedAway && !(op.kind === "drop" && op.raced === file);
      const full = join(path, file);
      const actual = existsSync(full) ? readFileSync(full, "utf8") : null;
      if (actual !== expected && !chosen) {
        v.push(
          `[invariant 2] uncommitted ${expected === null ? "deletion of" : "file"} ${full} ${actual === null ? "vanished" : "changed"} (expected ${JSON.stringify(expected)}, found ${JSON.stringify(actual)})`,
        );
      }
    }
  }

  // Invariant 3: the trunk moves only by a landing, only forward, only to a commit the gate proved.
  if (before.trunkTip !== after.trunkTip) {
    if (!lands(op)) {
      v.push(
        `[invariant 3] the trunk moved from ${short(before.trunkTip)} to ${short(after.trunkTip)} by ${op.kind}`,
      );
    } else if (after.trunkTip === null) {
      v.push(`[invariant 3] ${op.kind} deleted the trunk`);
    } else {
      if (before.trunkTip !== null && !isAncestorIn(after.graph, before.trunkTip, after.trunkTip)) {
        v.push(
          `[invariant 3] the trunk moved ${short(before.trunkTip)} -> ${short(after.trunkTip)}, not a fast-forward`,
        );
      }
      const tree = world.git(world.mainPath, ["rev-parse", `${after.trunkTip}^{tree}`]).trim();
      if (!world.provedTrees().has(tree)) {
        v.push(
          `[invariant 3] the trunk moved to ${short(after.trunkTip)} (tree ${short(tree)}), which no green gate run proved`,
        );
      }
    }
  }

  // Invariant 4 (and 1, for refs): a branch is deleted only when its tip is on the trunk, or by a
  // forced drop or the removal of integrated work that wrote a recovery ref for it; never outside
  // the prefix; never moved backwards.
  const branchesAfter = branchesOf(after);
  for (const [branch, tip] of branchesOf(before)) {
    const now = branchesAfter.get(branch);
    if (now === undefined) {
      if (!branch.startsWith(PREFIX))
        v.push(`[ownership] ${op.kind} deleted ${branch}, which is not under ${PREFIX}`);
      else if (landedAfter.has(tip)) continue;
      else if (recovered(tip)) continue;
      else
        v.push(
          `[invariant 4] ${op.kind} deleted branch ${branch} at ${short(tip)}, which is not on the trunk`,
        );
    } else if (now !== tip) {
      const movedHere =
        (op.kind === "update" && worktreeAt(before, op.cwd)?.branch === branch) ||
        (lands(op) && branch === TRUNK);
      if (!movedHere)
        v.push(`[refs] ${op.kind} moved ${branch} from ${short(tip)} to ${short(now)}`);
      else if (!isAncestorIn(after.graph, tip, now))
        v.push(`[refs] ${op.kind} moved ${branch} backwards or sideways`);
    }
  }
  for (const [ref, oid] of before.refs) {
    if (ref.startsWith("refs/heads/") || ref.startsWith(RECOVERY)) continue;
    const now = after.refs.get(ref);
    // A landing appends its note (docs/decisions/0019): it may move the notes ref, never delete it.
    if (ref === LANDING_NOTES && lands(op) && now !== undefined) continue;
    if (now !== oid) v.push(`[refs] ${op.kind} changed or deleted ${ref}`);
  }

  // Invariant 5: a checkout whose resources are still recorded is never removed.
  for (const row of after.ledger) {
    const owner = before.worktrees.find((w) => w.adminKey === row.key && w.markerId === row.id);
    if (!owner) continue;
    const now = after.worktrees.find((w) => w.adminKey === row.key && w.markerId === row.id);
    if (!now)
      v.push(
        `[invariant 5] the registration of ${row.id} was removed while its resource ${row.resource} lives`,
      );
    else if (owner.folder && !now.folder)
      v.push(
        `[invariant 5] the checkout of ${row.id} was removed while its resource ${row.resource} lives`,
      );
  }
  for (const file of after.resources) {
    const [id, resource] = splitResource(file);
    if (!after.ledger.some((r) => r.id === id && r.resource === resource)) {
      v.push(
        `[ledger] resource ${file} is alive but no ledger entry records it (it can never be destroyed)`,
      );
    }
  }
  for (const row of after.ledger) {
    if (!after.resources.has(`${row.id}.${row.resource}`)) {
      v.push(`[ledger] the ledger records ${row.id}/${row.resource}, which does not exist`);
    }
  }

  // Identity: no two berths share an id or a port.
  const ids = after.worktrees.flatMap((w) => (w.markerId === null ? [] : [w.markerId]));
  if (new Set(ids).size !== ids.length)
    v.push(`[identity] two berths share an id: ${ids.join(", ")}`);
  const ports = ids.map((id) => world.portOf(id));
  if (new Set(ports).size !== ports.length)
    v.push(`[identity] two berths share a port: ${ports.join(", ")}`);

  // Refusals change nothing.
  const refused = !outcome.ok && outcome.code !== null && !CHANGING_CODES.has(outcome.code);
  // An accept drains the queue for its own entry: entries queued before it may land though it is refused.
  const othersQueued =
    op.kind === "accept" &&
    before.queue.some((e) => e.state === "queued" && e.id !== acceptSubject(op, before)?.markerId);
  const saysUnchanged =
    outcome.nothingChanged === true || (op.kind === "accept" && refused && !othersQueued);
  if (refused && before.trunkTip !== after.trunkTip && /Nothing landed/.test(outcome.message ?? ""))
    v.push(
      `[honest refusals] ${op.kind} says nothing landed, but the trunk moved: ${outcome.message}`,
    );
  if (saysUnchanged && fingerprint(before) !== fingerprint(after)) {
    v.push(`[refusals change nothing] ${op.kind} refused (${outcome.code}) but the fleet changed`);
  }
  if (op.kind === "status" && fingerprint(before) !== fingerprint(after)) {
    v.push("[status observes] status changed the fleet");
  }
  const queue = checkQueue(world, op, outcome, before, after);
  v.push(...queue.violations);

  v.push(...checkMainCheckout(world, op, before, after, facts));
  v.push(...checkGateDefinition(world, op, before, after));
  v.push(...checkHandState(world, op, outcome, before, after, trunkBefore));
  v.push(...checkRemovals(world, op, before, after, trunkBefore, recovered, queue.landedIds));
  v.push(...checkVerb(world, op, outcome, before, after, facts, trunkBefore, newRecovery));
  return { violations: v, commitsChecked: mustHold.size };
}

/**
 * Invariant 9: nothing berth runs for a berth runs in, or writes to, the main
 * checkout. Its files (tracked, untracked and ignored, `var/` included, which
 * the resource commands' relative paths name) change only by accept bringing
 * the trunk's files along: the paths the trunk's move changed. Every destroy
 * ran in its berth's folder, or (that folder gone) in an empty private folder.
 */
function checkMainCheckout(
  world: World,
  op: VerbOp,
  before: Snapshot,
  after: Snapshot,
  facts: StepFacts,
): string[] {
  const v: string[] = [];
  const now = world.mainFiles();
  let allowed = new Set<string>();
  if (lands(op) && before.trunkTip !== null && after.trunkTip !== before.trunkTip) {
    const diff = world.git(world.mainPath, [
      "diff",
      "--no-renames",
      "--name-only",
      "-z",
      before.trunkTip,
      after.trunkTip as string,
    ]);
    allowed = new Set(diff.split("\0").filter(Boolean));
  }
  for (const file of new Set([...facts.mainFiles.keys(), ...now.keys()])) {
    const was = facts.mainFiles.get(file);
    const is = now.get(file);
    if (was === is || allowed.has(file)) continue;
    const what = was === undefined ? "appeared" : is === undefined ? "vanished" : "changed";
    v.push(`[invariant 9] ${op.kind} wrote to the main checkout: ${file} ${what}`);
  }
  const main = realPath(world.mainPath);
  for (const { id, cwd } of world.newDestroys()) {
    if (cwd === main || cwd.startsWith(`${main}/`)) {
      v.push(`[invariant 9] the destroy of ${id}'s resource ran in the main checkout (${cwd})`);
      continue;
    }
    const own = before.worktrees.find((w) => w.markerId === id && !w.isMain);
    const ownPath = own?.folder ? realPath(own.path) : null;
    // A berth this verb made (a start cleaning up after a failed create) has its folder where start puts it.
    const inOwn = cwd === ownPath || (own === undefined && cwd.startsWith(`${main}.worktrees/`));
    const privateEmpty = ownPath === null && basename(cwd).startsWith("berth-destroy-");
    if (!inOwn && !privateEmpty) {
      v.push(
        `[invariant 9] the destroy of ${id}'s resource ran in ${cwd}, not in its folder (${ownPath ?? "gone"}) nor an empty private one`,
      );
    }
  }
  return v;
}

/**
 * Invariant 8: a receipt is honored only for the gate definition it ran. When
 * accept moves the trunk to a tree, every check declared now must have passed
 * on that tree while the same definition was declared (a hand edit of
 * berth.toml in between makes the older runs count for nothing), and by the
 * model's rule (each check is red while its file is in the tree) the tree is
 * green under the declared checks.
 */
function checkGateDefinition(
  world: World,
  op: VerbOp,
  before: Snapshot,
  after: Snapshot,
): string[] {
  if (!lands(op) || after.trunkTip === null || after.trunkTip === before.trunkTip) return [];
  const v: string[] = [];
  const tree = world.git(world.mainPath, ["rev-parse", `${after.trunkTip}^{tree}`]).trim();
  const passed = world.provedUnderCurrentGate().get(tree) ?? new Set<string>();
  for (const check of world.gate) {
    if (!passed.has(check.name)) {
      v.push(
        `[invariant 8] ${op.kind} landed ${short(after.trunkTip)} (tree ${short(tree)}) though check ${check.name} never passed on it under the gate declared now ${JSON.stringify(world.gate)}`,
      );
    }
  }
  const red = world.gate.map((c) => RED_FILE[c.name]);
  const present = world
    .git(world.mainPath, ["ls-tree", "--name-only", after.trunkTip, "--", ...red])
    .split("\n")
    .filter(Boolean);
  if (present.length > 0) {
    v.push(
      `[invariant 8] ${op.kind} landed ${short(after.trunkTip)}, on which the declared gate is red (${present.join(", ")} present)`,
    );
  }
  return v;
}

/**
 * What the hand-made states of issue 15 require: a merge left in progress
 * survives every verb (update and gate refuse in it); an ignored file is never
 * overwritten (update refuses a merge that would replace it); changes inside a
 * submodule (and every other uncommitted change the model knows) make a berth
 * dirty for gate and status; a clean berth with a submodule tears down.
 */
function checkHandState(
  world: World,
  op: VerbOp,
  outcome: VerbOutcome,
  before: Snapshot,
  after: Snapshot,
  trunkBefore: Set<string>,
): string[] {
  const v: string[] = [];
  const present = (path: string) => after.worktrees.some((w) => w.path === path && w.folder);
  // A stopped am's patches live in the checkout's git dir: only a forced drop of it may take them.
  const forcedAway = (path: string) => op.kind === "drop" && op.force && op.subject === path;
  for (const path of world.patching) {
    if (present(path) || forcedAway(path)) continue;
    v.push(`[invariant 2] ${op.kind} removed ${path}, where a git am was stopped half-way`);
  }
  for (const path of world.merging) {
    if (!present(path)) continue;
    if (!world.mergeHeadExists(path))
      v.push(
        `[invariant 2] ${op.kind} ended the merge left in progress in ${path} (MERGE_HEAD is gone)`,
      );
    if ((op.kind === "update" || op.kind === "gate") && op.cwd === path && outcome.ok)
      v.push(`[invariant 2] ${op.kind} succeeded in ${path}, where a merge is in progress`);
  }
  for (const [path, files] of world.ignored) {
    if (!present(path)) continue;
    for (const [file, expected] of files) {
      const full = join(path, file);
      const actual = existsSync(full) ? readFileSync(full, "utf8") : null;
      if (actual !== expected)
        v.push(
          `[invariant 2] ${op.kind} ${actual === null ? "deleted" : "overwrote"} the ignored file ${full} (found ${JSON.stringify(actual)})`,
        );
    }
  }
  if (op.kind === "gate" && outcome.ok && op.cwd !== world.mainPath && world.hasDirt(op.cwd)) {
    v.push(
      `[invariant 2] gate passed in ${op.cwd}, which holds uncommitted changes: ${[...(world.dirty.get(op.cwd)?.keys() ?? [])].join(", ")}`,
    );
  }
  if (op.kind === "status" && outcome.ok) {
    for (const row of (outcome.data?.worktrees ?? []) as {
      path: string;
      clean: boolean | null;
      receipt: string;
    }[]) {
      if (row.path === world.mainPath || !world.hasDirt(row.path)) continue;
      if (row.clean === true || row.receipt === "honored")
        v.push(
          `[invariant 2] status calls ${row.path} clean (receipt ${row.receipt}), but it holds uncommitted changes: ${[...(world.dirty.get(row.path)?.keys() ?? [])].join(", ")}`,
        );
    }
  }
  if (op.kind === "drop" && op.subject !== null && world.faults.size === 0) {
    const w = worktreeAt(before, op.subject);
    const cleanSub =
      w !== undefined &&
      world.submodules.has(w.path) &&
      w.folder &&
      !w.locked &&
      w.markerId !== null &&
      !world.hasDirt(w.path) &&
      (op.force || (w.head !== null && trunkBefore.has(w.head) && !world.hasNestedWork(w.path)));
    if (cleanSub && !outcome.ok)
      v.push(
        `[invariant 7] drop of ${w.markerId}, a clean berth with a submodule, did not tear down: ${outcome.code} ${outcome.message?.split("\n")[0] ?? ""}`,
      );
  }
  return v;
}

/** The path with symlinks resolved (as `pwd -P` prints it); the path itself once it is gone. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Which registrations a verb may remove, and which it never may. */
function checkRemovals(
  world: World,
  op: VerbOp,
  before: Snapshot,
  after: Snapshot,
  trunkBefore: Set<string>,
  /** The tip is integrated work that a new recovery ref holds (spec section 13). */
  recovered: (tip: string) => boolean,
  /** Berths whose queue entry this verb landed, with leave to tear them down. */
  queueLanded: ReadonlySet<string>,
): string[] {
  const v: string[] = [];
  const branchesBefore = branchesOf(before);
  const branchesAfter = branchesOf(after);
  const trunkAfter = onTrunk(after);
  for (const w of before.worktrees) {
    if (after.worktrees.some((x) => x.path === w.path)) continue;
    const name = w.markerId ?? w.path;
    if (w.isMain) v.push("[ownership] the main checkout was removed");
    if (w.locked) v.push(`[locked] the locked worktree ${name} was removed`);
    if (w.markerId === null) v.push(`[ownership] ${w.path}, which berth did not make, was removed`);
    if (w.folder && world.hasDirt(w.path) && !(op.kind === "drop" && op.force)) {
      v.push(`[invariant 2] ${name} was removed with uncommitted files`);
    }
    const subject =
      op.kind === "drop" || op.kind === "accept"
        ? (op.subject ?? (op.kind === "accept" ? op.cwd : null))
        : null;
    if ((op.kind === "drop" || op.kind === "accept") && subject === w.path) continue;
    // A landing tears down each berth whose entry it landed; a --no-wait accept of a berth
    // already on the trunk finishes it (no entry: nothing is left to land).
    const onTrunkNow = w.head !== null && trunkAfter.has(w.head);
    if (lands(op) && w.markerId !== null && queueLanded.has(w.markerId) && onTrunkNow) continue;
    if (op.kind === "submit" && op.subject === w.path && w.head !== null && trunkBefore.has(w.head))
      continue;
    if (op.kind !== "prune") {
      v.push(`[removals] ${op.kind} removed ${name}, which it does not act on`);
      continue;
    }
    const stale = !w.folder;
    const landed = w.head !== null && trunkBefore.has(w.head);
    const tip = w.head;
    const contained =
      op.contained &&
      w.branch !== null &&
      tip !== null &&
      branchesAfter.get(w.branch) === tip &&
      [...branchesBefore].some(
        ([other, otherTip]) =>
          other !== w.branch &&
          other !== TRUNK &&
          otherTip !== tip &&
          isAncestorIn(before.graph, tip, otherTip),
      );
    const integrated = tip !== null && recovered(tip);
    if (!stale && !landed && !contained && !integrated) {
      v.push(
        `[invariant 4] prune${op.contained ? " --contained" : ""} removed ${name} (${short(tip)}), which is neither stale, landed, integrated with a recovery ref, nor contained with its ref kept`,
      );
    }
  }
  if (op.kind === "prune" && !op.yes && fingerprint(before) !== fingerprint(after)) {
    v.push(
      "[invariant 4] prune without --yes (no terminal) changed the fleet: nothing reclaims without a fresh confirmation",
    );
  }
  return v;
}

/**
 * The landing queue (spec section 11, invariant 11), from its entry files and
 * the model's own record of who let what land (`noteAuthority`): only a
 * landing lands an entry; an entry recorded landed has its tip on the trunk;
 * only a tip a person confirmed or approved (or a grant covered) lands for
 * itself, and another landing that carries an unapproved tip onto the trunk
 * records it `contained` and leaves its berth to prune; when the verb has
 * returned no entry is left half-landed (integrating or gating: no lander is
 * at work); approving or withdrawing an entry changes no ref or checkout.
 * Returns the berths whose entry this verb landed, which it may tear down.
 */
function checkQueue(
  world: World,
  op: VerbOp,
  outcome: VerbOutcome,
  before: Snapshot,
  after: Snapshot,
): { violations: string[]; landedIds: Set<string> } {
  const v: string[] = [];
  noteAuthority(world, op, outcome, before, after);
  const landedIds = new Set<string>();
  const was = new Map(before.queue.map((e) => [e.seq, e]));
  const trunkAfter = onTrunk(after);
  for (const e of after.queue) {
    if (e.state === "integrating" || e.state === "gating")
      v.push(`[invariant 7] ${op.kind} returned with entry ${e.seq} (${e.id}) left ${e.state}`);
    if (e.state !== "landed" || was.get(e.seq)?.state === "landed") continue;
    if (!lands(op)) v.push(`[queue] ${op.kind} recorded entry ${e.seq} (${e.id}) landed`);
    if (!trunkAfter.has(e.tip))
      v.push(
        `[queue] entry ${e.seq} (${e.id}) is recorded landed, but its tip ${short(e.tip)} is not on the trunk`,
      );
    const allowed = world.authorized.get(e.id) === e.tip;
    if (!allowed && e.via !== "contained")
      v.push(
        `[queue] ${op.kind} landed entry ${e.seq} (${e.id}) at ${short(e.tip)} (${e.via}), which no person confirmed or approved`,
      );
    if (allowed) landedIds.add(e.id);
  }
  if (
    (op.kind === "queue-approve" || op.kind === "queue-withdraw") &&
    fingerprint(before) !== fingerprint(after)
  )
    v.push(`[queue] ${op.kind} changed the fleet (${outcome.code ?? "ok"})`);
  return { violations: v, landedIds };
}

/**
 * The model's record of authority (spec section 11), kept from the verbs
 * alone: a person's `accept --yes` that submitted confirms the berth's tip; `queue approve`
 * approves an open entry's tip, or (no entry) grants the next submission; an
 * agent's submission keeps a confirmation only for the tip it was given at
 * (decision 0069); a withdrawal ends it, or the grant.
 */
function noteAuthority(
  world: World,
  op: VerbOp,
  outcome: VerbOutcome,
  before: Snapshot,
  after: Snapshot,
): void {
  const headOf = (path: string | null) =>
    (path === null ? undefined : worktreeAt(before, path))?.head ?? null;
  if (op.kind === "accept") {
    const w = acceptSubject(op, before);
    // Only a submission carries the confirmation (and takes up a grant given before it):
    // an accept refused before it submitted confirmed nothing.
    if (w?.markerId && newEntryOf(before, after, w.markerId)) {
      world.authorized.set(w.markerId, w.head);
      world.grants.delete(w.markerId);
    }
  } else if ((op.kind === "submit" || op.kind === "agent-accept") && submitted(op, before, after)) {
    // A submission takes up a grant given before it (and ends it).
    const granted = world.grants.delete(op.target);
    const tip = headOf(op.subject);
    if ((op.kind === "submit" && op.approved) || granted) world.authorized.set(op.target, tip);
    else if (world.authorized.get(op.target) !== tip) world.authorized.delete(op.target);
  } else if (op.kind === "queue-approve" && outcome.ok) {
    const open = openEntryOf(before, op.target);
    if (open === undefined) world.grants.add(op.target);
    else world.authorized.set(open.id, open.tip);
  } else if (op.kind === "queue-withdraw" && outcome.ok) {
    // The open entry leaves the queue, or (none) the standing grant is taken back.
    world.authorized.delete(op.target);
    if (openEntryOf(before, op.target) === undefined) world.grants.delete(op.target);
  }
}

/** The berth's entry still waiting to be landed (approve and withdraw act on it), if any. */
function openEntryOf(snapshot: Snapshot, id: string): QueueRow | undefined {
  return snapshot.queue.find(
    (e) => e.id === id && (e.state === "queued" || e.state === "awaiting_approval"),
  );
}

/**
 * The model's own reading of "integrated" (spec section 13), from git alone:
 * the tip's tree is the trunk's, or merging the tip into the trunk writes the
 * trunk's own tree (a conflict is never integrated). Memoised per step.
 */
function integratedJudge(world: World, trunkTip: string | null): (tip: string) => boolean {
  const memo = new Map<string, boolean>();
  if (trunkTip === null) return () => false;
  const treeOf = (commit: string) =>
    world.git(world.mainPath, ["rev-parse", `${commit}^{tree}`]).trim();
  return (tip) => {
    let known = memo.get(tip);
    if (known === undefined) {
      const trunkTree = treeOf(trunkTip);
      let merged: string | null = null;
      try {
        const args = ["-c", "merge.directoryRenames=true", "merge-tree", "--write-tree"];
        merged = world.git(world.mainPath, [...args, trunkTip, tip]).trim();
      } catch {
        merged = null; // a conflict (exit 1): not integrated
      }
      known = treeOf(tip) === trunkTree || merged === trunkTree;
      memo.set(tip, known);
    }
    return known;
  };
}

/**
 * Whether the verb submitted berth `op.target` to the queue: an entry of it is
 * new or rewritten (a refusal before the queue, or the finish of a berth
 * already landed, writes none).
 */
function submitted(
  op: Extract<VerbOp, { kind: "submit" | "agent-accept" }>,
  before: Snapshot,
  after: Snapshot,
): boolean {
  return newEntryOf(before, after, op.target);
}

/** Whether the queue holds an entry row for `id` it did not hold before (a new or changed one). */
function newEntryOf(before: Snapshot, after: Snapshot, id: string): boolean {
  const was = new Set(before.queue.map((e) => JSON.stringify(e)));
  return after.queue.some((e) => e.id === id && !was.has(JSON.stringify(e)));
}

/** The checkout an accept names, when it names one. */
function acceptSubject(
  op: Extract<VerbOp, { kind: "accept" }>,
  before: Snapshot,
): WorktreeRow | undefined {
  const path = op.subject ?? (op.target === undefined ? op.cwd : null);
  return path === null ? undefined : worktreeAt(before, path);
}

function checkVerb(
  world: World,
  op: VerbOp,
  outcome: VerbOutcome,
  before: Snapshot,
  after: Snapshot,
  facts: StepFacts,
  trunkBefore: Set<string>,
  newRecovery: Map<string, string>,
): string[] {
  const v: string[] = [];
  const stillThere = (path: string) => after.worktrees.some((w) => w.path === path);
  switch (op.kind) {
    case "start": {
      const added = after.worktrees.filter((w) => !before.worktrees.some((b) => b.path === w.path));
      if (outcome.ok) {
        const d = outcome.data;
        const row = added.find((w) => w.path === d?.path);
        if (added.length !== 1 || !row)
          v.push(`[start] expected one new checkout at ${d?.path}, found ${added.length}`);
        else {
          if (row.markerId !== d.id)
            v.push(`[start] the ready marker names ${row.markerId}, not ${d.id}`);
          if (row.branch !== `${PREFIX}${d.id}`)
            v.push(`[start] the branch is ${row.branch}, not ${PREFIX}${d.id}`);
          if (row.head !== d.from_tip)
            v.push(`[start] HEAD ${short(row.head)} is not the base ${short(d.from_tip)}`);
        }
        if (op.from === undefined && d?.from_tip !== before.trunkTip)
          v.push("[start] did not fork from the trunk tip");
      } else if (outcome.code !== "teardown_failed" && added.length > 0) {
        v.push(`[start] a failed start left ${added.length} checkout(s) behind`);
      }
      break;
    }
    case "drop": {
      const w = op.subject === null ? undefined : worktreeAt(before, op.subject);
      if (!w) {
        if (outcome.ok) v.push(`[drop] dropped "${op.target}", which names no berth`);
        break;
      }
      const unlanded = w.head !== null && !trunkBefore.has(w.head);
      const dirty = w.folder && world.hasDirt(w.path);
      const mustRefuse =
        w.isMain || w.locked || w.markerId === null || (!op.force && (unlanded || dirty));
      if (mustRefuse && outcome.ok)
        v.push(`[drop] dropped ${w.markerId ?? w.path} but must have refused`);
      if (mustRefuse && !stillThere(w.path))
        v.push(`[drop] removed ${w.path} but must have refused`);
      if (outcome.ok) {
        if (stillThere(w.path)) v.push(`[drop] said done but ${w.path} is still registered`);
        if (w.branch?.startsWith(PREFIX) && branchesOf(after).has(w.branch))
          v.push(`[drop] said done but kept ${w.branch}`);
        if (op.force && unlanded && ![...newRecovery.values()].includes(w.head as string)) {
          v.push(
            `[invariant 1] forced drop of ${w.markerId} wrote no recovery ref at ${short(w.head)}`,
          );
        }
      }
      break;
    }
    case "accept": {
      const w = acceptSubject(op, before);
      if (!w) break;
      const behind =
        before.trunkTip !== null &&
        w.head !== null &&
        !isAncestorIn(before.graph, before.trunkTip, w.head);
      const mustRefuse =
        w.isMain ||
        w.locked ||
        (w.folder && world.hasDirt(w.path)) ||
        (facts.mainTrackedDirty && !trunkBefore.has(w.head as string));
      // Behind the trunk, accept lands through the queue's integration commit (spec section 11).
      const throughIntegration = behind && !trunkBefore.has(w.head as string);
      if (mustRefuse && outcome.ok)
        v.push(`[accept] accepted ${w.markerId ?? w.path} but must have refused`);
      if (outcome.ok) {
        if (stillThere(w.path)) v.push(`[accept] said done but ${w.path} is still registered`);
        if (w.branch?.startsWith(PREFIX) && branchesOf(after).has(w.branch))
          v.push(`[accept] said done but kept ${w.branch}`);
        // Entries queued before it may land with it (a batch) or first: then it is merged too.
        const others = before.queue.some((e) => e.state === "queued" && e.id !== w.markerId);
        const landedAs =
          (throughIntegration || others) && after.trunkTip !== null && w.head !== null
            ? isAncestorIn(after.graph, w.head, after.trunkTip)
            : after.trunkTip === w.head;
        if (w.head !== null && !trunkBefore.has(w.head) && !landedAs) {
          v.push(
            `[accept] the trunk is at ${short(after.trunkTip)}, not the accepted tip ${short(w.head)}`,
          );
        }
        // Only a landing that moved the trunk brings the main checkout along; a stage
        // already on the trunk lands nothing, and the main checkout may hold its own edits.
        if (after.worktrees[0]?.branch === TRUNK && after.trunkTip !== before.trunkTip) {
          const tracked = world
            .git(world.mainPath, ["status", "--porcelain", "--untracked-files=no"])
            .trim();
          if (tracked !== "")
            v.push(`[accept] the main checkout's files did not follow the trunk:\n${tracked}`);
        }
      }
      if (outcome.code === "partial") {
        const landing = outcome.data?.landing;
        if (!landing) v.push("[accept] partial without data.landing");
        else {
          const landedNow = w.head !== null && onTrunk(after).has(w.head);
          if (landing.trunk_landed !== landedNow)
            v.push(
              `[accept] landing.trunk_landed is ${landing.trunk_landed}, the trunk says ${landedNow}`,
            );
          if (landing.worktree_removed !== !stillThere(w.path))
            v.push(`[accept] landing.worktree_removed is ${landing.worktree_removed}`);
          if (w.branch !== null && landing.branch_deleted !== !branchesOf(after).has(w.branch))
            v.push(`[accept] landing.branch_deleted is ${landing.branch_deleted}`);
        }
      }
      break;
    }
    case "gate": {
      const w = worktreeAt(before, op.cwd);
      if (!outcome.ok || !w || w.head === null) break;
      const tree = world.git(op.cwd, ["rev-parse", `${w.head}^{tree}`]).trim();
      if (!world.provedTrees().has(tree))
        v.push(`[gate] green on ${short(w.head)} though the check did not pass on it`);
      const receipt = readReceipt(world, w);
      if (receipt?.commit !== w.head || receipt?.tree !== tree)
        v.push(`[gate] green but the receipt is ${JSON.stringify(receipt)}`);
      break;
    }
    default:
      break;
  }
  if (!isVerb(op)) v.push("not a verb");
  return v;
}

function readReceipt(world: World, w: WorktreeRow): { commit?: string; tree?: string } | null {
  const dir =
    w.adminKey === null
      ? join(world.place.commonDir, "berth")
      : join(world.place.commonDir, "worktrees", w.adminKey, "berth");
  try {
    return JSON.parse(readFileSync(join(dir, "receipt.json"), "utf8"));
  } catch {
    return null;
  }
}

export function worktreeAt(s: Snapshot, path: string): WorktreeRow | undefined {
  return s.worktrees.find((w) => w.path === path);
}

function splitResource(file: string): [string, string] {
  const dot = file.indexOf(".");
  return [file.slice(0, dot), file.slice(dot + 1)];
}

function short(oid: string | null | undefined): string {
  return oid ? oid.slice(0, 10) : "none";
}
