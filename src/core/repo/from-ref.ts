import { UserError } from "../../errors.js";
import type { RefEntry } from "../../git/parse.js";
import { resolveCommit } from "../../git/refs.js";
import { readWorktreeStatus } from "../../git/status.js";
import { listWorktrees } from "../../git/worktrees.js";
import { shellCommand, shortOid } from "../../text.js";
import { isBerthId } from "../berth/identity.js";

export interface ResolvedBase {
  /** What the user named (or the trunk's name). */
  name: string;
  /** The full ref it resolved through, null for a bare commit id. */
  ref: string | null;
  commit: string;
}

/**
 * Resolves `--from <ref>` for `berth <verb>`: a branch, tag, remote branch or
 * commit. A name that is both a branch and a tag (or matches nothing) is
 * refused with the candidates, never guessed; a branch that only a remote has
 * is named as `<remote>/<branch>`.
 */
export async function resolveBase(
  cwd: string,
  name: string,
  refs: readonly RefEntry[],
  verb: "start" | "update",
  prefix: string,
): Promise<ResolvedBase> {
  const retry = (from: string) => shellCommand(["berth", verb, "--from", from]);
  // Empty, it would name nothing and be "similar" to every ref.
  if (name.trim() === "") {
    throw new UserError("usage", "--from needs a branch, tag or commit; it was given none.", {
      next: listRefsCommand(cwd),
    });
  }
  const full = name.startsWith("refs/") ? [name] : [];
  const wanted = new Set([
    ...full,
    `refs/heads/${name}`,
    `refs/tags/${name}`,
    `refs/remotes/${name}`,
  ]);
  const matches = refs.filter((r) => wanted.has(r.ref));
  if (matches.length > 1) {
    const list = matches.map((m) => `${m.ref} (${(m.peeled ?? m.oid).slice(0, 12)})`);
    throw new UserError(
      "ambiguous_target",
      `"${name}" names more than one ref: ${list.join(", ")}; name the full ref you mean.`,
      {
        next: retry(matches[0]?.ref ?? name),
        data: { candidates: matches.map((m) => ({ ref: m.ref, commit: m.peeled ?? m.oid })) },
      },
    );
  }
  const match = matches[0];
  if (match) {
    const commit = await resolveCommit(cwd, match.ref);
    if (commit === null) {
      throw new UserError(
        "unknown_target",
        `${match.ref} does not point at a commit; name a branch, tag or commit with --from.`,
        { next: listRefsCommand(cwd) },
      );
    }
    return { name, ref: match.ref, commit };
  }
  // A berth id names its branch, as every verb takes a berth (`start --from <previous stage>`).
  const berthBranch = isBerthId(name) && !name.startsWith(prefix) ? `${prefix}${name}` : null;
  const ofBerth =
    berthBranch === null ? undefined : refs.find((r) => r.ref === `refs/heads/${berthBranch}`);
  if (ofBerth !== undefined) {
    const tip = await resolveCommit(cwd, ofBerth.ref);
    if (tip !== null) return { name, ref: ofBerth.ref, commit: tip };
  }
  // Not a ref name: a commit id or any other revision git understands.
  const commit = /^-/.test(name) ? null : await resolveCommit(cwd, name);
  if (commit !== null) return { name, ref: null, commit };
  // As git's own checkout would find it: the branch as last fetched from exactly one remote.
  const names = berthBranch === null ? [name] : [name, berthBranch];
  const onRemotes = refs.flatMap((r) => {
    const short = r.ref.slice("refs/remotes/".length);
    const found = r.ref.startsWith("refs/remotes/") && names.some((n) => isRemoteBranch(short, n));
    return found ? [short] : [];
  });
  const [onRemote] = onRemotes;
  if (onRemotes.length === 1 && onRemote !== undefined) {
    throw new UserError(
      "unknown_target",
      `"${name}" is not a local branch, tag or commit; ${onRemote} is that branch as last fetched from ${onRemote.slice(0, onRemote.indexOf("/"))}: name it so.`,
      { next: retry(onRemote), data: { candidates: [`refs/remotes/${onRemote}`] } },
    );
  }
  const similar = refs
    .filter((r) => r.ref.startsWith("refs/heads/") || r.ref.startsWith("refs/tags/"))
    .filter((r) => r.ref.toLowerCase().includes(name.toLowerCase()))
    .slice(0, 10)
    .map((r) => r.ref);
  throw new UserError(
    "unknown_target",
    `"${name}" is not a branch, tag or commit in this repository.` +
      (similar.length > 0 ? ` Similar: ${similar.join(", ")}.` : ""),
    { next: listRefsCommand(cwd), data: { candidates: similar } },
  );
}

/** `<remote>/<name>` for a remote whose name has no slash (which git's own guess needs too). */
function isRemoteBranch(short: string, name: string): boolean {
  const remote = short.slice(0, -name.length - 1);
  return short.endsWith(`/${name}`) && remote !== "" && !remote.includes("/");
}

/** The git command that lists the branches and tags `--from` can name. */
function listRefsCommand(cwd: string) {
  return shellCommand([
    "git",
    "-C",
    cwd,
    "for-each-ref",
    "--format=%(refname:short)",
    "refs/heads",
    "refs/tags",
  ]);
}

const NAMED_FILES = 5;

/**
 * A hint when the `--from` branch is checked out with uncommitted changes (a
 * train's stage not yet committed): the verb takes the branch's last commit,
 * so they stay behind. Null otherwise (two git reads, only for a `--from`
 * that names a local branch).
 */
export async function uncommittedAtFrom(
  cwd: string,
  base: ResolvedBase,
  verb: "start" | "update",
): Promise<string | null> {
  if (base.ref === null || !base.ref.startsWith("refs/heads/")) return null;
  const branch = base.ref.slice("refs/heads/".length);
  const holder = (await listWorktrees(cwd)).find((w) => w.branch === branch && !w.prunable);
  if (holder === undefined) return null;
  const status = await readWorktreeStatus(holder.path).catch(() => null);
  if (status === null || status.changedFiles === 0) return null;
  const named = status.paths.slice(0, NAMED_FILES).join(", ");
  const more =
    status.changedFiles > NAMED_FILES ? `, and ${status.changedFiles - NAMED_FILES} more` : "";
  const takes = verb === "start" ? "the new berth starts from" : "the merge takes";
  return (
    `${branch} has ${status.changedFiles} uncommitted change(s) at ${holder.path} (${named}${more}); ` +
    `${takes} its last commit, ${shortOid(base.commit)}, without them`
  );
}
