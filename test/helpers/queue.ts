import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runGate } from "../../src/core/landing/gate.js";
import { startBerth } from "../../src/core/lifecycle/start.js";
import { readLandingEntries } from "../../src/io/landing-log.js";
import { makeRepo, type TestRepo, testContext } from "./repo.js";

/** Fleets of real berths for the landing-queue tests. */

export interface Berth {
  id: string;
  branch: string;
  path: string;
}

export function queueFixture(config: string) {
  const repo = makeRepo({ config });
  const marker = join(repo.dir.path, "marker");
  return { repo, marker, env: { ...repo.env, MARKER: marker } };
}

/** A berth with one commit writing `files` (name -> content). */
export async function berthWith(
  repo: TestRepo,
  env: NodeJS.ProcessEnv,
  name: string,
  files: Record<string, string>,
): Promise<Berth> {
  const { ctx } = testContext(repo.path, env);
  const result = await startBerth(ctx, { name });
  const data = result.data;
  if (!result.ok || !data) throw new Error(`start ${name} failed: ${JSON.stringify(result.error)}`);
  for (const [file, content] of Object.entries(files)) repo.write(file, content, data.path);
  repo.commit(`${name}: work`, data.path);
  return { id: data.id, branch: data.branch, path: data.path };
}

export async function gateGreen(env: NodeJS.ProcessEnv, path: string): Promise<void> {
  const { ctx } = testContext(path, env);
  const result = await runGate(ctx, { parallelism: 1 });
  if (!result.ok) throw new Error(`gate failed: ${JSON.stringify(result.error)}`);
}

export function tip(repo: TestRepo, ref: string): string {
  return repo.git(["rev-parse", ref]);
}

export function isAncestor(repo: TestRepo, a: string, b: string): boolean {
  try {
    repo.git(["merge-base", "--is-ancestor", a, b]);
    return true;
  } catch {
    return false;
  }
}

/** Every value refs/heads/main held, oldest first (its reflog). */
export function trunkHistory(repo: TestRepo): string[] {
  return repo.git(["reflog", "show", "--format=%H", "refs/heads/main"]).split("\n").reverse();
}

/** Each move of the trunk was a fast-forward: every old value is an ancestor of the next. */
export function onlyFastForwards(repo: TestRepo): boolean {
  const history = trunkHistory(repo);
  return history.every((oid, i) => i === 0 || isAncestor(repo, history[i - 1] ?? oid, oid));
}

/** The commits the recording check ran on ("check <oid>" lines in $MARKER). */
export function checkedCommits(marker: string): string[] {
  if (!existsSync(marker)) return [];
  return readFileSync(marker, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("check "))
    .map((l) => l.slice(6));
}

export async function landedBranches(repo: TestRepo): Promise<string[]> {
  const entries = await readLandingEntries(join(repo.path, ".git"));
  return entries.map((e) => e.branch);
}

/** A check that records the commit it ran on, then runs `extra` (which may fail). */
export function recordingGate(extra = "true"): string {
  return `[gate]
checks = [{ name = "record", run = 'echo "check $(git rev-parse HEAD)" >> "$MARKER" && ${extra}' }]
`;
}
