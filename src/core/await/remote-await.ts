import { UserError } from "../../errors.js";
import { isAncestor } from "../../git/ancestry.js";
import { fetchRefspecs, lsRemote } from "../../git/remote.js";
import { readTreesOf } from "../../git/tree.js";
import { parseLandingLine } from "../../io/landing-log.js";
import { EXIT_NOT_MET, type VerbResult } from "../../result.js";
import { shellCommand } from "../../text.js";
import { isBerthId } from "../berth/identity.js";
import { isTipIntegrated, remoteTrunkRef } from "../fleet/integration.js";
import type { FleetSurvey } from "../fleet/survey.js";
import { gateDefinitionOf } from "../landing/gate-definition.js";
import { type BranchLanding, LANDING_NOTES_REF, landingsOf } from "../landing/landings.js";
import {
  grepLandingNotes,
  notesHonor,
  RECEIPT_NOTES,
  readReceiptNotes,
  remoteNotesRef,
} from "../landing/receipt-notes.js";
import { resolveTarget } from "../repo/berth-target.js";
import { remoteFailed } from "../repo/remote.js";
import type { Repository } from "../repo/repository.js";
import type { AwaitData, AwaitRun } from "./await.js";
import type { AwaitCondition } from "./request.js";

/**
 * `berth await --green|--landed <branch> --remote` (spec section 13,
 * docs/decisions/0054): the answer from the `[remote]`, for a branch another
 * machine works on. Each look, at least POLL_MIN_MS apart and backing off to
 * POLL_MAX_MS:
 *   1. one `ls-remote` for the branch, the trunk and both notes refs, then one
 *      fetch of those that exist (into refs/remotes/<remote>/... and
 *      refs/notes/remotes/<remote>/...);
 *   2. landed: a landing note names the branch (it may be deleted), or the
 *      branch's tip — pinned once seen off the trunk — is reachable from the
 *      remote trunk or integrated into it (fleet/integration.ts);
 *   3. green: also met by 2, else a receipt note on exactly the tip, for its
 *      tree and this gate (receipt-notes.ts `notesHonor`).
 */

export const POLL_MIN_MS = 5000;
export const POLL_MAX_MS = 30_000;

interface Look {
  met: AwaitData["met_by"];
  tip: string | null;
  trunkTip: string | null;
  landedCommit: string | null;
  landing: BranchLanding | null;
}

/**
 * The branch `--remote` asks about: the one a checkout here holds (named by
 * id, path or branch), a local branch, else the argument as given; a berth id
 * berth knows nothing of here means `<prefix><id>`, the branch `start` made it
 * (docs/decisions/0079; `refs/heads/<name>` is always the branch as given).
 */
