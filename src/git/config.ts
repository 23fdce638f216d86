import { runGit } from "./run.js";

/**
 * The repository's git configuration values for the given keys (any scope
 * git reads: system, global, local, worktree), keyed by lower-case name; a
 * key that is not set is absent.
 */
export async function readGitConfig(
  cwd: string,
  keys: readonly string[],
): Promise<Map<string, string>> {
  const pattern = `^(${keys.map((k) => k.toLowerCase().replaceAll(".", "\\.")).join("|")})$`;
  const { stdout } = await runGit(["config", "--get-regexp", pattern], { cwd, okCodes: [1] });
  const values = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    if (line === "") continue;
    const space = line.indexOf(" ");
    const key = space === -1 ? line : line.slice(0, space);
    values.set(key.toLowerCase(), space === -1 ? "true" : line.slice(space + 1));
  }
  return values;
}

/** Sets a key in the repository's own config (`.git/config`). */
export async function setGitConfig(cwd: string, key: string, value: string): Promise<void> {
  await runGit(["config", "--local", key, value], { cwd });
}

/**
 * git's own check that the working tree's filesystem keeps the folder times
 * the untracked cache relies on (`git update-index --test-untracked-cache`;
 * it waits a few seconds between its probes). Resolves with git's complaint,
 * or null when the test passed.
 */
export async function testUntrackedCache(cwd: string): Promise<string | null> {
  const result = await runGit(["update-index", "--test-untracked-cache"], { cwd, okCodes: [1] });
  if (result.exitCode === 0) return null;
  const why = `${result.stdout}\n${result.stderr}`.trim().split("\n").at(-1) ?? "";
  return why === "" ? "the filesystem failed git's untracked-cache test" : why;
}
