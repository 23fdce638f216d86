import { performance } from "node:perf_hooks";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import { readLandingEntries } from "../../io/landing-log.js";
import { fleetLockReleased } from "../../io/lock.js";
import { queueDir } from "../../io/queue-store.js";
import { EXIT_INTERRUPTED, EXIT_NOT_MET, type VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { remoteTrunkRef } from "../fleet/integration.js";
import { readFleet } from "../fleet/reading.js";
import type { FleetSurvey } from "../fleet/survey.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import type { BranchLanding } from "../landing/landings.js";
import { openRepository, type Repository } from "../repo/repository.js";
import {
  type Continuation,
  forgetContinuation,
  loadContinuation,
  newHandle,
  saveContinuation,
} from "./continuation.js";
import { ConditionProbe, freshMemory, type MetBy, type Observation } from "./probe.js";
import { rejectableProbe } from "./rejection.js";
import { type AwaitCondition, type AwaitOptions, parseAwaitRequest } from "./request.js";
import {
  type AwaitTarget,
  refuseGreenWithoutCheckout,
  refuseGreenWithoutWork,
  resolveAwaitTarget,
  type TargetHistory,
} from "./target.js";
import { type Ending, waitFor } from "./wait.js";

/**
 * `berth await` (spec section 5): block until a sibling is green, a branch
 * has landed, or the trunk moved. Agents in a train coordinate through it,
 * so it answers from live state at every evaluation, refuses at call start
 * what can never become true, ends at once when its target is dropped or
 * reclaimed, and never waits past its timeout — leaving a handle that lets
 * the next call continue the same wait (docs/decisions/0012, 0019).
 *
 * The verb only assembles its parts, in order: the request (request.ts), the
 * continuation it resumes, if any (continuation.ts), one survey-only fleet
 * reading (fleet/reading.ts), the target (target.ts), the probe that
 * evaluates the condition and keeps the pins (probe.ts), and the wait
 * (wait.ts): evaluations at call start, on file events in the ref storage,
 * the registrations, the landing log and the berth's receipt folder
 * (fleet/ref-watch.ts), and every 2 s as a backstop.
 */

export interface AwaitData {
  met: boolean;
  condition: AwaitCondition;
  /** The awaited branch; the trunk for --trunk-moved. */
  branch: string | null;
  /** The checkout holding the branch at call start, if any. */
  path: string | null;
  /** The branch tip at the last evaluation (the last tip seen, if the branch was deleted). */
  tip: string | null;
  trunk: string | null;
  trunk_tip: string | null;
  /** The trunk tip when the wait began (its first call, for a resumed wait). */
  trunk_tip_at_start: string | null;
  met_by: MetBy | null;
  /** The branch's commit that landed (met by a landing), else null. */
  landed_commit: string | null;
  /** The landing record that answered (the branch may be gone); null when the trunk's history did. */
  landing: BranchLanding | null;
  /** The tips the branch held while unlanded, oldest first: what "landed" is judged by. */
  pinned: string[];
  timeout_s: number;
  waited_ms: number;
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before the condition held. */
  interrupted: boolean;
  /** Why it can never be met as it is: "rejected" by the landing queue (exit 1); else null. */
  reason: "rejected" | null;
  /** Not met: the handle `berth await --resume <handle>` continues this wait with; else null. */
  resume: string | null;
  /** This call continued an earlier one (`--resume`). */
  resumed: boolean;
}

/** Exit codes other than 0/1/2 (docs/decisions/0012-await.md). */
export { EXIT_INTERRUPTED, EXIT_NOT_MET };

export interface AwaitRun {
  /** Aborting stops the wait promptly (Ctrl-C). */
  signal?: AbortSignal | undefined;
  /** Called once when the verb starts waiting (not when it answers at once). */
  onWaiting?: ((data: AwaitData) => void) | undefined;
  /** A failed re-evaluation (it is retried at the next event or poll). */
  onEvaluationError?: ((error: unknown) => void) | undefined;
}

export async function runAwait(
  ctx: Context,
  options: AwaitOptions,
  run: AwaitRun = {},
): Promise<VerbResult<AwaitData>> {
  const request = parseAwaitRequest(options);
  const startedAt = performance.now();
  const repo = await openRepository(ctx);
  const { commonDir } = repo.location;
  const resumed =
    request.resume === null ? null : await loadContinuation(commonDir, request.resume, ctx.now());
  const condition = resumed?.condition ?? (request.resume === null ? request.condition : null);
  if (condition === null) throw new Error("a resumed wait without a condition");
  const argument = resumed?.argument ?? (request.resume === null ? request.target : null);
  if (options.remote === true) return awaitRemotely(repo, condition, argument, request, run);

  const { survey } = await readFleet(repo, { readStatusOf: () => false, classify: false });
  const { trunk } = survey;
  if (trunk.name === null) {
    throw new UserError(
      "precondition_failed",
      "No trunk found (no origin/HEAD, main or master), so nothing can land or move; set [repository].trunk in berth.toml.",
      { next: shellCommand(["git", "-C", repo.mainPath, "branch", "--list"]) },
    );
  }
  if (resumed !== null && resumed.trunk !== trunk.name) {
    throw new UserError(
      "precondition_failed",
      `The wait ${resumed.handle} followed the trunk ${resumed.trunk}; the trunk is ${trunk.name} now.`,
      { next: shellCommand(["berth", "await", "--trunk-moved"]) },
    );
  }
  const history = async (): Promise<TargetHistory> => ({
    landings: await readLandingEntries(commonDir).catch(() => []),
    gitCwd: commonDir,
  });
  const target =
    condition === "trunk-moved"
      ? null
      : resumed !== null && resumed.branch !== null
        ? await resumedTarget(survey, repo, resumed.branch, condition, await history())
        : await resolveAwaitTarget(
            survey,
            repo.location.cwd,
            argument as string,
            condition,
            await history(),
          );
  // Before any refusal below: the logbook names the awaited branch.
  ctx.journal.aim?.(target?.branch ?? null);

  const memory = resumed?.memory ?? freshMemory(target, trunk.tip, ctx.now());
  const probe = new ConditionProbe({
    commonDir,
    condition,
    trunkName: trunk.name,
    remoteTrunkRef: remoteTrunkRef(repo.config.remote.name, trunk.name),
    target,
    gate: gateDefinitionOf(repo.config.gate),
    memory,
    reresolve:
      target === null || condition === "trunk-moved"
        ? null
        : async () => {
            // What a fresh call for the branch says once the verb changing it let go of
            // the fleet lock (a drop removes the checkout, then the branch); git runs
            // where it always can.
            await fleetLockReleased(commonDir, SETTLE_MS);
            const fresh = (await readFleet(stableRepo(repo), stableReading)).survey;
            const now = await resolveAwaitTarget(
              fresh,
              repo.mainPath,
              target.branch,
              condition,
              await history(),
            );
            if (condition === "green" && now.worktree === null && !now.gone) {
              refuseGreenWithoutCheckout(fresh, now);
            }
            return now;
          },
  });
  const first = await probe.observe();
  if (!first.met && condition === "green" && target !== null) {
    // Nothing of its own to prove, or no checkout to hold a receipt: it can never turn green.
    if (probe.memory().pinned.length === 0) refuseGreenWithoutWork(survey, target, first.tip);
    if (probe.currentTarget()?.worktree == null) refuseGreenWithoutCheckout(survey, target);
  }

  const caller = survey.worktrees.find((w) => w.isCurrent);
  // The row that is waiting is the caller's: status shows `running: await` there.
  ctx.journal.begin({
    branch: caller?.entry.branch ?? null,
    path: caller?.entry.path ?? repo.location.toplevel,
  });

  const dataOf = (
    observation: Observation,
    ending: Ending | "rejected",
    resume: string | null,
  ): AwaitData => ({
    met: ending === "met",
    condition,
    branch: target?.branch ?? trunk.name,
    path: target?.worktree?.entry.path ?? null,
    tip: observation.tip,
    trunk: trunk.name,
    trunk_tip: observation.trunkTip,
    trunk_tip_at_start: memory.trunkTipAtStart,
    met_by: ending === "met" ? observation.metBy : null,
    landed_commit: ending === "met" ? observation.landedCommit : null,
    landing: ending === "met" ? observation.landing : null,
    pinned: probe.memory().pinned,
    timeout_s: request.timeoutS,
    waited_ms: Math.round(performance.now() - startedAt),
    interrupted: ending === "interrupted",
    reason: ending === "rejected" ? "rejected" : null,
    resume,
    resumed: resumed !== null,
  });

  const watched = rejectableProbe(
    probe,
    commonDir,
    condition === "landed" ? (target?.branch ?? null) : null,
  );
  const { observation, ending: reached } = await waitFor(watched, {
    timeoutMs: request.timeoutS * 1000,
    folders: [
      ...probe.folders(),
      ...(condition === "landed" ? [{ path: queueDir(commonDir) }] : []),
    ],
    signal: run.signal,
    onWaiting: (seen) => run.onWaiting?.(dataOf(seen, "timeout", null)),
    onEvaluationError: run.onEvaluationError,
    // A refusal from the target's fresh resolution is the answer, not a glitch to retry.
    isFinal: (error) => error instanceof UserError,
  });

  const rejection = watched.rejected();
  const ending: Ending | "rejected" = rejection !== null ? "rejected" : reached;
  const hints: string[] = [];
  let resume: string | null = null;
  if (ending === "rejected") {
    hints.push(`the landing queue rejected it: ${rejection?.reason ?? "rejected"}`);
  } else if (ending === "met") {
    if (resumed !== null)
      await forgetContinuation(commonDir, resumed.handle).catch(() => undefined);
  } else {
    const continuation: Continuation = {
      handle: resumed?.handle ?? newHandle(),
      condition,
      argument,
      branch: target?.branch ?? null,
      trunk: trunk.name,
      memory: probe.memory(),
    };
    try {
      await saveContinuation(commonDir, continuation, ctx.now());
      resume = continuation.handle;
    } catch (error) {
      hints.push(`no resume handle: it could not be written (${(error as Error).message})`);
    }
  }
  const data = dataOf(observation, ending, resume);
  const exitCode =
    ending === "met"
      ? undefined
      : ending === "rejected"
        ? 1
        : ending === "interrupted"
          ? EXIT_INTERRUPTED
          : EXIT_NOT_MET;
  return {
    // A rejection is an answer, but exit 1 is a refusal's (spec section 4): error.code says which.
    ok: ending !== "rejected",
    verb: "await",
    data,
    hints: [...hintsFor(data, caller !== undefined && !caller.isMain), ...hints],
    ...(exitCode === undefined ? {} : { exitCode }),
    ...(ending === "interrupted" ? { interrupted: true } : {}),
    ...(ending === "rejected"
      ? {
          error: {
            code: "rejected" as const,
            message: `the landing queue rejected ${data.branch ?? "it"}: ${rejection?.reason ?? "rejected"}; it will not land as it is.`,
            next: shellCommand(["berth", "queue"]),
          },
        }
      : {}),
  };
}

/** `--remote` (remote-await.ts): a branch on the [remote], --green or --landed only, no --resume. */
async function awaitRemotely(
  repo: Repository,
  condition: AwaitCondition,
  argument: string | null,
  request: { resume: string | null; timeoutS: number },
  run: AwaitRun,
): Promise<VerbResult<AwaitData>> {
  if (condition === "trunk-moved" || argument === null || request.resume !== null) {
    throw new UserError("usage", "--remote goes with --green <branch> or --landed <branch>.", {
      next: shellCommand(["berth", "await", "--help"]),
    });
  }
  const { survey } = await readFleet(repo, { readStatusOf: () => false, classify: false });
  const trunk = survey.trunk.name;
  if (trunk === null) {
    throw new UserError(
      "precondition_failed",
      "No trunk found; set [repository].trunk in berth.toml.",
      {
        next: shellCommand(["git", "branch", "--list"]),
      },
    );
  }
  const { awaitOnRemote, remoteBranchOf } = await import("./remote-await.js");
  const branch = remoteBranchOf(repo, survey, argument);
  return awaitOnRemote(repo, condition, branch, trunk, request.timeoutS, run);
}

/** How long a wait whose target changed waits for the verb changing it to finish. */
const SETTLE_MS = 2000;

/** A survey-only reading (no status, activity or receipts). */
const stableReading = { readStatusOf: () => false, classify: false } as const;

/** The repository with git run in its common dir: the caller's checkout may be gone. */
function stableRepo(repo: Repository): Repository {
  return { ...repo, location: { ...repo.location, cwd: repo.location.commonDir } };
}

/**
 * A resumed wait follows the branch it followed: resolved as a fresh call
 * would, unless the branch is gone — then the pins it carries answer first,
 * and the probe asks the fresh resolution only if they do not.
 */
async function resumedTarget(
  survey: FleetSurvey,
  repo: Repository,
  branch: string,
  condition: Exclude<AwaitCondition, "trunk-moved">,
  history: TargetHistory,
): Promise<AwaitTarget> {
  const heldByDetached = survey.worktrees.some(
    (w) => w.entry.detached && w.marker?.branch === branch,
  );
  if (survey.branches.has(branch) || heldByDetached) {
    return resolveAwaitTarget(survey, repo.mainPath, branch, condition, history);
  }
  return { branch, tip: null, worktree: null, gone: false };
}

/** `inBerth`: the caller runs in a berth, where `berth update` can merge the new trunk. */
function hintsFor(data: AwaitData, inBerth: boolean): string[] {
  // A rejection is its own answer (its hint says why); there is nothing to wait on.
  if (data.reason === "rejected") return [];
  if (!data.met) {
    const again =
      data.resume === null ? null : shellCommand(["berth", "await", "--resume", data.resume]);
    if (data.interrupted) return again === null ? [] : [`${again} continues this wait`];
    const how = again === null ? "run berth await again" : `${again} continues the same wait`;
    return [
      data.timeout_s === 0
        ? `checked once (--timeout 0); ${how} (give --timeout in seconds to wait)`
        : `not met within ${data.timeout_s}s; ${how}`,
    ];
  }
  if (data.condition === "green" && data.met_by === "receipt" && data.tip !== null) {
    return [
      `build on it: berth start --from ${data.tip} (a new stage), or berth update --from ${data.tip} (merge it into this berth)`,
    ];
  }
  return inBerth ? [`berth update merges the new ${data.trunk ?? "trunk"} into this berth`] : [];
}
