import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { listRefs, readRefTips, resolveCommit } from "../../git/refs.js";
import { readLandingEntries } from "../../io/landing-log.js";
import { acquireLockFile, type HeldLock, thisProcessOwner } from "../../io/lock.js";
import {
  isBeingLanded,
  isFinal,
  type QueueEntry,
  queueLockPath,
  readQueue,
} from "../../io/queue-store.js";
import { readLandingRecords } from "../../io/unfinished-landing.js";
import { shortOid } from "../../text.js";
import { surveyFleet } from "../fleet/survey.js";
import { fetchRemoteTrunk } from "../repo/remote.js";
import type { Repository } from "../repo/repository.js";
import { detectTrunk, TRUNK_REF_PREFIXES } from "../repo/trunk.js";
import type { AcceptApplyOptions } from "./accept.js";
import { applyAccept, planAccept } from "./accept.js";
import { behindTrunk } from "./accept-subject.js";
import { finishEntry } from "./queue-finish.js";
import {
  discardIntegration,
  integrate,
  integrationIdPrefix,
  landFastForward,
  onTrunkNow,
} from "./queue-integrate.js";
import {
  archiveOldEntries,
  type GroupOutcome,
  isRemoteFailure,
  type Lander,
  refused,
  rejectEntry,
  rejectMoved,
  stillQueued,
  updateEntry,
} from "./queue-lander.js";

/**
 * Draining the landing queue (spec section 11): the one place the order of
 * landing is decided. Under the queue lock, in order:
 *   1. recover entries a killed lander left mid-way (invariant 7): an
 *      integration commit already on the trunk is finished; anything else
 *      is put back in the queue and its integration checkout removed;
 *   2. take the next `[acceptance].batch` queued entries (entries awaiting
 *      approval are passed over, never landed);
 *   3. land the group (./queue-integrate.ts); a red batch is split in halves
 *      and each half landed the same way, until the failing entry stands
 *      alone and is rejected;
 *   4. repeat until nothing is queued (or the caller's own entry is decided);
 *   5. record entries awaiting approval that another landing carried onto
 *      the trunk as landed (`settleCarried`).
 * A trunk that moved under a landing (a compare-and-swap that lost) sends the
 * group round again on the new tip, a bounded number of times.
 */

const MAX_ROUNDS = 5;
const LOCK_POLL_MS = 500;

export interface DrainReport {
  /** Entries this lander decided, in order. */
  decided: QueueEntry[];
  gate_runs: number;
}

/** The trunk's name and its local tip (`refs/heads/<name>`). */
async function readTrunk(repo: Repository): Promise<{ name: string; tip: string }> {
  const refs = await listRefs(repo.mainPath, TRUNK_REF_PREFIXES);
  const trunk = detectTrunk(repo.config, refs);
  if (trunk.tip === null || trunk.name === null) {
    throw new UserError("precondition_failed", "There is no trunk to land on.", {});
  }
  return { name: trunk.name, tip: trunk.tip };
}

/** Takes the queue lock, waiting as long as another lander holds it (or until `stop`). */
export async function acquireQueueLock(
  repo: Repository,
  verb: string,
  stop: () => Promise<boolean> = async () => false,
): Promise<HeldLock | null> {
  for (;;) {
    try {
      return await acquireLockFile(queueLockPath(repo.location.commonDir), verb, {
        waitMs: LOCK_POLL_MS,
      });
    } catch (error) {
      if (!(error instanceof UserError && error.code === "locked")) throw error;
      if (await stop()) return null;
    }
  }
}

