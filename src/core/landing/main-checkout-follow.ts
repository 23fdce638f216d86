import { existsSync } from "node:fs";
import { UserError } from "../../errors.js";
import type { WorktreeEntry } from "../../git/parse.js";
import { indexFileOf, indexMatches, refreshIndex, twoTreeUpdate } from "../../git/read-tree.js";
import { resolveCommit } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { listWorktrees } from "../../git/worktrees.js";
import { withIndexCopy } from "../../io/index-copy.js";
import type { StepOutcome } from "../../result.js";
import { type CommandLine, commandSequence, shellCommand, shortOid } from "../../text.js";
import { type MainCheckoutPlace, mainCheckoutIndex } from "../repo/main-checkout.js";
import type { AcceptData, AcceptPlan } from "./accept.js";
import { untrackedFilesInTheWay } from "./files-in-the-way.js";

/**
 * The checkout that has the trunk checked out, when the trunk moves under it
 * (accept). Only the main checkout is brought along; berth refuses to move a
 * trunk that a linked worktree has checked out. Bringing it along is a
 * two-tree `read-tree -m -u` from the old tip to the new one, which is what
 * `git checkout` does: it keeps untracked files and refuses to overwrite any.
 *
 * Its steps for accept: who holds the trunk (`trunkHolders`); whether the
 * main checkout can follow (`followBlocker`, and accept's refusal when it
 * cannot, `followRefusal`); following and recording the step
 * (`followAndRecord`); and, when finishing an earlier landing, whether the
 * follow is still pending (`followState`, `finishFollow`).
 */

export interface TrunkHolders {
  /** The main checkout has the trunk checked out: its files must follow the trunk. */
  mainFollows: boolean;
  /** Linked worktrees that have the trunk checked out. */
  linked: string[];
}

/** Who has `trunk` checked out; `entries` in `git worktree list` order (the main checkout first). */
export function trunkHolders(
  entries: readonly WorktreeEntry[],
  trunk: string,
  place: MainCheckoutPlace,
): TrunkHolders {
  const main = entries[mainCheckoutIndex(entries, place)];
  const holders = entries.filter((e) => !e.prunable && !e.bare && e.branch === trunk);
  return {
    mainFollows: main !== undefined && holders.includes(main),
    linked: holders.filter((e) => e !== main).map((e) => e.path),
  };
}

export type FollowBlocker =
  | { kind: "tracked"; count: number; files: string[] }
  | { kind: "in_the_way"; files: string[] }
  | { kind: "index_locked"; lock: string }
  | { kind: "git"; output: string };

/**
 * Why the checkout at `path` (on the trunk, at `from`) could not follow the
 * trunk to `to`, or null when it can. Reads only: git's own dry run works on
 * a copy of the index. Untracked files the new commit would overwrite are
 * checked by berth too, because git counts ignored files as expendable and
 * berth never loses a file. The dry run uses a copy of the index, so a lock
 * on the real one (another git at work there) is checked first: the trunk
 * must not move under a checkout git then cannot bring along.
 */
export async function followBlocker(
  path: string,
  from: string,
  to: string,
): Promise<FollowBlocker | null> {
  const status = await readWorktreeStatus(path);
  if (status.trackedChanges > 0) {
    // git lists tracked entries before untracked ones.
    const files = status.paths.slice(0, Math.min(status.trackedChanges, 10));
    return { kind: "tracked", count: status.trackedChanges, files };
  }
  const inTheWay = await untrackedFilesInTheWay(path, from, to);
  if (inTheWay.length > 0) return { kind: "in_the_way", files: inTheWay };
  const index = await indexFileOf(path);
  if (existsSync(`${index}.lock`)) return { kind: "index_locked", lock: `${index}.lock` };
  const attempt = await withIndexCopy(index, async (copy) => {
    await refreshIndex(path, copy);
    return twoTreeUpdate(path, from, to, { dryRun: true, indexFile: copy });
  });
  return attempt.ok ? null : { kind: "git", output: attempt.output };
}

/**
 * accept's check that the main checkout can follow the trunk from `from` to
 * `to`: throws its refusal, or `moved(now)` when the trunk itself moved from
 * `from` meanwhile (a commit made in the main checkout fails the dry run too,
 * and is a move, not a blocker); by default, the plan's "moved while planning".
 */
export async function refuseUnlessFollows(
  main: string,
  trunk: string,
  move: { from: string; to: string },
  id: string,
  moved: (now: string | null) => UserError = (now) => movedWhilePlanning(trunk, move.from, now, id),
  nothingChanged = true,
): Promise<void> {
  const blocker = await followBlocker(main, move.from, move.to);
  if (blocker === null) return;
  const now = await resolveCommit(main, `refs/heads/${trunk}`);
  if (now !== move.from) throw moved(now);
  throw followRefusal(main, trunk, blocker, id, nothingChanged);
}

