import { runGit } from "./run.js";

/**
 * Ignored files in a checkout, untracked directories collapsed to one
 * `dir/` entry (`git ls-files -o -i --exclude-standard --directory`).
 * Paths are relative to the checkout.
 */
export async function listIgnoredPaths(checkout: string): Promise<string[]> {
  const { stdout } = await runGit(
    ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
    { cwd: checkout },
  );
  return stdout.split("\0").filter((path) => path !== "");
}

/** Which of `paths` (relative to the checkout) git ignores there; tracked files never are. */
export async function filterIgnored(checkout: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const result = await runGit(["check-ignore", "-z", "--stdin"], {
    cwd: checkout,
    input: `${paths.join("\0")}\0`,
    okCodes: [1],
  });
  return result.stdout.split("\0").filter((path) => path !== "");
}
