import { join } from "node:path";
import { UserError } from "../../errors.js";
import type { listRefs } from "../../git/refs.js";
import { readAdminKeys } from "../../io/admin-dirs.js";
import type { BriefRecord } from "../../io/briefs.js";
import { pathExistsOrBroken } from "../../io/fs.js";
import { adminDirFor, worktreeRootFor } from "../../io/paths.js";
import { readReadyMarker } from "../../io/ready-marker.js";
import type { PlanStep } from "../../result.js";
import { shellCommand } from "../../text.js";
import type { BerthFacts } from "../berth/env.js";
import { type MintedId, mintId, portFor, type RandomHex } from "../berth/identity.js";
import { remoteTrunkRef } from "../fleet/integration.js";
import { type ResolvedBase, resolveBase } from "../repo/from-ref.js";
import { fetchedRemoteTrunkAhead } from "../repo/remote.js";
import type { Repository } from "../repo/repository.js";
import { createTrunkCommand, describeMissingTrunk, detectTrunk } from "../repo/trunk.js";
import type { StartData } from "./start.js";
import type { BaseBranch } from "./start-resume.js";

/**
 * A new berth's identity, free of every live sibling (spec section 5): the
 * base it forks from (the trunk by name, or the remote's as last fetched
 * when it is ahead, unless `--from`), the branches and
 * ports already taken, an id minted until its branch, folder and port are
 * all free, and what follows from that id (branch, folder, port, the plan).
 */

const MAX_ID_ATTEMPTS = 32;

export async function chooseBase(
  repo: Repository,
  refs: Awaited<ReturnType<typeof listRefs>>,
  from: string | undefined,
): Promise<ResolvedBase> {
  if (from !== undefined)
    return resolveBase(
      repo.location.cwd,
      from,
      refs,
      "start",
      repo.config.repository.branch_prefix,
    );
  const trunk = detectTrunk(repo.config, refs);
  if (trunk.name === null || trunk.tip === null) {
    throw new UserError(
      "precondition_failed",
      `${describeMissingTrunk(trunk)}; nothing changed. Name a base (berth start <name> --from <ref>), or set [repository].trunk in berth.toml.`,
      {
        next:
          createTrunkCommand(trunk) ??
          shellCommand(["git", "-C", repo.location.cwd, "branch", "--list"]),
      },
    );
  }
  // With a [remote], its trunk as last fetched when it is ahead: what a gate will ask for (0075).
  const remoteTip = await fetchedRemoteTrunkAhead(repo, trunk.name, trunk.tip);
  if (remoteTip !== null) {
    const tracking = remoteTrunkRef(repo.config.remote.name, trunk.name) as string;
    return { name: tracking.slice("refs/remotes/".length), ref: tracking, commit: remoteTip };
  }
  // By name: the trunk's own tip, whatever the calling checkout has checked out.
  return { name: trunk.name, ref: `refs/heads/${trunk.name}`, commit: trunk.tip };
}

export interface TakenIdentities {
  branches: Set<string>;
  ports: Set<number>;
}

/** Branches and the ports of live berths: an id colliding with either is re-rolled. */
export async function readTakenIdentities(
  repo: Repository,
  refs: Awaited<ReturnType<typeof listRefs>>,
): Promise<TakenIdentities> {
  const branches = new Set(
    refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => r.ref.slice(11)),
  );
  const keys = readAdminKeys(repo.location.commonDir);
  const markers = await Promise.all(
    [...keys.values()].map((key) => readReadyMarker(adminDirFor(repo.location.commonDir, key))),
  );
  const { port_base, port_span } = repo.config.worktree;
  const ports = new Set(markers.flatMap((m) => (m ? [portFor(m.id, port_base, port_span)] : [])));
  return { branches, ports };
}

export function mintFreeId(
  repo: Repository,
  taken: TakenIdentities,
  name: string | undefined,
  random: RandomHex,
): MintedId {
  for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
    const minted = mintId(name, random);
    if (isFreeId(repo, taken, minted.id)) return minted;
  }
  throw new UserError(
    "precondition_failed",
    `Could not find a free id after ${MAX_ID_ATTEMPTS} tries; the port band may be full: raise [worktree].port_span in berth.toml, or prune the fleet.`,
    { next: shellCommand(["berth", "worktree", "prune"]) },
  );
}