export function remoteBranchOf(repo: Repository, survey: FleetSurvey, argument: string): string {
  const name = argument.replace(/^refs\/heads\//, "");
  if (name !== argument) return name;
  try {
    const held = resolveTarget(survey, repo.location.cwd, argument, "await");
    if (!held.isMain && held.entry.branch !== null) return held.entry.branch;
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
  }
  const prefix = repo.config.repository.branch_prefix;
  const asGiven = survey.branches.has(name) || name.startsWith(prefix);
  return asGiven || !isBerthId(name) ? name : `${prefix}${name}`;
}

export async function awaitOnRemote(
  repo: Repository,
  condition: Exclude<AwaitCondition, "trunk-moved">,
  branchArg: string,
  trunk: string,
  timeoutS: number,
  run: AwaitRun,
): Promise<VerbResult<AwaitData>> {
  const remote = repo.config.remote.name;
  if (remote === null) {
    throw new UserError("precondition_failed", "--remote needs [remote].name in berth.toml.", {
      next: shellCommand(["berth", "await", `--${condition}`, branchArg]),
    });
  }
  const branch = branchArg.replace(/^refs\/heads\//, "");
  const started = performance.now();
  const cwd = repo.location.cwd;
  const gate = gateDefinitionOf(repo.config.gate);
  const pinned: string[] = [];
  const names = {
    branch: `refs/heads/${branch}`,
    trunk: `refs/heads/${trunk}`,
    receipts: `refs/notes/${RECEIPT_NOTES}`,
    landings: `refs/notes/${LANDING_NOTES_REF}`,
  };
  const local = {
    branch: `refs/remotes/${remote}/${branch}`,
    trunk: remoteTrunkRef(remote, trunk) as string,
    receipts: remoteNotesRef(remote, RECEIPT_NOTES),
    landings: remoteNotesRef(remote, LANDING_NOTES_REF),
  };

  const look = async (): Promise<Look> => {
    const listed = await lsRemote(cwd, remote, Object.values(names));
    if (listed.fate === "unreachable")
      throw remoteFailed(remote, listed.message, "nothing was awaited");
    const keys = (Object.keys(names) as (keyof typeof names)[]).filter((k) =>
      listed.tips.has(names[k]),
    );
    if (keys.length > 0) {
      const fetched = await fetchRefspecs(
        cwd,
        remote,
        keys.map((k) => `+${names[k]}:${local[k]}`),
      );
      if (fetched.fate !== "fetched")
        throw remoteFailed(remote, fetched.message, "nothing was awaited");
    }
    const tip = listed.tips.get(names.branch) ?? null;
    const trunkTip = listed.tips.get(names.trunk) ?? null;
    const none = { tip, trunkTip, landedCommit: null, landing: null };
    if (listed.tips.has(names.landings)) {
      const lines = await grepLandingNotes(cwd, local.landings, branch);
      const entries = lines.flatMap((l) => parseLandingLine(l) ?? []);
      const landing = landingsOf(entries, branch).find(
        (l) => tip === null || l.tip === tip || pinned.includes(l.tip),
      );
      if (landing !== undefined)
        return { ...none, met: "landed", landedCommit: landing.tip, landing };
    }
    if (tip === null || trunkTip === null) return { ...none, met: null };
    if (!pinned.includes(tip) && !(await isAncestor(cwd, tip, trunkTip))) pinned.push(tip);
    for (const pin of [...pinned].reverse()) {
      if (await isAncestor(cwd, pin, trunkTip))
        return { ...none, met: "landed", landedCommit: pin };
      if (await isTipIntegrated(cwd, trunkTip, pin)) {
        return { ...none, met: "landed", landedCommit: pin };
      }
    }
    if (condition === "green" && pinned.includes(tip) && listed.tips.has(names.receipts)) {
      const tree = (await readTreesOf(cwd, [tip])).get(tip) ?? null;
      const notes = await readReceiptNotes(cwd, local.receipts, tip);
      const declared = repo.config.gate.checks.length;
      if (tree !== null && notesHonor(notes, tip, tree, gate.digest, declared)) {
        return { ...none, met: "receipt" };
      }
    }
    return { ...none, met: null };
  };

  const deadline = started + timeoutS * 1000;
  let delay = POLL_MIN_MS;
  let seen = await look();
  let announced = false;
  const aborted = () => run.signal?.aborted === true;
  while (seen.met === null && performance.now() + delay <= deadline && !aborted()) {
    if (!announced) run.onWaiting?.(dataOf(seen, false));
    announced = true;
    await sleep(delay, run.signal);
    if (aborted()) break;
    seen = await look();
    delay = Math.min(POLL_MAX_MS, Math.round(delay * 1.5));
  }

  function dataOf(l: Look, met: boolean): AwaitData {
    return {
      met,
      condition,
      branch,
      path: null,
      tip: l.tip,
      trunk,
      trunk_tip: l.trunkTip,
      trunk_tip_at_start: null,
      met_by: met ? l.met : null,
      landed_commit: met ? l.landedCommit : null,
      landing: met ? l.landing : null,
      pinned: [...pinned],
      timeout_s: timeoutS,
      waited_ms: Math.round(performance.now() - started),
      interrupted: run.signal?.aborted === true && l.met === null,
      resume: null,
      resumed: false,
      // The landing queue is this machine's; another machine's rejection is not seen here.
      reason: null,
    };
  }
  const met = seen.met !== null;
  const data = dataOf(seen, met);
  return {
    ok: true,
    verb: "await",
    data,
    hints: met
      ? [`answered from ${remote}: its branch, trunk and notes, fetched just now`]
      : [
          ...(data.tip === null
            ? [
                `${remote} has no branch ${branch}: push it from the machine that works on it (${shellCommand(["git", "push", remote, branch])})`,
              ]
            : []),
          `not met on ${remote} within ${timeoutS}s; run it again to keep waiting`,
        ],
    ...(met ? {} : { exitCode: EXIT_NOT_MET }),
  };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
