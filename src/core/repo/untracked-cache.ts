import { readGitConfig, setGitConfig, testUntrackedCache } from "../../git/config.js";
import { readIndexHeader } from "../../io/git-index.js";
import type { PlanStep, StepOutcome } from "../../result.js";
import { thousands } from "../../text.js";
import type { Repository } from "./repository.js";

/**
 * `core.untrackedCache` lets every `git status` skip re-reading folders that
 * have not changed since the index last recorded them, which is most of a
 * status in a large checkout. berth offers it from `berth init` where it would
 * help, and sets it only when asked (`berth init --untracked-cache`, after
 * git's own filesystem test): it changes how git behaves for the whole
 * repository, so it is the user's call (docs/decisions/0032).
 */

/** Tracked files from which the untracked cache is worth offering. */
export const UNTRACKED_CACHE_MIN_FILES = 1000;

const KEYS = ["core.untrackedCache", "feature.manyFiles"] as const;

export interface UntrackedCachePlan {
  plan: PlanStep[];
  hints: string[];
  /** Runs the plan: git's test, then the setting (nothing when not asked). */
  apply(): Promise<StepOutcome[]>;
}

export async function planUntrackedCache(
  repo: Repository,
  asked: boolean,
): Promise<UntrackedCachePlan> {
  const cwd = repo.mainPath;
  const configured = await readGitConfig(cwd, KEYS);
  // Any value counts as decided: "false" is someone having said no.
  const decided = KEYS.some((key) => configured.has(key.toLowerCase()));
  const files = readIndexHeader(`${repo.location.commonDir}/index`)?.entries ?? 0;
  if (!asked) {
    const helps = !decided && files >= UNTRACKED_CACHE_MIN_FILES;
    return {
      plan: [],
      hints: helps
        ? [
            `this repository tracks ${thousands(files)} files: git's untracked cache lets every status ` +
              "(yours, berth's, your agents') skip folders that did not change; " +
              "git config core.untrackedCache true sets it (or berth init --untracked-cache, which tests the filesystem first)",
          ]
        : [],
      apply: async () => [],
    };
  }
  const target = "core.untrackedCache";
  if (decided) {
    const current =
      configured.get("core.untrackedcache") ??
      `feature.manyFiles=${configured.get("feature.manyfiles")}`;
    return {
      plan: [],
      hints: [`${target} is already configured (${current}); berth leaves it as it is`],
      apply: async () => [],
    };
  }
  return {
    plan: [
      {
        step: "test the untracked cache",
        target: cwd,
        detail: "git update-index --test-untracked-cache",
      },
      { step: "set git config", target, detail: "true" },
    ],
    hints: [],
    apply: async () => {
      const failed = await testUntrackedCache(cwd);
      if (failed !== null) {
        return [
          { step: "test the untracked cache", target: cwd, outcome: "failed", reason: failed },
          {
            step: "set git config",
            target,
            outcome: "skipped",
            reason: "the filesystem failed git's test",
          },
        ];
      }
      await setGitConfig(cwd, target, "true");
      return [
        { step: "test the untracked cache", target: cwd, outcome: "done" },
        { step: "set git config", target, outcome: "done" },
      ];
    },
  };
}
