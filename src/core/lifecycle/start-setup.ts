import type { Context } from "../../context.js";
import type { StepOutcome } from "../../result.js";
import type { BerthFacts } from "../berth/env.js";
import { writeEnvFiles } from "../berth/env-files.js";
import { describeFailure, ensureResources, type ResourceOwner } from "../berth/resources.js";
import { describeSetupFailure, runSetupEnsure, runSetupSteps } from "../berth/setup-steps.js";
import type { Repository } from "../repo/repository.js";

/**
 * The part of `berth start` that runs outside the fleet lock, in the new
 * checkout only (docs/decisions/0007): env files, setup steps, then the
 * convergent setup. It returns the first failure; start undoes the run.
 */

export interface StepFailure {
  step: string;
  detail: string;
}

/** What the setup needs of a start run whose checkout and marker exist. */
export interface SetupRun {
  repo: Repository;
  ctx: Context;
  facts: BerthFacts;
  steps: StepOutcome[];
  owner: ResourceOwner;
}

/** Env files, setup steps, then convergent setup (resource ensure, setup ensure); the first failure. */
export async function runStartSetup(run: SetupRun, hints: string[]): Promise<StepFailure | null> {
  const { repo, ctx, facts, steps } = run;
  const env = await writeEnvFiles(repo, facts);
  for (const file of env.written)
    steps.push({ step: "write env file", target: file, outcome: "done" });
  for (const { file, reason } of env.skipped) {
    steps.push({ step: "write env file", target: file, outcome: "skipped", reason });
    hints.push(`env file ${file} left alone: ${reason}`);
  }
  if (env.missing.length > 0) {
    hints.push(`inherit_env: no env file of the main checkout defines ${env.missing.join(", ")}`);
  }

  const setupSteps = await runSetupSteps(repo, ctx, facts);
  for (const command of setupSteps.ran) {
    steps.push({ step: "run setup step", target: command, outcome: "done" });
  }
  if (setupSteps.failure) {
    const detail = describeSetupFailure(setupSteps.failure);
    steps.push({
      step: "run setup step",
      target: setupSteps.failure.command,
      outcome: "failed",
      reason: detail,
    });
    return { step: setupSteps.failure.step, detail };
  }

  const ensured = await ensureResources(repo, ctx, run.owner, { createMissing: false });
  for (const name of ensured.ensured) {
    steps.push({ step: "ensure resource", target: name, outcome: "done" });
  }
  hints.push(...ensured.warnings);
  if (ensured.failure) {
    const detail = describeFailure(ensured.failure);
    steps.push({
      step: "ensure resource",
      target: ensured.failure.resource,
      outcome: "failed",
      reason: detail,
    });
    return { step: `ensure resource ${ensured.failure.resource}`, detail };
  }

  const setupEnsure = await runSetupEnsure(repo, ctx, facts);
  for (const command of setupEnsure.ran) {
    steps.push({ step: "run setup ensure", target: command, outcome: "done" });
  }
  if (setupEnsure.failure) {
    const detail = describeSetupFailure(setupEnsure.failure);
    steps.push({
      step: "run setup ensure",
      target: setupEnsure.failure.command,
      outcome: "failed",
      reason: detail,
    });
    return { step: setupEnsure.failure.step, detail };
  }
  return null;
}
