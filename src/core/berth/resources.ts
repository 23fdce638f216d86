import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Context, isInterrupted } from "../../context.js";
import type { ResourceConfig } from "../../io/config-types.js";
import {
  forgetLedgerEntry,
  LEDGER_VERSION,
  LedgerConflictError,
  type LedgerEntry,
  type LedgerProblem,
  ledgerEntryPath,
  readLedger,
  recordLedgerEntry,
} from "../../io/ledger.js";
import { reportProgress } from "../progress.js";
import type { Repository } from "../repo/repository.js";
import { type BerthFacts, berthVariables, commandEnv } from "./env.js";
import { lastLines, runShell, type ShellResult } from "./project-command.js";

/**
 * A berth's external resources, always through the ledger (spec section 7):
 * an entry is recorded before its create command runs and forgotten only
 * after its destroy command succeeded, so no crash or failure can leave a
 * resource nobody knows how to destroy. Values reach the commands only as
 * `BERTH_*` environment variables.
 *
 * Every command runs in the berth's own folder; a destroy whose berth folder
 * is gone (stale metadata, orphaned resources) runs in an empty private
 * folder (`inBerthFolder`). Nothing runs in the main checkout (invariant 9):
 * a relative path in a destroy command can never reach its files. Destroy
 * runs the command and environment recorded in the ledger at create time:
 * what created a resource is what destroys it, whatever berth.toml says now.
 */

/** A berth as its resources see it: the BERTH_* facts plus its ledger key. */
export interface ResourceOwner extends BerthFacts {
  /** The folder name git chose under `<common>/worktrees/`; the ledger is filed under it. */
  adminKey: string;
}

export interface CommandFailure {
  resource: string;
  action: "create" | "ensure" | "destroy";
  command: string;
  /** null when the command was killed by a signal or could not start. */
  exit_code: number | null;
  /** The command's last lines of output. */
  output: string;
  /** What happened next, when it matters (a failed create's cleanup). */
  note: string | null;
  /** A stop signal killed the command, or came before it ran (commands/interrupt.ts). */
  interrupted?: true;
}

const OUTPUT_LINES = 20;

export interface CreateResourcesOutcome {
  /** Resources this run created, in creation order. */
  created: string[];
  /** Non-required resources whose create failed (each only warns). */
  warnings: string[];
  /** The required resource that failed; creation stopped there. */
  failure: CommandFailure | null;
}

/**
 * Creates `resources` in file order, each recorded before its create runs.
 * A failed create runs that resource's destroy (the ledger entry exists so a
 * half-made resource can be cleaned up) and forgets it; a required one then
 * stops the run, a non-required one only warns. Undoing the resources created
 * before a failure is the caller's job (it knows what else to undo).
 */
export async function createResources(
  repo: Repository,
  ctx: Context,
  owner: ResourceOwner,
  resources: readonly ResourceConfig[],
  firstOrder = 0,
): Promise<CreateResourcesOutcome> {
  const outcome: CreateResourcesOutcome = { created: [], warnings: [], failure: null };
  for (const [i, resource] of resources.entries()) {
    if (isInterrupted(ctx)) {
      return { ...outcome, failure: notRun(resource.name, "create", resource.create) };
    }
    const entry = ledgerEntryFor(owner, resource, firstOrder + i, ctx.now());
    try {
      await recordLedgerEntry(repo.location.commonDir, entry);
    } catch (error) {
      if (!(error instanceof LedgerConflictError)) throw error;
      // Someone else's record: never overwrite it, never destroy through it.
      const failure = commandFailure(resource.name, "create", resource.create, NO_RUN);
      failure.note = `not run: ${error.message}, which berth never overwrites`;
      if (resource.required) return { ...outcome, failure };
      outcome.warnings.push(describeFailure(failure));
      continue;
    }
    reportProgress(ctx, `creating resource ${resource.name}`);
    const result = await runShell(resource.create, {
      cwd: owner.path,
      env: commandEnv(ctx.env, entry.env),
      signal: ctx.interrupt,
    });
    if (result.exitCode === 0) {
      outcome.created.push(resource.name);
      continue;
    }
    const failure = commandFailure(resource.name, "create", resource.create, result);
    const cleanup = await cleanUpFailedCreate(repo, ctx, entry);
    if (cleanup !== null) failure.note = [failure.note, cleanup].filter(Boolean).join("\n");
    // An interrupted run stops here, required or not: the user asked it to stop.
    if (resource.required || result.aborted) return { ...outcome, failure };
    outcome.warnings.push(
      `${describeFailure(failure)}\n(not required: the berth goes on without it)`,
    );
  }
  return outcome;
}

