import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { startBerth } from "../../src/core/lifecycle/start.js";
import {
  BERTH_BIN,
  collectRun,
  makeRepo,
  type RunResult,
  runBerth,
  type TestRepo,
  testContext,
} from "../helpers/repo.js";

/**
 * Helpers for the end-to-end reliability tests: a repository whose resource,
 * setup and gate commands can be held at a named point (a "hook"), a way to
 * spawn the built binary and SIGKILL it there, and the consistency check that
 * follows every crash (spec section 9, invariant 7).
 */

export const STACK_LINE = /^\s+at /m;

export interface Fleet {
  repo: TestRepo;
  env: NodeJS.ProcessEnv;
  /** FUZZ_DIR: resource files, hook files, logs. */
  dir: string;
  berth(args: string[], cwd?: string): Promise<RunResult>;
  cleanup(): void;
}

/**
 * A command fragment that, while `hold-<point>` exists, announces itself in
 * `at-<point>` (with its pid) and waits. Removing the hold file releases it.
 * The pid is written under another name and renamed into place: a reader that
 * saw the file before the pid was in it would wait on pid 0, its own group.
 */
export function hook(point: string): string {
  return `if [ -e "$FUZZ_DIR/hold-${point}" ]; then echo $$ > "$FUZZ_DIR/.at-${point}.$$" && mv "$FUZZ_DIR/.at-${point}.$$" "$FUZZ_DIR/at-${point}"; while [ -e "$FUZZ_DIR/hold-${point}" ]; do sleep 0.05; done; fi`;
}

export interface FleetOptions {
  /** Resource names, created in this order (destroyed in reverse). */
  resources?: string[];
  setupStep?: boolean;
  gate?: boolean;
  portSpan?: number;
  extra?: string;
}

/** berth.toml whose every command can be held (and, for destroys, made to fail) by files. */
export function fleetConfig(options: FleetOptions = {}): string {
  const lines = ["[worktree]", `port_span = ${options.portSpan ?? 2000}`, ""];
  if (options.setupStep) lines.push("[worktree.setup]", `steps = ['${hook("setup")}']`, "");
  for (const name of options.resources ?? ["db"]) {
    lines.push(
      `[worktree.resources.${name}]`,
      `create = '${hook(`create-${name}`)}; touch "$FUZZ_DIR/res/$BERTH_ID.${name}"; echo "create ${name} $BERTH_ID" >> "$FUZZ_DIR/resource.log"'`,
      `destroy = '${hook(`destroy-${name}`)}; if [ -e "$FUZZ_DIR/fail-destroy" ]; then echo "destroy refused" >&2; exit 1; fi; if [ -e "$FUZZ_DIR/kill-destroy" ]; then kill -KILL $$; fi; rm -f "$FUZZ_DIR/res/$BERTH_ID.${name}"; echo "destroy ${name} $BERTH_ID" >> "$FUZZ_DIR/resource.log"'`,
      "",
    );
  }
  if (options.gate !== false) {
    lines.push(
      "[gate]",
      `checks = [{ name = "check", run = '${hook("gate")}; test ! -e FAIL' }]`,
      "",
    );
  }
  if (options.extra) lines.push(options.extra);
  return lines.join("\n");
}

export function makeFleet(options: FleetOptions = {}): Fleet {
  const repo = makeRepo({ config: fleetConfig(options) });
  const dir = join(repo.dir.path, "fuzz");
  execFileSync("mkdir", ["-p", join(dir, "res")]);
  const env = { ...repo.env, FUZZ_DIR: dir };
  return {
    repo,
    env,
    dir,
    berth: (args, cwd = repo.path) => runBerth(args, { cwd, env, timeoutMs: 120_000 }),
    cleanup: () => {
      // Release every hook so no orphaned command outlives the test.
      for (const name of existsSync(dir) ? readdirSync(dir) : []) {
        if (name.startsWith("hold-")) rmSync(join(dir, name), { force: true });
      }
      repo.cleanup();
    },
  };
}

export interface Started {
  id: string;
  branch: string;
  path: string;
  port: number;
}

/**
 * Builds fleets for the tests: `berth start` in process (the same code the
 * binary runs, without a node start-up per berth); fails unless it worked.
 */
