import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "../context.js";
import { UserError } from "../errors.js";
import { runGit } from "../git/run.js";
import type { VerbResult } from "../result.js";
import { readStatus, type StatusData } from "./fleet/status.js";
import { applyAccept, planAccept } from "./landing/accept.js";
import { runGate } from "./landing/gate.js";
import { applyPrune, type PruneData } from "./lifecycle/prune-apply.js";
import { planPrune } from "./lifecycle/prune-plan.js";
import { type StartData, startBerth } from "./lifecycle/start.js";

/**
 * `berth tour`: a newcomer's demonstration on a throwaway repository. It runs
 * the real verbs (the same core functions the CLI calls), narrating each
 * step, and removes the repository at the end. Nothing outside its temporary
 * folder is touched.
 */

export type TourChapter =
  | { kind: "text"; title: string; text: string }
  | { kind: "status"; title: string; text: string; status: StatusData }
  | { kind: "prune"; title: string; text: string; prune: PruneData; dryRun: boolean };

export interface TourData {
  folder: string;
  chapters: TourChapter[];
  removed: boolean;
}

const TOUR_CONFIG = `# The tour's own berth.toml: one check, one resource that leaves a trace.
[gate]
checks = [{ name = "readme", run = "test -f README.md" }]

[worktree.resources.scratch]
create = 'echo "created for $BERTH_ID" > "$BERTH_REPO/../scratch-$BERTH_ID"'
destroy = 'rm -f "$BERTH_REPO/../scratch-$BERTH_ID"'
`;

export async function runTour(ctx: Context, keep = false): Promise<VerbResult<TourData>> {
  const folder = await mkdtemp(join(tmpdir(), "berth-tour-"));
  const repoPath = join(folder, "shipyard");
  const data: TourData = { folder, chapters: [], removed: false };
  const say = (title: string, text: string) => data.chapters.push({ kind: "text", title, text });
  // The tour's own commits: a fixed identity, no signing or hooks from the user's config.
  const git = (args: string[], cwd: string) =>
    runGit(["-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", ...args], {
      cwd,
      env: {
        GIT_AUTHOR_NAME: "berth tour",
        GIT_AUTHOR_EMAIL: "tour@berth.invalid",
        GIT_COMMITTER_NAME: "berth tour",
        GIT_COMMITTER_EMAIL: "tour@berth.invalid",
      },
    });
  const at = (cwd: string): Context => ({ ...ctx, cwd, stdinIsTTY: false });
  const commitIn = async (cwd: string, file: string, message: string) => {
    await writeFile(join(cwd, file), `${message}\n`);
    await git(["add", file], cwd);
    await git(["commit", "-q", "-m", message], cwd);
  };

  try {
    await runGit(["init", "-q", "-b", "main", repoPath], { cwd: folder });
    await writeFile(join(repoPath, "README.md"), "# shipyard\n");
    await writeFile(join(repoPath, "berth.toml"), TOUR_CONFIG);
    await git(["add", "README.md", "berth.toml"], repoPath);
    await git(["commit", "-q", "-m", "initial commit"], repoPath);
    say(
      "A throwaway repository",
      `Made ${repoPath} with one commit and a berth.toml declaring one gate check and one resource.`,
    );

    const stages: StartData[] = [];
    for (const [name, work] of [
      ["parser", "stage one: the parser"],
      ["checker", "stage two: the checker, on top of the parser"],
      ["emitter", "stage three: the emitter, on top of both"],
    ] as const) {
      const from = stages.at(-1)?.branch;
      const started = await startBerth(at(repoPath), { name, from });
      const stage = started.data as StartData;
      await commitIn(stage.path, `${name}.txt`, work);
      const gate = await runGate(at(stage.path));
      if (!gate.ok) throw new UserError("internal", `the tour's gate failed in ${stage.id}`);
      stages.push(stage);
      say(
        `berth start ${name}${from ? ` --from ${from}` : ""}`,
        `Started ${stage.id} at ${stage.path} (port ${stage.port}), committed "${work}", and gated it: green, receipt written.`,
      );
    }

    const status = await readStatus(at(repoPath), {});
    data.chapters.push({
      kind: "status",
      title: "berth status",
      text: "The fleet: the first two stages are contained — every commit they hold travels inside the next stage.",
      status: status.data as StatusData,
    });

    const plan = await planPrune(at(repoPath));
    data.chapters.push({
      kind: "prune",
      title: "berth worktree prune --dry-run",
      text: "Prune always shows the contained offer with its evidence, and its default apply skips it.",
      prune: { sections: plan.sections, contained_included: false, applied: [], skipped: [] },
      dryRun: true,
    });

    const reclaimed = await applyPrune(at(repoPath), plan, { contained: true });
    data.chapters.push({
      kind: "prune",
      title: "berth worktree prune --contained --yes",
      text:
        "Reclaiming needs --contained and a confirmation (the tour answers yes for its own throwaway repository). " +
        "The checkouts and their receipts go; the branch refs stay, and berth start --from <branch> would bring a stage back.",
      prune: reclaimed.data as PruneData,
      dryRun: false,
    });
    const after = await readStatus(at(repoPath), {});
    data.chapters.push({
      kind: "status",
      title: "berth status",
      text: "The kept refs are a calm fact beside their live container.",
      status: after.data as StatusData,
    });

    const last = stages.at(-1) as StartData;
    const acceptPlan = await planAccept(at(last.path), {});
    const landed = await applyAccept(at(last.path), acceptPlan);
    if (!landed.ok) {
      throw new UserError(
        "internal",
        `the tour could not land ${last.id}: ${landed.error?.message}`,
      );
    }
    say(
      `berth accept (in ${last.id})`,
      "The last stage's receipt is honored, so no check reruns: the trunk fast-forwarded to the commit it proved, " +
        "carrying all three stages, and the berth was torn down.",
    );
    const cleanupPlan = await planPrune(at(repoPath));
    const cleaned = await applyPrune(at(repoPath), cleanupPlan, { contained: false });
    data.chapters.push({
      kind: "prune",
      title: "berth worktree prune --yes",
      text: "The train has landed, so the kept refs are ordinary landed branches now: the landed-class prune deletes them.",
      prune: cleaned.data as PruneData,
      dryRun: false,
    });
  } finally {
    if (!keep) {
      await rm(folder, { recursive: true, force: true });
      data.removed = true;
    }
  }
  say("Done", data.removed ? `Removed ${folder}.` : `Kept ${folder} for you to look around.`);
  return { ok: true, verb: "tour", data, hints: [] };
}