/** Drains the queue; the caller holds the queue lock. */
export async function drainQueue(
  ctx: Context,
  repo: Repository,
  options: AcceptApplyOptions & { own?: number | null } = {},
  results: Lander["results"] = new Map(),
): Promise<DrainReport> {
  const lander = landerFor(ctx, repo, options, results);
  const { name: trunk, tip: startTip } = await readTrunk(repo);
  const commonDir = repo.location.commonDir;
  try {
    await recover(lander, trunk);
    // An interrupt stops the drain: what it was landing went back in the queue (or was withdrawn).
    while (options.signal?.aborted !== true) {
      const entries = await readQueue(commonDir);
      const own = entries.find((e) => e.seq === lander.own);
      if (own !== undefined && isFinal(own)) break;
      const ready = entries.filter((e) => e.state === "queued" && e.authority !== null);
      if (ready.length === 0) break;
      // Without the queue's integrations every landing is one berth's fast-forward.
      const batch = repo.config.acceptance.queue ? repo.config.acceptance.batch : 1;
      const group = ready.slice(0, Math.max(1, batch));
      await landGroup(lander, group, trunk);
    }
    await settleCarried(lander, trunk);
    await archiveOldEntries(repo, ctx.now());
  } catch (error) {
    throw sayingTheTrunkMoved(error, trunk, startTip, await trunkMovedFrom(repo, trunk, startTip));
  }
  // What this lander wrote, not every entry final since it began: another process may withdraw one.
  const now = new Map((await readQueue(commonDir)).map((e) => [e.seq, e]));
  const decided = [...lander.decided].flatMap((seq) => now.get(seq) ?? []);
  return { decided, gate_runs: lander.gateRuns };
}

/** The trunk's tip now, when it has moved from `from` (null when it has not). */
export async function trunkMovedFrom(
  repo: Repository,
  trunk: string,
  from: string | null,
): Promise<string | null> {
  const now = await resolveCommit(repo.mainPath, `refs/heads/${trunk}`).catch(() => from);
  return now === from ? null : now;
}

/**
 * A refusal that comes after a drain landed entries: the trunk is not what
 * it was, so it must not say that nothing changed.
 */
export function sayingTheTrunkMoved(
  error: unknown,
  trunk: string,
  from: string | null,
  to: string | null,
): unknown {
  if (to === null || !(error instanceof UserError) || !error.nothingChanged) return error;
  return new UserError(
    error.code,
    `${error.message}\nBefore that, the queue landed other entries: ${trunk} moved ${shortOid(from)} → ${shortOid(to)} (berth queue lists them).`,
    { next: error.next, data: error.data, plan: error.plan, cause: error, nothingChanged: false },
  );
}

function landerFor(
  ctx: Context,
  repo: Repository,
  options: AcceptApplyOptions & { own?: number | null },
  results: Lander["results"] = new Map(),
): Lander {
  return {
    ctx,
    repo,
    options,
    me: thisProcessOwner("queue run", ctx.now()),
    own: options.own ?? null,
    results,
    gateRuns: 0,
    decided: new Set(),
  };
}

/**
 * Entries awaiting approval whose submitted tip is on the trunk now: another
 * landing carried them there (a later stage of their train), so they have
 * landed, `contained` (decision 0064). Left waiting, approving one later had
 * it rejected once prune deleted its branch. Only the entry is recorded: its
 * berth is a landed berth, prune's to clear, and no one let this lander
 * finish it.
 */
async function settleCarried(lander: Lander, trunk: string): Promise<void> {
  const { repo } = lander;
  const waiting = (await readQueue(repo.location.commonDir)).filter(
    (e) => e.state === "awaiting_approval",
  );
  const tip =
    waiting.length === 0 ? null : await resolveCommit(repo.mainPath, `refs/heads/${trunk}`);
  if (tip === null) return;
  for (const entry of waiting) {
    if (!(await isAncestor(repo.mainPath, entry.tip, tip).catch(() => false))) continue;
    await updateEntry(lander, entry, {
      state: "landed",
      landed: { old_trunk: tip, new_trunk: tip, via: "contained" },
    });
  }
}

/**
 * Settles berth `id`'s entry when a stopped lander left it integrating or
 * gating and no lander holds the queue now (one that does settles it
 * itself): `berth accept` finishing a landing by hand calls this, so the
 * entry does not read `gating` until the next `queue run`.
 */
