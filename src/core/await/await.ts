import { performance } from "node:perf_hooks";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import type { VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { readFleet } from "../fleet/reading.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import { openRepository } from "../repo/repository.js";
import { ConditionProbe, type MetBy, type Observation } from "./probe.js";
import { type AwaitCondition, type AwaitOptions, parseAwaitRequest } from "./request.js";
import { refuseGreenWithoutCheckout, resolveAwaitTarget } from "./target.js";
import { type Ending, waitFor } from "./wait.js";

/**
 * `berth await` (spec section 5): block until a sibling is green, a branch
 * has landed, or the trunk moved. Agents in a train coordinate through it,
 * so it answers from live state at every evaluation, refuses at call start
 * what can never become true, and never waits past its timeout.
 *
 * The verb only assembles its parts, in order: the request (request.ts), one
 * survey-only fleet reading (fleet/reading.ts), the target (target.ts), the
 * probe that evaluates the condition (probe.ts), and the wait (wait.ts):
 * evaluations at call start, on file events in the ref storage and the
 * berth's receipt folder (fleet/ref-watch.ts), and every 2 s as a backstop.
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
  trunk_tip_at_start: string | null;
  met_by: MetBy | null;
  timeout_s: number;
  waited_ms: number;
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before the condition held. */
  interrupted: boolean;
}

/** Exit codes other than 0/1/2 (docs/decisions/0012-await.md). */
export const EXIT_NOT_MET = 124;
export const EXIT_INTERRUPTED = 130;

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
  const { survey } = await readFleet(repo, { readStatusOf: () => false, classify: false });
  const { trunk } = survey;
  if (trunk.name === null) {
    throw new UserError(
      "precondition_failed",
      "No trunk found (no origin/HEAD, main or master), so nothing can land or move; set [repository].trunk in berth.toml.",
      { next: shellCommand(["git", "-C", repo.mainPath, "branch", "--list"]) },
    );
  }
  const target =
    request.target === null || request.condition === "trunk-moved"
      ? null
      : resolveAwaitTarget(survey, repo.location.cwd, request.target, request.condition);

  const probe = new ConditionProbe(
    repo.location.cwd,
    repo.location.commonDir,
    request.condition,
    trunk.name,
    trunk.tip,
    target,
    gateDefinitionOf(repo.config.gate),
  );
  if (request.condition === "green" && target !== null && target.worktree === null) {
    // No checkout, no receipt: only a landing that already happened can answer now.
    const now = await probe.observe();
    if (!now.met) refuseGreenWithoutCheckout(survey, target);
  }

  const caller = survey.worktrees.find((w) => w.isCurrent);
  // The row that is waiting is the caller's: status shows `running: await` there.
  ctx.journal.begin({
    branch: caller?.entry.branch ?? null,
    path: caller?.entry.path ?? repo.location.toplevel,
  });

  const dataOf = (observation: Observation, ending: Ending): AwaitData => ({
    met: ending === "met",
    condition: request.condition,
    branch: target?.branch ?? trunk.name,
    path: target?.worktree?.entry.path ?? null,
    tip: observation.tip,
    trunk: trunk.name,
    trunk_tip: observation.trunkTip,
    trunk_tip_at_start: trunk.tip,
    met_by: ending === "met" ? observation.metBy : null,
    timeout_s: request.timeoutS,
    waited_ms: Math.round(performance.now() - startedAt),
    interrupted: ending === "interrupted",
  });

  const { observation, ending } = await waitFor(probe, {
    timeoutMs: request.timeoutS * 1000,
    folders: probe.folders(),
    signal: run.signal,
    onWaiting: (first) => run.onWaiting?.(dataOf(first, "timeout")),
    onEvaluationError: run.onEvaluationError,
  });
  const data = dataOf(observation, ending);
  const exitCode =
    ending === "met" ? undefined : ending === "interrupted" ? EXIT_INTERRUPTED : EXIT_NOT_MET;
  return {
    ok: true,
    verb: "await",
    data,
    hints: hintsFor(data),
    ...(exitCode === undefined ? {} : { exitCode }),
  };
}

function hintsFor(data: AwaitData): string[] {
  if (data.interrupted) return [];
  if (!data.met) {
    return [
      data.timeout_s === 0
        ? "checked once (--timeout 0); give a timeout in seconds to wait"
        : `not met within ${data.timeout_s}s; run berth await again to keep waiting`,
    ];
  }
  if (data.condition === "green" && data.tip !== null) {
    return [
      `build on it: berth start --from ${data.tip} (a new stage), or berth update --from ${data.tip} (merge it into this berth)`,
    ];
  }
  return [`berth update merges the new ${data.trunk ?? "trunk"} into this berth`];
}