/**
 * After a failed create: run the destroy command once, best effort and never
 * interrupted (it undoes; a second Ctrl-C still ends berth), then
 * forget the entry either way. A create that failed usually made nothing,
 * and a destroy that cannot work for it must not pin the berth forever; its
 * output is reported so a half-made resource can be found by hand.
 */
async function cleanUpFailedCreate(
  repo: Repository,
  ctx: Context,
  entry: LedgerEntry,
): Promise<string | null> {
  const result = await inBerthFolder(entry, repo.mainPath, (cwd) =>
    runShell(entry.destroy, { cwd, env: commandEnv(ctx.env, entry.env) }),
  );
  await forgetLedgerEntry(repo.location.commonDir, entry.admin_key, entry.resource);
  if (result.exitCode === 0) return null;
  const how = result.exitCode === null ? "was killed" : `failed too (exit ${result.exitCode})`;
  return `its destroy command ${how}; check for leftovers by hand:\n${indent(lastLines(result.output, OUTPUT_LINES))}`;
}

export interface DestroyOutcome {
  /** Resources destroyed and forgotten, in the order they were destroyed. */
  destroyed: string[];
  /** The destroy that failed; its entry and every entry not yet reached are kept. */
  failure: CommandFailure | null;
}

/**
 * THE destroy order: newest first (reverse creation order), so a resource is
 * destroyed before anything created ahead of it that it may depend on. The
 * real destroy below and every plan that predicts it (accept, drop, worktree
 * teardown, through core/lifecycle/removal-facts.ts) call this one function.
 */
export function inDestroyOrder<T extends { order: number }>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => b.order - a.order);
}

/**
 * Destroys ledger entries in destroy order (`inDestroyOrder`), each with its
 * recorded command and environment, in the berth's folder (`inBerthFolder`).
 * The first failure stops: that entry and the ones after it stay recorded, so
 * a later teardown or prune retries (decision 0025: a broken recorded command
 * is fixed by editing its ledger entry, which the failure names).
 */
export async function destroyLedgerEntries(
  repo: Repository,
  ctx: Context,
  entries: readonly LedgerEntry[],
): Promise<DestroyOutcome> {
  const outcome: DestroyOutcome = { destroyed: [], failure: null };
  for (const entry of inDestroyOrder(entries)) {
    if (isInterrupted(ctx)) {
      const kept =
        "; it and the resources after it stay recorded, and running the verb again destroys them";
      outcome.failure = notRun(entry.resource, "destroy", entry.destroy, kept);
      return outcome;
    }
    reportProgress(ctx, `destroying resource ${entry.resource}`);
    const result = await inBerthFolder(entry, repo.mainPath, (cwd) =>
      runShell(entry.destroy, { cwd, env: commandEnv(ctx.env, entry.env), signal: ctx.interrupt }),
    );
    if (result.exitCode !== 0) {
      outcome.failure = commandFailure(entry.resource, "destroy", entry.destroy, result);
      const file = ledgerEntryPath(repo.location.commonDir, entry.admin_key, entry.resource);
      outcome.failure.note = result.aborted
        ? `${outcome.failure.note}; it stays recorded in ${file}, and running the verb again destroys it`
        : `berth runs the destroy command recorded when the resource was created, in ${file}; fix what it needs and retry, or correct its "destroy" there if the command itself is wrong`;
      return outcome;
    }
    await forgetLedgerEntry(repo.location.commonDir, entry.admin_key, entry.resource);
    outcome.destroyed.push(entry.resource);
  }
  return outcome;
}

/** The entries a berth owns: filed under its admin key and recorded for its id. */
export async function readOwnedEntries(
  repo: Repository,
  adminKey: string,
  id: string,
): Promise<{ entries: LedgerEntry[]; problems: LedgerProblem[] }> {
  const listing = await readLedger(repo.location.commonDir, adminKey);
  return {
    // An entry of another id under the same key was left by an earlier berth
    // that git gave the same folder name: an orphan for prune, not ours.
    entries: listing.entries.filter((e) => e.id === id),
    problems: listing.problems,
  };
}

/** "<file>: <reason>; ..." for the ledger files a berth's entries could not be read from. */
export function describeLedgerProblems(problems: readonly LedgerProblem[]): string {
  return problems.map((p) => `${p.file}: ${p.reason}`).join("; ");
}

export interface EnsureResourcesOutcome {
  /** Declared resources that had no ledger entry and were created now. */
  created: string[];
  /** Resources whose ensure command ran and succeeded. */
  ensured: string[];
  warnings: string[];
  failure: CommandFailure | null;
}

/**
 * Convergent resource setup: every declared resource exists afterwards.
 * Recorded ones run their `ensure` command (if any), missing ones are created
 * through the ledger (unless `createMissing` is false). A required resource's failure stops; nothing is undone,
 * because everything created stays recorded and owned by the berth.
 */