/** Its branch, folder and port are held by no live sibling. */
export function isFreeId(repo: Repository, taken: TakenIdentities, id: string): boolean {
  const root = worktreeRootFor(repo.mainPath, repo.config.worktree.root);
  const { branch_prefix } = repo.config.repository;
  const { port_base, port_span } = repo.config.worktree;
  return (
    !taken.branches.has(`${branch_prefix}${id}`) &&
    !taken.ports.has(portFor(id, port_base, port_span)) &&
    !pathExistsOrBroken(join(root, id))
  );
}

export interface Identity {
  data: StartData;
  facts: BerthFacts;
  plan: PlanStep[];
  hints: string[];
  /** The branch's record once started (null: none to keep). */
  record: BriefRecord | null;
}

export interface IdentityContext {
  /** The parked branch this start resumes, or null for a new branch. */
  resume: BaseBranch | null;
  /** The record the new berth's branch will carry (its `branch` is set here). */
  record: BriefRecord | null;
  nameGiven: boolean;
}

/** Everything that follows from the minted id: branch, folder, port, the plan. */
export function describeIdentity(
  repo: Repository,
  base: ResolvedBase,
  trunkName: string | null,
  minted: MintedId,
  context: IdentityContext,
): Identity {
  const { resume } = context;
  const branch = resume?.branch ?? `${repo.config.repository.branch_prefix}${minted.id}`;
  const record = context.record === null ? null : { ...context.record, branch };
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
    ...(record?.title ? { title: record.title } : {}),
    ...(resume === null ? {} : { resumed: true as const }),
  };
  const facts: BerthFacts = {
    id: minted.id,
    branch,
    path,
    port,
    trunk: trunkName,
    repo: repo.mainPath,
  };
  const hints = minted.nameNote === null ? [] : [minted.nameNote];
  const parked = resume?.record?.parked;
  if (parked && minted.id !== parked.id) {
    hints.push(`${parked.id}'s folder or port is taken now; resumed as ${minted.id}`);
  }
  if (resume !== null && context.nameGiven && parked && minted.id === parked.id) {
    hints.push(`resuming ${branch}: it keeps its id ${parked.id}; the name given is not used`);
  }
  return {
    data,
    facts,
    plan: planSteps(repo, facts, base, resume, record),
    hints,
    record,
  };
}

function planSteps(
  repo: Repository,
  facts: BerthFacts,
  base: ResolvedBase,
  resume: BaseBranch | null,
  record: BriefRecord | null,
): PlanStep[] {
  const { resources, setup, env_files } = repo.config.worktree;
  const parkedAt = resume?.record?.parked?.at;
  const plan: PlanStep[] = [
    resume === null
      ? {
          step: "create worktree",
          target: facts.path,
          detail: `branch ${facts.branch} at ${base.commit.slice(0, 12)} (${base.name})`,
        }
      : {
          step: "resume worktree",
          target: facts.path,
          detail: `parked branch ${facts.branch} at ${base.commit.slice(0, 12)}${parkedAt ? ` (parked ${parkedAt})` : ""}`,
        },
    { step: "write ready marker", target: facts.branch },
  ];
  if (record !== null) {
    plan.push({
      step: "write brief record",
      target: facts.branch,
      detail: record.title === null ? "its brief" : `title "${record.title}"`,
    });
  }
  for (const resource of resources) {
    plan.push({
      step: "create resource",
      target: resource.name,
      detail: resource.required ? "required" : "optional: a failure only warns",
    });
  }
  if (env_files.length > 0) {
    plan.push({
      step: "write env files",
      target: env_files.join(", "),
      detail: "those git ignores",
    });
  }
  for (const command of setup.steps) plan.push({ step: "run setup step", target: command });
  for (const resource of resources) {
    if (resource.ensure.trim() !== "")
      plan.push({ step: "ensure resource", target: resource.name });
  }
  for (const command of setup.ensure) plan.push({ step: "run setup ensure", target: command });
  return plan;
}

/** What one `start` has made so far, so a failure undoes exactly that. */
