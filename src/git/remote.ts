import { GitError } from "../errors.js";
import { runGit } from "./run.js";

/**
 * The only git calls that touch a network: fetch and push to the fleet's
 * `[remote]` (spec section 13). Nothing calls them without a remote name
 * from berth.toml. Outcomes are types, never stderr for the caller to read.
 */

/**
 * A push's fate: the remote took it; refused it because it moved (stale
 * lease, not a fast-forward: `rejected`); declined it by its own rules (a
 * pre-receive hook, a protected branch: `declined`, which trying again does
 * not change); or could not be reached.
 */
export type PushFate =
  | { fate: "pushed" }
  | { fate: "rejected"; message: string }
  | { fate: "declined"; message: string }
  | { fate: "unreachable"; message: string };

/**
 * A fetch's fate: done; the remote answered but has no ref a refspec names
 * (`missing`: a fresh remote has no trunk yet); or it could not be reached
 * (or refused to serve).
 */
export type FetchFate =
  | { fate: "fetched" }
  | { fate: "missing"; message: string }
  | { fate: "unreachable"; message: string };

/**
 * What went wrong, in git's words: its first `fatal:` or `error:` line. The
 * last line is often the tail of its advice ("and the repository exists."),
 * which reads as the opposite of the failure.
 */
function failureLine(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const failure = lines.find((l) => /^(fatal|error): /.test(l));
  return failure?.replace(/^(fatal|error): /, "") ?? lines.at(-1) ?? "";
}

/**
 * Pushes exactly `commit` to `ref` on `remote`, only if the remote's ref is
 * still at `expected` ("": does not exist there yet) — `--force-with-lease`,
 * a compare-and-swap on the remote. `--porcelain` marks a refused ref with "!".
 */
export async function pushWithLease(
  cwd: string,
  remote: string,
  ref: string,
  expected: string,
  commit: string,
): Promise<PushFate> {
  const args = [
    "push",
    "--porcelain",
    "--no-verify",
    `--force-with-lease=${ref}:${expected}`,
    "--end-of-options",
    remote,
    `${commit}:${ref}`,
  ];
  const result = await runGit(args, { cwd, okCodes: [1, 128] });
  if (result.exitCode === 0) return { fate: "pushed" };
  const refused = refusedPush(result.stdout, result.stderr);
  if (refused !== null) return refused;
  return {
    fate: "unreachable",
    message: failureLine(result.stderr) || `git push exited ${result.exitCode}`,
  };
}

/**
 * A refused ref in `git push --porcelain` output (`!<TAB>from:to<TAB>summary`):
 * `[rejected] (stale info)` and the like are git's own lease and fast-forward
 * checks, and `[remote rejected] (failed to update ref)` is the remote's own
 * compare-and-swap losing to a push that came in meanwhile: the ref moved
 * (or the remote could not write it at all, which the trunk move tells apart).
 * Any other `[remote rejected] (...)` is the remote's receive side saying no
 * (a hook, a protected branch), and its hook's words come back on stderr as `remote:` lines.
 */
export function refusedPush(
  stdout: string,
  stderr: string,
): Extract<PushFate, { fate: "rejected" | "declined" }> | null {
  const line = stdout.split("\n").find((l) => l.startsWith("!"));
  if (line === undefined) return null;
  const summary = line.split("\t")[2]?.trim() ?? line.slice(1).trim();
  if (!summary.startsWith("[remote rejected]")) return { fate: "rejected", message: summary };
  // The remote's own words (its hook's, or why it could not write the ref) come as `remote:` lines.
  const said = stderr
    .split("\n")
    .filter((l) => l.startsWith("remote:"))
    .map((l) => l.slice("remote:".length).trim())
    .filter((l) => l !== "");
  const message = said.length === 0 ? summary : `${summary}: ${said.join("; ")}`;
  const lostItsSwap = /\(failed to (update ref|lock)\b/.test(summary);
  return { fate: lostItsSwap ? "rejected" : "declined", message };
}

/**
 * `git fetch <remote> <refspec>...`, forced refspecs as given; never prompts
 * (GIT_TERMINAL_PROMPT=0). `prune`: a ref the refspecs map that the remote no
 * longer has is deleted locally (git prunes only the refspecs' destinations).
 */
export async function fetchRefspecs(
  cwd: string,
  remote: string,
  refspecs: readonly string[],
  options: { prune?: boolean } = {},
): Promise<FetchFate> {
  const prune = options.prune === true ? ["--prune"] : [];
  try {
    await runGit(
      // Only these refs: fetching submodules on demand (git's default) could fail on theirs.
      [
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-recurse-submodules",
        ...prune,
        "--end-of-options",
        remote,
        ...refspecs,
      ],
      {
        cwd,
      },
    );
    return { fate: "fetched" };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    const message = failureLine(error.stderr) || error.message;
    // git's words for a ref the remote does not have (LC_ALL=C: never translated).
    if (/^couldn't find remote ref /.test(message)) return { fate: "missing", message };
    return { fate: "unreachable", message };
  }
}

/** The tips of these full ref names on `remote` (absent refs are missing from the map), or why it could not be asked. */
export async function lsRemote(
  cwd: string,
  remote: string,
  refs: readonly string[],
): Promise<
  { fate: "listed"; tips: Map<string, string> } | { fate: "unreachable"; message: string }
> {
  try {
    const { stdout } = await runGit(["ls-remote", "--end-of-options", remote, ...refs], { cwd });
    const tips = new Map<string, string>();
    for (const line of stdout.split("\n")) {
      const [oid, name] = line.split("\t");
      if (oid && name && refs.includes(name)) tips.set(name, oid);
    }
    return { fate: "listed", tips };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { fate: "unreachable", message: failureLine(error.stderr) || error.message };
  }
}
