import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestRepo } from "./repo.js";

/**
 * Leaves a `git am` stopped half-way in the checkout at `path`, its tree
 * clean and HEAD on its branch: the patch is the checkout's own last commit,
 * which applies to nothing there. What a person looks like mid-operation
 * while status and the logbook see nothing running.
 */
export function stopAnAm(repo: TestRepo, path: string): void {
  const patch = join(repo.dir.path, `again-${Date.now()}.patch`);
  writeFileSync(
    patch,
    execFileSync("git", ["format-patch", "-1", "HEAD", "--stdout"], { cwd: path, env: repo.env }),
  );
  const am = spawnSync("git", ["am", patch], { cwd: path, env: repo.env });
  const gitDir = repo.git(["rev-parse", "--absolute-git-dir"], path);
  if (am.status === 0 || !existsSync(join(gitDir, "rebase-apply", "applying"))) {
    throw new Error(`git am did not stop in ${path}: ${am.stderr}`);
  }
}