export async function start(f: Fleet, name: string, from?: string): Promise<Started> {
  const { ctx } = testContext(f.repo.path, f.env);
  const result = await startBerth(ctx, { name, from });
  if (!result.ok || result.data === null) throw new Error(`start ${name} failed`);
  return result.data;
}

/** A train a → b with one commit each: a is contained in b. */
export async function train(f: Fleet): Promise<{ a: Started; b: Started }> {
  const a = await start(f, "a");
  commitIn(f, a.path, "a.txt");
  const b = await start(f, "b", a.branch);
  commitIn(f, b.path, "b.txt");
  return { a, b };
}

export function commitIn(f: Fleet, path: string, file: string, content = `${file}\n`): string {
  f.repo.write(file, content, path);
  return f.repo.commit(`${file} in ${path.split("/").pop()}`, path);
}

/** Exit code among `codes`, one JSON document on stdout, no stack trace, no internal error. */
export function expectClean(run: RunResult, codes: number[]): void {
  const context = `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
  expect(codes, context).toContain(run.code);
  expect(run.stderr, context).not.toMatch(STACK_LINE);
  expect(run.json, context).toBeDefined();
  expect(run.json?.error?.code, context).not.toBe("internal");
}

export interface Running {
  child: ChildProcess;
  done: Promise<RunResult>;
}

/** Spawns the binary and hands back the process, so a test can kill it mid-verb. */
export function spawnBerth(f: Fleet, args: string[], cwd = f.repo.path): Running {
  const child = spawn(process.execPath, [BERTH_BIN, ...args], {
    cwd,
    env: f.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const done = collectRun(child);
  return { child, done };
}

export async function waitFor(
  check: () => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function hold(f: Fleet, point: string): void {
  writeFileSync(join(f.dir, `hold-${point}`), "");
}

export function release(f: Fleet, point: string): void {
  rmSync(join(f.dir, `hold-${point}`), { force: true });
}

export function reached(f: Fleet, point: string): boolean {
  return heldPid(f, point) !== null;
}

/** The pid of the held command (its sh), to wait for it to finish after a release. */
export function heldPid(f: Fleet, point: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(f.dir, `at-${point}`), "utf8");
  } catch {
    return null;
  }
  const pid = Number(text.trim());
  // Never 0 or negative: process.kill(0 or -n) reaches a whole group, always "alive".
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `args` until the command reaches `point`, SIGKILLs berth there, then
 * releases the hook and waits for the orphaned command to finish (a command
 * berth started outlives it, as a real `createdb` would).
 */
export async function killAt(
  f: Fleet,
  args: string[],
  point: string,
  cwd?: string,
): Promise<RunResult> {
  hold(f, point);
  const running = spawnBerth(f, args, cwd);
  await Promise.race([
    waitFor(() => reached(f, point), `berth ${args.join(" ")} to reach ${point}`),
    running.done.then((r) => {
      throw new Error(`berth ${args.join(" ")} ended before ${point}: ${r.stdout}${r.stderr}`);
    }),
  ]);
  running.child.kill("SIGKILL");
  const result = await running.done;
  const pid = heldPid(f, point);
  release(f, point);
  // Well inside the test's own timeout, so a hang here names itself.
  if (pid !== null) await waitFor(() => !isAlive(pid), "the orphaned command to finish", 20_000);
  rmSync(join(f.dir, `at-${point}`), { force: true });
  return result;
}

/** Kills the verb after `delayMs` (wherever it is), or lets it finish if it is faster. */
export async function killAfter(
  f: Fleet,
  args: string[],
  delayMs: number,
  cwd?: string,
): Promise<RunResult> {
  const running = spawnBerth(f, args, cwd);
  const timer = setTimeout(() => running.child.kill("SIGKILL"), delayMs);
  const result = await running.done;
  clearTimeout(timer);
  return result;
}

export interface FleetFacts {
  /** Registered worktrees: path → { folder, markerId }. */
  worktrees: { path: string; folder: boolean; markerId: string | null; adminKey: string | null }[];
  ledger: { key: string; id: string; resource: string }[];
  resources: string[];
  commits: Set<string>;
  lock: boolean;
}

/** Plain git and file reads: what the consistency check compares. */
export function readFleetFacts(f: Fleet): FleetFacts {
  const common = join(f.repo.path, ".git");
  const keyOf = new Map<string, string>();
  const wtRoot = join(common, "worktrees");
  for (const key of existsSync(wtRoot) ? readdirSync(wtRoot) : []) {
    try {
      keyOf.set(
        readFileSync(join(wtRoot, key, "gitdir"), "utf8")
          .trim()
          .replace(/\/\.git$/, ""),
        key,
      );
    } catch {
      // not a registration
    }
  }
  const list = f.repo.git(["worktree", "list", "--porcelain"]);
  const worktrees = list
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice(9))
    .map((path, i) => {
      const adminKey = i === 0 ? null : (keyOf.get(path) ?? null);
      let markerId: string | null = null;
      if (adminKey !== null) {
        try {
          markerId = JSON.parse(readFileSync(join(wtRoot, adminKey, "berth", "ready"), "utf8")).id;
        } catch {
          markerId = null;
        }
      }
      return { path, folder: existsSync(path), markerId, adminKey };
    });
  const ledgerRoot = join(common, "berth", "ledger");
  const ledger: FleetFacts["ledger"] = [];
  for (const key of existsSync(ledgerRoot) ? readdirSync(ledgerRoot) : []) {
    for (const name of readdirSync(join(ledgerRoot, key)).filter((n) => n.endsWith(".json"))) {
      const entry = JSON.parse(readFileSync(join(ledgerRoot, key, name), "utf8"));
      ledger.push({ key, id: entry.id, resource: entry.resource });
    }
  }
  const all = f.repo.git(["rev-list", "--all"]);
  return {
    worktrees,
    ledger,
    resources: readdirSync(join(f.dir, "res")).sort(),
    commits: new Set(all === "" ? [] : all.split("\n")),
    lock: existsSync(join(common, "berth", "lock")),
  };
}

/**
 * After a crash: status and prune run cleanly (the dead holder's lock is
 * taken over), and the fleet is consistent: no commit lost, no live resource
 * without a ledger entry, no ledger entry without a live berth, no
 * registration without its folder, no lock left behind.
 */
export async function expectConsistentAfterCrash(
  f: Fleet,
  commitsBefore: Set<string>,
): Promise<void> {
  const status = await f.berth(["status", "--json"]);
  expectClean(status, [0]);
  const prune = await f.berth(["worktree", "prune", "--yes", "--json"]);
  expectClean(prune, [0]);
  const facts = readFleetFacts(f);
  const context = JSON.stringify(
    { facts: { ...facts, commits: facts.commits.size }, prune: prune.json },
    null,
    1,
  );
  // A lock the dead process left is harmless only if its holder is provably dead (it is taken over).
  if (facts.lock) {
    const holder = JSON.parse(readFileSync(join(f.repo.path, ".git", "berth", "lock"), "utf8"));
    expect(isAlive(holder.pid), `the lock is held by a live process\n${context}`).toBe(false);
  }
  for (const commit of commitsBefore)
    expect(facts.commits.has(commit), `commit ${commit} lost\n${context}`).toBe(true);
  for (const file of facts.resources) {
    const [id, resource] = file.split(".");
    expect(
      facts.ledger.some((e) => e.id === id && e.resource === resource),
      `resource ${file} is alive with no ledger entry\n${context}`,
    ).toBe(true);
  }
  for (const entry of facts.ledger) {
    const owner = facts.worktrees.find((w) => w.adminKey === entry.key && w.markerId === entry.id);
    expect(
      owner?.folder,
      `ledger entry ${entry.key}/${entry.resource} has no live berth\n${context}`,
    ).toBe(true);
  }
  for (const w of facts.worktrees) {
    expect(w.folder, `registration ${w.path} has no folder\n${context}`).toBe(true);
  }
  // Every checkout berth cannot account for is at least visible in status.
  for (const w of facts.worktrees.filter((x) => x.adminKey !== null && x.markerId === null)) {
    expect(
      status.json.data.worktrees.map((r: { path: string }) => r.path),
      context,
    ).toContain(w.path);
  }
}

export function commitsNow(f: Fleet): Set<string> {
  const all = f.repo.git(["rev-list", "--all"]);
  return new Set(all === "" ? [] : all.split("\n"));
}