/** accept's plan found the trunk moved from `from` to `now` while it read: planning again is the fix. */
function movedWhilePlanning(
  trunk: string,
  from: string,
  now: string | null,
  id: string,
): UserError {
  return new UserError(
    "moved",
    `${trunk} moved while accept was planning (from ${shortOid(from)} to ${now ? shortOid(now) : "nothing"}); nothing changed. Accept again plans again.`,
    { next: shellCommand(["berth", "accept", id]) },
  );
}

/** Brings the checkout at `path` from `from` to `to` (its branch ref already points at `to`). */
export async function followTrunk(
  path: string,
  from: string,
  to: string,
): Promise<{ ok: boolean; output: string }> {
  await refreshIndex(path);
  return twoTreeUpdate(path, from, to, { dryRun: false });
}

/**
 * After a landing that stopped before the main checkout followed: "done"
 * when its index already holds `to`, "pending" when it still holds `from`
 * (nothing touched it since), "unknown" otherwise.
 */
export async function followState(
  path: string,
  from: string,
  to: string,
): Promise<"done" | "pending" | "unknown"> {
  if (await indexMatches(path, to)) return "done";
  if (await indexMatches(path, from)) return "pending";
  return "unknown";
}

/** accept's refusal when the main checkout cannot follow the trunk; nothing has changed. */
export function followRefusal(
  main: string,
  trunk: string,
  blocker: FollowBlocker,
  id: string,
  nothingChanged = true,
): UserError {
  const refuse = (message: string, next: CommandLine) =>
    new UserError("precondition_failed", message, { next, nothingChanged });
  switch (blocker.kind) {
    case "tracked":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out with ${blocker.count} uncommitted change(s) to tracked files: ` +
          `${blocker.files.join(", ")}. Landing moves ${trunk} under it, so it must be clean first: commit or stash them.`,
        commandSequence(
          shellCommand(["git", "-C", main, "stash"]),
          shellCommand(["berth", "accept", id]),
        ),
      );
    case "in_the_way":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out, and landing would overwrite untracked or ignored file(s) there: ` +
          `${blocker.files.slice(0, 10).join(", ")}${blocker.files.length > 10 ? ` and ${blocker.files.length - 10} more` : ""}. Move them out of ${main}, then run berth accept ${id}.`,
        // --ignored: a plain status lists no ignored file, so it would show nothing in the way.
        shellCommand(["git", "-C", main, "status", "--ignored", "--short"]),
      );
    case "index_locked":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out, and its index is locked (${blocker.lock}): another git process is at work there. ` +
          `Let it finish (a lock no process holds, left by a crash, can be removed), then run berth accept ${id}.`,
        shellCommand(["berth", "accept", id]),
      );
    case "git":
      return refuse(
        `The main checkout (${main}) has ${trunk} checked out, and git would not bring its files along: ${blocker.output} ` +
          `(look with git status there, then run berth accept ${id})`,

        shellCommand(["git", "-C", main, "status"]),
      );
  }
}

/** Brings the main checkout's files from `old` to `tip`, recording the step; the problem, or null. */
export async function followAndRecord(
  main: string,
  old: string,
  tip: string,
  data: AcceptData,
  steps: StepOutcome[],
): Promise<string | null> {
  const follow = await followTrunk(main, old, tip);
  data.landing.main_checkout_updated = follow.ok;
  steps.push({
    step: "update main checkout",
    target: main,
    outcome: follow.ok ? "done" : "failed",
    ...(follow.ok ? {} : { reason: follow.output }),
  });
  return follow.ok
    ? null
    : `git did not bring the main checkout's files to ${shortOid(tip)}: ${follow.output}`;
}

/** Finish: the main checkout's files follow the trunk the earlier run moved. */
export async function finishFollow(plan: AcceptPlan, steps: StepOutcome[]): Promise<string | null> {
  const { repo, data, record } = plan;
  if (record === null) return null;
  const main = repo.mainPath;
  const [entries, tip] = await Promise.all([
    listWorktrees(main),
    resolveCommit(main, `refs/heads/${record.trunk}`),
  ]);
  if (tip === null || !trunkHolders(entries, record.trunk, repo).mainFollows) {
    steps.push({
      step: "update main checkout",
      target: main,
      outcome: "skipped",
      reason: "changed since the plan: it no longer has the trunk checked out",
    });
    data.landing.main_checkout_updated = null;
    return null;
  }
  if ((await followState(main, record.old, tip)) !== "pending") {
    steps.push({
      step: "update main checkout",
      target: main,
      outcome: "skipped",
      reason: "changed since the plan",
    });
    return null;
  }
  return followAndRecord(main, record.old, tip, data, steps);
}
