import { join } from "node:path";
import type { Context } from "../context.js";
import { UserError } from "../errors.js";
import { deleteRef, listRefs } from "../git/refs.js";
import { hasCommits } from "../git/repo.js";
import { addWorktree, removeWorktree } from "../git/worktrees.js";
import { readAdminKeys, readGitFile } from "../io/admin-dirs.js";
import { pathExistsOrBroken } from "../io/fs.js";
import { adminDirFor, worktreeRootFor } from "../io/paths.js";
import { readReadyMarker, writeReadyMarker } from "../io/ready-marker.js";
import type { PlanStep, StepOutcome, VerbResult } from "../result.js";
import { VERSION } from "../version.js";
import { cryptoHex, type MintedId, mintId, portFor, type RandomHex } from "./identity.js";
import { type ResolvedBase, resolveBase } from "./refs-resolve.js";
import { openRepository, type Repository } from "./repository.js";
import { detectTrunk } from "./trunk.js";

export interface StartOptions {
  name?: string | undefined;
  from?: string | undefined;
  dryRun?: boolean;
  random?: RandomHex;
}

export interface StartData {
  id: string;
  branch: string;
  path: string;
  port: number;
  from: string;
  from_tip: string;
  name_note?: string;
}

const MAX_ID_ATTEMPTS = 32;

export async function startBerth(
  ctx: Context,
  options: StartOptions,
): Promise<VerbResult<StartData>> {
  const repo = await openRepository(ctx);
  const cwd = repo.location.cwd;
  if (!(await hasCommits(cwd))) {
    throw new UserError(
      "precondition_failed",
      "This repository has no commits yet; nothing to fork from.",
      {
        next: 'git commit --allow-empty -m "initial commit"',
      },
    );
  }
  const refs = await listRefs(cwd, ["refs/heads", "refs/tags", "refs/remotes"]);
  const base = await chooseBase(repo, refs, options.from);
  const taken = await readTakenIdentities(repo, refs);
  const minted = mintFreeId(repo, taken, options.name, options.random ?? cryptoHex);

  const branch = `${repo.config.repository.branch_prefix}${minted.id}`;
  const path = join(worktreeRootFor(repo.mainPath, repo.config.worktree.root), minted.id);
  const port = portFor(minted.id, repo.config.worktree.port_base, repo.config.worktree.port_span);
  const data: StartData = {
    id: minted.id,
    branch,
    path,
    port,
    from: base.name,
    from_tip: base.commit,
    ...(minted.nameNote === null ? {} : { name_note: minted.nameNote }),
  };
  const plan: PlanStep[] = [
    {
      step: "create worktree",
      target: path,
      detail: `branch ${branch} at ${base.commit.slice(0, 12)} (${base.name})`,
    },
    { step: "write ready marker", target: branch },
  ];
  const hints = minted.nameNote === null ? [] : [minted.nameNote];
  if (options.dryRun) return { ok: true, verb: "start", data, plan: { steps: plan }, hints };

  ctx.journal.begin({ branch, path });
  const steps: StepOutcome[] = [];
  try {
    await addWorktree(cwd, path, branch, base.commit);
    steps.push({ step: "create worktree", target: path, outcome: "done" });
    const adminDir = await readGitFile(path);
    if (adminDir === null) throw new Error(`git created ${path} without a .git file`);
    await writeReadyMarker(adminDir, {
      id: minted.id,
      branch,
      created_at: ctx.now().toISOString(),
      berth_version: VERSION,
      from: options.from ?? null,
      from_tip: base.commit,
    });
    steps.push({ step: "write ready marker", target: branch, outcome: "done" });
  } catch (error) {
    const undone = await undoStart(cwd, path, branch, base.commit);
    throw new UserError(
      "precondition_failed",
      `Could not start the berth: ${(error as Error).message}. ${undone}`,
      { data: { steps } },
    );
  }
  return { ok: true, verb: "start", data, plan: { steps: plan }, steps, hints };
}

async function chooseBase(
  repo: Repository,
  refs: Awaited<ReturnType<typeof listRefs>>,
  from: string | undefined,
): Promise<ResolvedBase> {
  if (from !== undefined) return resolveBase(repo.location.cwd, from, refs);
  const trunk = detectTrunk(repo.config, refs);
  if (trunk.name === null || trunk.tip === null) {
    const what =
      trunk.name === null
        ? "No trunk was found (no origin/HEAD, main or master)"
        : `The trunk branch "${trunk.name}" does not exist`;
    throw new UserError("precondition_failed", `${what}; nothing changed.`, {
      next: "berth start <name> --from <ref>, or set [repository].trunk in berth.toml",
    });
  }
  // By name: the trunk's own tip, whatever the calling checkout has checked out.
  return { name: trunk.name, ref: `refs/heads/${trunk.name}`, commit: trunk.tip };
}

interface TakenIdentities {
  branches: Set<string>;
  ports: Set<number>;
}

/** Branches and the ports of live berths: an id colliding with either is re-rolled. */
async function readTakenIdentities(
  repo: Repository,
  refs: Awaited<ReturnType<typeof listRefs>>,
): Promise<TakenIdentities> {
  const branches = new Set(
    refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => r.ref.slice(11)),
  );
  const keys = await readAdminKeys(repo.location.commonDir);
  const markers = await Promise.all(
    [...keys.values()].map((key) => readReadyMarker(adminDirFor(repo.location.commonDir, key))),
  );
  const { port_base, port_span } = repo.config.worktree;
  const ports = new Set(markers.flatMap((m) => (m ? [portFor(m.id, port_base, port_span)] : [])));
  return { branches, ports };
}

function mintFreeId(
  repo: Repository,
  taken: TakenIdentities,
  name: string | undefined,
  random: RandomHex,
): MintedId {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const { branch_prefix } = repo.config.repository;
  const { port_base, port_span } = repo.config.worktree;
  for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
    const minted = mintId(name, random);
    const free =
      !taken.branches.has(`${branch_prefix}${minted.id}`) &&
      !taken.ports.has(portFor(minted.id, port_base, port_span)) &&
      !pathExistsOrBroken(join(root, minted.id));
    if (free) return minted;
  }
  throw new UserError(
    "precondition_failed",
    `Could not find a free id after ${MAX_ID_ATTEMPTS} tries; the port band may be full.`,
    { next: "raise [worktree].port_span in berth.toml, or prune the fleet: berth worktree prune" },
  );
}

/**
 * Undoes only what this run created, newest first, and says what it did.
 * `git worktree add` can fail after registering the checkout (a failing
 * post-checkout hook), so the folder is checked, not the step list: it did not
 * exist before this run (the id was minted against it).
 */
async function undoStart(
  cwd: string,
  path: string,
  branch: string,
  commit: string,
): Promise<string> {
  const problems: string[] = [];
  if (pathExistsOrBroken(path)) {
    await removeWorktree(cwd, path, true).catch((e: Error) => problems.push(e.message));
  }
  await deleteRef(cwd, `refs/heads/${branch}`, commit).catch((e: Error) => {
    // Absent is fine: git may have failed before creating the branch.
    if (!/unable to resolve|does not exist|not a valid/i.test(e.message)) problems.push(e.message);
  });
  return problems.length === 0
    ? "Nothing of it was left behind."
    : `Cleaning up the half-made berth failed too: ${problems.join("; ")}`;
}