export async function settleAbandonedEntry(ctx: Context, repo: Repository, id: string) {
  const left = (await readQueue(repo.location.commonDir)).some(
    (e) => e.id === id && isBeingLanded(e),
  );
  if (!left) return;
  const held = await acquireQueueLock(repo, "accept", async () => true);
  if (held === null) return;
  try {
    await recover(landerFor(ctx, repo, {}), (await readTrunk(repo)).name, (e) => e.id === id);
  } finally {
    await held.release();
  }
}

/** Lands a group; a red batch is bisected. */
async function landGroup(lander: Lander, group: QueueEntry[], trunk: string): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // Checked each round: a branch that moved while the last round ran (its gate) was not submitted.
    const pending = await stillSubmitted(
      lander,
      group.filter((e) => e.state === "queued"),
    );
    if (pending.length === 0) return;
    const outcome = await landOnce(lander, pending, trunk);
    if (outcome === "done" || lander.options.signal?.aborted) return;
    if (outcome === "red") {
      const half = Math.ceil(pending.length / 2);
      await landGroup(lander, pending.slice(0, half), trunk);
      await landGroup(lander, pending.slice(half), trunk);
      return;
    }
  }
  for (const entry of group.filter((e) => e.state === "queued")) {
    await rejectEntry(
      lander,
      entry,
      { kind: "moved", files: [], check: null },
      `${trunk} kept moving while it was being landed (${MAX_ROUNDS} tries); submit it again`,
    );
  }
}

async function landOnce(
  lander: Lander,
  pending: QueueEntry[],
  trunk: string,
): Promise<GroupOutcome> {
  // An entry already on the trunk travelled inside another landing (a later
  // stage of its train, accepted first): it has landed, and only its berth is left to finish.
  const onIt = await Promise.all(pending.map((entry) => onTrunkNow(lander.repo, trunk, entry.tip)));
  for (const entry of pending.filter((_, i) => onIt[i]))
    await landFastForward(lander, entry, trunk);
  const rest = pending.filter((_, i) => !onIt[i]);
  if (rest.length === 0) return "done";
  const base = await landingBase(lander.repo, trunk).catch((error: unknown) => {
    // Nothing was taken up: the entries wait, still queued, for a remote that answers.
    throw isRemoteFailure(error) ? stillQueued(rest, error) : error;
  });
  const [single] = rest;
  if (rest.length === 1 && single !== undefined) {
    const contains = await isAncestor(lander.repo.mainPath, base, single.tip).catch(() => false);
    if (contains) return landFastForward(lander, single, trunk);
    if (!lander.repo.config.acceptance.queue) {
      // The trunk (or the remote's) moved since it was submitted: refused as accept refuses it.
      const error = behindTrunk(single.branch, { name: trunk, tip: base }, single);
      await rejectEntry(lander, single, refused(), error.message, { error });
      return "done";
    }
  }
  return integrate(lander, rest, trunk, base);
}

/**
 * The commit a landing builds on: the trunk's tip, or with `[remote].name`
 * the remote's trunk fetched now when it is ahead of the local one (spec
 * section 13: the remote's trunk is the trunk). Fetched again each round, so
 * a push whose lease lost is re-integrated against the remote's new trunk.
 */
async function landingBase(repo: Repository, trunk: string): Promise<string> {
  const local = await resolveCommit(repo.mainPath, `refs/heads/${trunk}`);
  if (local === null) throw new UserError("precondition_failed", "There is no trunk to land on.");
  const remote = await fetchRemoteTrunk(repo, trunk, local, "nothing was landed", {
    refuseDiverged: true,
  });
  return remote?.tip ?? local;
}

/**
 * The entries whose berth still holds the tip it submitted (one for-each-ref
 * for the group); the others are rejected (what lands is what was submitted,
 * and a moved berth cannot be torn down).
 */
