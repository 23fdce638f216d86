import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * Whether the repository has a commit-graph file for git's history walks to
 * use: one file, or a chain of them (`git commit-graph write --split`).
 */
export function hasCommitGraphFile(commonDir: string): boolean {
  const info = join(commonDir, "objects", "info");
  return (
    existsSync(join(info, "commit-graph")) ||
    existsSync(join(info, "commit-graphs", "commit-graph-chain"))
  );
}
