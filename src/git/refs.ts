import { parseRefs, REF_FORMAT, type RefEntry } from "./parse.js";
import { type GitRunner, runGit } from "./run.js";

/** Every ref under the given prefixes, in one process. */
export async function listRefs(
  cwd: string,
  prefixes: readonly string[],
  run: GitRunner = runGit,
): Promise<RefEntry[]> {
  const { stdout } = await run(["for-each-ref", `--format=${REF_FORMAT}`, ...prefixes], { cwd });
  return parseRefs(stdout);
}

/** The commit a name resolves to, or null. Never guesses between ambiguous names. */
export async function resolveCommit(cwd: string, rev: string): Promise<string | null> {
  // ":/<text>" (the newest commit whose message matches) already names a commit,
  // and a suffix would become part of the text searched for.
  const peeled = rev.startsWith(":/") ? rev : `${rev}^{commit}`;
  const result = await runGit(["rev-parse", "--verify", "--quiet", "--end-of-options", peeled], {
    cwd,
    okCodes: [1, 128],
  });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/** Creates `ref` at `oid` only if it does not exist yet (compare-and-swap against absence). */
export async function createRef(
  cwd: string,
  ref: string,
  oid: string,
  reason: string,
): Promise<void> {
  await runGit(["update-ref", "-m", reason, ref, oid, ""], { cwd });
}

/** Moves `ref` from `oldOid` to `newOid`; git refuses if it no longer points at `oldOid`. */
export async function moveRef(
  cwd: string,
  ref: string,
  newOid: string,
  oldOid: string,
  reason: string,
): Promise<void> {
  await runGit(["update-ref", "-m", reason, ref, newOid, oldOid], { cwd });
}

/** Deletes `ref` only if it still points at `oldOid`. */
export async function deleteRef(cwd: string, ref: string, oldOid: string): Promise<void> {
  await runGit(["update-ref", "-d", ref, oldOid], { cwd });
}

/**
 * The tips of exactly these full ref names, in one process; a ref that does
 * not exist maps to null. (for-each-ref also matches refs below a name, so
 * only exact names are kept.)
 */
export async function readRefTips(
  cwd: string,
  refs: readonly string[],
): Promise<Map<string, string | null>> {
  const found = await listRefs(cwd, refs);
  const byName = new Map(found.map((entry) => [entry.ref, entry.oid]));
  return new Map(refs.map((ref) => [ref, byName.get(ref) ?? null]));
}

/** Whether any ref (branch, tag, remote, recovery...) contains `commit`, in one process. */
export async function isOnAnyRef(cwd: string, commit: string): Promise<boolean> {
  const { stdout } = await runGit(
    ["for-each-ref", "--count=1", "--format=%(refname)", "--contains", commit],
    { cwd },
  );
  return stdout.trim() !== "";
}