async function stillSubmitted(lander: Lander, group: QueueEntry[]): Promise<QueueEntry[]> {
  // for-each-ref with no pattern would list every ref.
  if (group.length === 0) return [];
  const tips = await readRefTips(
    lander.repo.mainPath,
    group.map((entry) => `refs/heads/${entry.branch}`),
  );
  const live: QueueEntry[] = [];
  for (const entry of group) {
    const now = tips.get(`refs/heads/${entry.branch}`) ?? null;
    if (now === entry.tip) {
      live.push(entry);
      continue;
    }
    await rejectMoved(lander, entry, now);
  }
  return live;
}

/**
 * Entries a lander left integrating or gating: this lander holds the queue
 * lock, so that lander is gone. What the trunk says decides what is left.
 */
async function recover(
  lander: Lander,
  trunk: string,
  only: (entry: QueueEntry) => boolean = () => true,
): Promise<void> {
  const { repo } = lander;
  const entries = await readQueue(repo.location.commonDir);
  for (const entry of entries.filter((e) => isBeingLanded(e) && only(e))) {
    const integration = entry.integration;
    if (integration?.commit && (await onTrunkNow(repo, trunk, integration.commit))) {
      const { id, trunk_tip: base, commit } = integration;
      if (id !== null) await finishIntegrationBerth(lander, id);
      // The integration berth's own record of the move names the local trunk tip it replaced.
      const replaced = (id === null ? null : await trunkMoveOf(repo, id, commit))?.old ?? base;
      await finishEntry(lander, entry, { old: base, new: commit, trunk, replaced }, null);
      continue;
    }
    if (integration === null && (await onTrunkNow(repo, trunk, entry.tip))) {
      // A fast-forward that moved the trunk before its lander stopped: accept's
      // own finish records the landing from its unfinished-landing record.
      const move = await trunkMoveOf(repo, entry.id, entry.tip);
      await finishIntegrationBerth(lander, entry.id);
      await updateEntry(lander, entry, {
        state: "landed",
        step: null,
        lander: null,
        landed: move && { old_trunk: move.old, new_trunk: move.new, via: "fast_forward" },
      });
      continue;
    }
    // Killed while its checkout was being made, the id was never recorded: it is named after the group's first entry.
    const ids = integration?.id ? [integration.id] : await integrationBerthsOf(repo, entry.seq);
    for (const id of ids) await discardIntegration(lander, id, [entry]);
    await updateEntry(lander, entry, {
      state: "queued",
      step: null,
      lander: null,
      integration: null,
    });
  }
}

/**
 * The trunk move berth `id`'s accept made to `landed`: from its
 * unfinished-landing record, or, once an accept finished it, from the landing
 * log; null when neither names it.
 */
async function trunkMoveOf(
  repo: Repository,
  id: string,
  landed: string,
): Promise<{ old: string; new: string } | null> {
  const commonDir = repo.location.commonDir;
  const record = (await readLandingRecords(commonDir)).find((r) => r.id === id && r.new === landed);
  if (record !== undefined) return { old: record.old, new: record.new };
  const logged = (await readLandingEntries(commonDir))
    .filter((e) => e.id === id && e.new_trunk === landed)
    .at(-1);
  return logged === undefined ? null : { old: logged.old_trunk, new: logged.new_trunk };
}

/** A berth whose landing moved the trunk (an integration berth, or a fast-forwarded one): its teardown and branch. */
async function finishIntegrationBerth(lander: Lander, id: string): Promise<void> {
  const ctx = { ...lander.ctx, cwd: lander.repo.mainPath };
  try {
    const plan = await planAccept(ctx, { target: id });
    if (plan.mode === "finish") await applyAccept(ctx, plan, {});
  } catch {
    // Already gone: nothing of it is left to finish.
  }
}

/** Integration berths a lander began for the group led by entry `seq` (./queue-integrate.ts names them). */
async function integrationBerthsOf(repo: Repository, seq: number): Promise<string[]> {
  const survey = await surveyFleet(repo, { readStatusOf: () => false });
  return survey.worktrees.flatMap((w) =>
    w.marker?.id.startsWith(integrationIdPrefix(seq)) ? [w.marker.id] : [],
  );
}
