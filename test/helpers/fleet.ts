import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunResult, runBerth, type TestRepo } from "./repo.js";

/** Shared checks for lifecycle tests: what git and the ledger hold right now. */

export function commonDirOf(repo: TestRepo): string {
  return join(repo.path, ".git");
}

/** Every ledger file, as `<admin-key>/<resource>.json`. */
export function ledgerFiles(repo: TestRepo): string[] {
  const root = join(commonDirOf(repo), "berth", "ledger");
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((key) =>
    readdirSync(join(root, key))
      .filter((name) => name.endsWith(".json"))
      .map((name) => `${key}/${name}`),
  );
}

export function worktreePaths(repo: TestRepo): string[] {
  return repo
    .git(["worktree", "list", "--porcelain"])
    .split("\n")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length));
}

export function berthBranches(repo: TestRepo): string[] {
  const out = repo.git(["for-each-ref", "--format=%(refname:short)", "refs/heads/berth"]);
  return out === "" ? [] : out.split("\n");
}

export function markerLines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter(Boolean);
}

/** A snapshot of everything a refused verb must leave alone. */
export function fleetSnapshot(repo: TestRepo): string {
  return JSON.stringify({
    worktrees: repo.git(["worktree", "list", "--porcelain"]),
    refs: repo.git(["for-each-ref", "--format=%(refname) %(objectname)"]),
    ledger: ledgerFiles(repo)
      .sort()
      .map((f) => readFileSync(join(commonDirOf(repo), "berth", "ledger", f), "utf8")),
  });
}

/** `berth start <name> --json` from the main checkout; fails the test unless it worked. */
export async function startBerth(
  repo: TestRepo,
  name: string,
  env: NodeJS.ProcessEnv = repo.env,
): Promise<{ id: string; path: string; branch: string; port: number; run: RunResult }> {
  const run = await runBerth(["start", name, "--json"], { cwd: repo.path, env });
  if (run.code !== 0)
    throw new Error(`berth start failed (${run.code}): ${run.stdout}${run.stderr}`);
  return { ...run.json.data, run };
}