export async function ensureResources(
  repo: Repository,
  ctx: Context,
  owner: ResourceOwner,
  options: { createMissing: boolean } = { createMissing: true },
): Promise<EnsureResourcesOutcome> {
  const outcome: EnsureResourcesOutcome = { created: [], ensured: [], warnings: [], failure: null };
  const { entries } = await readOwnedEntries(repo, owner.adminKey, owner.id);
  let nextOrder = entries.reduce((max, e) => Math.max(max, e.order + 1), 0);
  for (const resource of repo.config.worktree.resources) {
    if (isInterrupted(ctx)) {
      return { ...outcome, failure: notRun(resource.name, "ensure", resource.ensure) };
    }
    const entry = entries.find((e) => e.resource === resource.name);
    if (entry === undefined) {
      // At start, a resource with no entry is a non-required one that failed: leave it.
      if (!options.createMissing) continue;
      const created = await createResources(repo, ctx, owner, [resource], nextOrder++);
      outcome.created.push(...created.created);
      outcome.warnings.push(...created.warnings);
      if (created.failure) return { ...outcome, failure: created.failure };
      continue;
    }
    if (resource.ensure.trim() === "") continue;
    reportProgress(ctx, `ensuring resource ${resource.name}`);
    const result = await runShell(resource.ensure, {
      cwd: owner.path,
      env: commandEnv(ctx.env, { ...berthVariables(owner, resource.name), ...entry.env }),
      signal: ctx.interrupt,
    });
    if (result.exitCode === 0) {
      outcome.ensured.push(resource.name);
      continue;
    }
    const failure = commandFailure(resource.name, "ensure", resource.ensure, result);
    if (resource.required || result.aborted) return { ...outcome, failure };
    outcome.warnings.push(`${describeFailure(failure)}\n(not required: the berth goes on)`);
  }
  return outcome;
}

function ledgerEntryFor(
  owner: ResourceOwner,
  resource: ResourceConfig,
  order: number,
  now: Date,
): LedgerEntry {
  return {
    version: LEDGER_VERSION,
    admin_key: owner.adminKey,
    id: owner.id,
    path: owner.path,
    branch: owner.branch,
    resource: resource.name,
    env: berthVariables(owner, resource.name),
    destroy: resource.destroy,
    gc: resource.gc,
    created_at: now.toISOString(),
    order,
  };
}

/** A command that never ran. */
const NO_RUN = { exitCode: null, output: "", aborted: false } as const;
const STOPPED = "berth was interrupted (Ctrl-C or a stop signal) and stopped it";

function commandFailure(
  resource: string,
  action: CommandFailure["action"],
  command: string,
  run: Pick<ShellResult, "exitCode" | "output" | "aborted">,
): CommandFailure {
  return {
    resource,
    action,
    command,
    exit_code: run.exitCode,
    output: lastLines(run.output, OUTPUT_LINES),
    note: run.aborted ? STOPPED : null,
    ...(run.aborted ? { interrupted: true as const } : {}),
  };
}

/** The command a stop signal kept from running. */
function notRun(
  resource: string,
  action: CommandFailure["action"],
  command: string,
  then = "",
): CommandFailure {
  const failure = commandFailure(resource, action, command, NO_RUN);
  failure.note = `not run: berth was interrupted (Ctrl-C or a stop signal) first${then}`;
  failure.interrupted = true;
  return failure;
}

/** "resource db: create failed (exit 1): `createdb x`" and the output, for messages. */
export function describeFailure(failure: CommandFailure): string {
  const how = failure.exit_code === null ? "did not finish" : `failed (exit ${failure.exit_code})`;
  const lines = [`resource ${failure.resource}: ${failure.action} ${how}: ${failure.command}`];
  if (failure.output.trim() !== "") lines.push(indent(failure.output));
  if (failure.note !== null) lines.push(failure.note);
  return lines.join("\n");
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => `  | ${line}`)
    .join("\n");
}

/**
 * Runs `work` in the folder a destroy belongs in: the berth's own checkout
 * while it exists, else a fresh empty folder only this process can write,
 * removed afterwards. Never the main checkout, even if a ledger entry names it.
 */
export async function inBerthFolder<T>(
  entry: Pick<LedgerEntry, "path">,
  mainPath: string,
  work: (cwd: string) => Promise<T>,
): Promise<T> {
  const own = isDirectory(entry.path) && entry.path !== mainPath ? entry.path : null;
  if (own !== null) return work(own);
  const empty = await mkdtemp(join(tmpdir(), "berth-destroy-"));
  try {
    return await work(empty);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
