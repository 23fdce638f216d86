import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { type Context, silentJournal } from "../../../src/context.js";
import { portFor } from "../../../src/core/berth/identity.js";
import { makeRepo, makeTempDir, repoAt, type TestRepo } from "../../helpers/repo.js";
import type { Prng } from "./prng.js";
import { git, type Snapshot, type SnapshotPlace, takeSnapshot } from "./snapshot.js";

/**
 * One sequence's world: a real repository with a berth.toml whose resource
 * commands and gate check report to files in FUZZ_DIR, fault switches (flag
 * files those commands test), and the model of the uncommitted work the
 * sequence made by hand (so the invariants know exactly what may not vanish).
 */

export const TRUNK = "main";
export const PREFIX = "berth/";

export interface WorldConfig {
  resources: { name: string; gc: boolean; required: boolean }[];
  /** `[worktree.setup].steps` holds a step that fails while fail-setup is on. */
  setupStep: boolean;
  /** A narrow port band, so ids get re-rolled for ports held by live siblings. */
  portSpan: number;
  /** The gate's checks as first declared (hand changes rewrite them later). */
  gate: GateCheck[];
  /** `[acceptance].batch`: how many queued entries one integration lands (1 is the default). */
  batch: number;
}

/**
 * One declared gate check. `fuzz` is red while the tree holds FAIL, `extra`
 * while it holds f3.txt; each green run logs "<commit> <tree> <name>".
 * `variant` changes the command's text (a comment), `timeout` its timeout_s:
 * both change the gate definition's digest and nothing else.
 */
export interface GateCheck {
  name: "fuzz" | "extra";
  variant: number;
  timeout: number | null;
}

export type Fault = "fail-destroy" | "fail-create" | "fail-setup";

/** The file that makes each check red. */
export const RED_FILE: Record<GateCheck["name"], string> = { fuzz: "FAIL", extra: "f3.txt" };

function checkCommand(check: GateCheck): string {
  const red = RED_FILE[check.name];
  const variant = check.variant === 0 ? "" : ` # variant ${check.variant}`;
  return `if [ -e ${red} ]; then echo "${red} is present"; exit 1; fi; echo $(git rev-parse HEAD HEAD^{tree}) ${check.name} >> "$FUZZ_DIR/gate.log"${variant}`;
}

export function gateLine(gate: GateCheck[]): string {
  const checks = gate.map((c) => {
    const timeout = c.timeout === null ? "" : `, timeout_s = ${c.timeout}`;
    return `{ name = "${c.name}", run = '${checkCommand(c)}'${timeout} }`;
  });
  return `checks = [${checks.join(", ")}]`;
}

/**
 * Resource commands use relative paths the way real ones do (`var/` is
 * ignored, and the main checkout holds a `var/` of its own): they work only
 * when run in the berth's folder, and would wreck the main checkout's files
 * if run there (invariant 9). Every destroy logs "<id> <cwd>" to
 * FUZZ_DIR/destroys, so the model knows where it ran.
 */
function createCommand(): string {
  return `mkdir -p var && echo "$BERTH_ID" > var/res-$BERTH_RESOURCE && touch "$FUZZ_DIR/res/$BERTH_ID.$BERTH_RESOURCE"`;
}

function destroyCommand(): string {
  return `echo "$BERTH_ID $(pwd -P)" >> "$FUZZ_DIR/destroys"; rm -rf var; rm -f "$FUZZ_DIR/res/$BERTH_ID.$BERTH_RESOURCE"`;
}

function fails(flag: Fault, what: string): string {
  return `if [ -e "$FUZZ_DIR/${flag}" ]; then echo "${what} ${flag}" >> "$FUZZ_DIR/faults.log"; echo "injected ${flag}"; exit 1; fi`;
}

export function configText(config: WorldConfig, gate: GateCheck[] = config.gate): string {
  const lines = [
    "[repository]",
    `trunk = "${TRUNK}"`,
    "",
    "[worktree]",
    `port_span = ${config.portSpan}`,
    "",
  ];
  if (config.setupStep) {
    lines.push("[worktree.setup]", `steps = ['${fails("fail-setup", "setup")}']`, "");
  }
  for (const r of config.resources) {
    lines.push(
      `[worktree.resources.${r.name}]`,
      `create = '${fails("fail-create", "create")}; ${createCommand()}'`,
      `destroy = '${fails("fail-destroy", "destroy")}; ${destroyCommand()}'`,
      `gc = ${r.gc}`,
      `required = ${r.required}`,
      "",
    );
  }
  lines.push("[gate]", gateLine(gate), "");
  // Written only when it is not the default, so a batch-1 world's berth.toml is what it was.
  if (config.batch > 1) lines.push("[acceptance]", `batch = ${config.batch}`, "");
  return lines.join("\n");
}

export function randomConfig(rng: Prng): WorldConfig {
  const resources: WorldConfig["resources"] = [];
  const count = rng.weighted({ zero: 2, one: 5, two: 3 });
  if (count !== "zero") resources.push({ name: "db", gc: true, required: true });
  if (count === "two") {
    resources.push({ name: "cache", gc: !rng.chance(0.25), required: !rng.chance(0.3) });
  }
  const gate: GateCheck[] = [{ name: "fuzz", variant: 0, timeout: null }];
  if (rng.chance(0.15)) gate.push({ name: "extra", variant: 0, timeout: null });
  return {
    resources,
    setupStep: rng.chance(0.3),
    portSpan: rng.pick([3, 16, 2000]),
    gate,
    batch: 1,
  };
}

let template: TestRepo | null = null;

/**
 * Every sequence starts from a copy of one small repository (a README and a
 * shared file, two commits), made once per test file: copying files costs no
 * process, and fixed dates make the copies identical to fresh ones.
 */
function copyOfTemplate(): TestRepo {
  if (template === null) {
    const made = makeRepo();
    made.write("shared.txt", "shared line\n");
    made.commit("shared file");
    process.once("exit", () => made.cleanup());
    template = made;
  }
  const dir = makeTempDir("berth-fuzz-");
  const path = join(dir.path, "repo");
  cpSync(template.path, path, { recursive: true });
  return repoAt(path, dir);
}

let subRepo: TestRepo | null = null;

/** A small repository berths add as a submodule (made once per test file). */
export function submoduleSource(): string {
  if (subRepo === null) {
    const made = makeRepo();
    made.write("lib.txt", "lib line\n");
    made.commit("lib file");
    process.once("exit", () => made.cleanup());
    subRepo = made;
  }
  return subRepo.path;
}

/** The main checkout's own ignored files (under `var/`, which resource commands also use). */
export const MAIN_IGNORED: Record<string, string> = {
  "var/res-db": "the main checkout's own var/res-db\n",
  "var/cache/data.txt": "the main checkout's cache\n",
};

/** A file a sequence changed by hand and did not commit: its content, or null for a deletion. */
export type DirtyFiles = Map<string, string | null>;

export class World {
  readonly repo: TestRepo;
  readonly fuzzDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly place: SnapshotPlace;
  /** Uncommitted work made by hand, per checkout path. */
  readonly dirty = new Map<string, DirtyFiles>();
  readonly faults = new Set<Fault>();
  /** Ignored files made by hand, per checkout path (update must never overwrite them). */
  readonly ignored = new Map<string, Map<string, string>>();
  /** Checkouts with a merge left in progress by hand (MERGE_HEAD must survive every verb). */
  readonly merging = new Set<string>();
  /** Checkouts with a `git am` stopped half-way by hand: only a forced drop may remove them. */
  readonly patching = new Set<string>();
  /** Berths that hold a populated submodule. */
  readonly submodules = new Set<string>();
  /**
   * Commits made in a berth's submodule and in no other repository, each with
   * its repository: they outlive the checkout unless a forced drop discards them.
   */
  readonly nestedCommits = new Map<string, { berth: string; gitDir: string }>();
  /** The gate as declared now, and which definition each stretch of gate.log ran under. */
  gate: GateCheck[];
  readonly gateEras: { fromLine: number; key: string }[];
  /** The tip a person confirmed or approved for landing, per berth id (the queue's authority). */
  readonly authorized = new Map<string, string | null>();
  /** Berths granted "land when green" before they were submitted. */
  readonly grants = new Set<string>();
  /** How much of FUZZ_DIR/destroys the invariants have read. */
  destroysRead = 0;
  private counter = 0;
  private clockMinutes = 0;

  constructor(readonly config: WorldConfig) {
    this.repo = copyOfTemplate();
    // berth reads berth.toml from the main checkout; excluded, it leaves that checkout clean.
    this.repo.write("berth.toml", configText(config));
    // var/ and *.local are ignored in every checkout; the main checkout holds var/ content of its own.
    appendFileSync(join(this.repo.path, ".git", "info", "exclude"), "berth.toml\nvar/\n*.local\n");
    for (const [file, content] of Object.entries(MAIN_IGNORED)) {
      mkdirSync(dirname(join(this.repo.path, file)), { recursive: true });
      this.repo.write(file, content);
    }
    this.gate = config.gate.map((c) => ({ ...c }));
    this.gateEras = [{ fromLine: 0, key: JSON.stringify(this.gate) }];
    this.fuzzDir = join(this.repo.dir.path, "fuzz");
    mkdirSync(join(this.fuzzDir, "res"), { recursive: true });
    this.env = { ...this.repo.env, FUZZ_DIR: this.fuzzDir };
    this.place = {
      mainPath: this.repo.path,
      commonDir: join(this.repo.path, ".git"),
      resourceDir: join(this.fuzzDir, "res"),
      trunk: TRUNK,
      env: this.env,
    };
  }

  get mainPath(): string {
    return this.repo.path;
  }

  /** Commits never change, so the graph read for one snapshot serves every later one. */
  private readonly graph = new Map<string, string[]>();

  snapshot(): Snapshot {
    return takeSnapshot(this.place, this.graph);
  }

  next(): number {
    this.counter += 1;
    return this.counter;
  }

  git(cwd: string, args: string[]): string {
    return git(this.place, cwd, args);
  }

  /** A git command of a hand-made world change; its failure is part of the world, not a bug. */
  tryGit(cwd: string, args: string[]): boolean {
    try {
      execFileSync("git", args, { cwd, env: this.env, stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  }

  /** A hand change as one small shell script (one process to fork instead of several). */
  trySh(cwd: string, script: string, ...args: string[]): boolean {
    try {
      execFileSync("sh", ["-c", script, "sh", ...args], { cwd, env: this.env, stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  }

  /** git sees no change to `file` in the checkout at `path`. */
  isClean(path: string, file: string): boolean {
    return this.git(path, ["status", "--porcelain", "--", file]).trim() === "";
  }

  /** An in-process context: no terminal, captured streams, a clock that moves a minute per verb. */
  context(cwd: string): Context {
    this.clockMinutes += 1;
    const now = new Date(Date.UTC(2026, 5, 1, 12, this.clockMinutes));
    const sink = () =>
      new Writable({
        write(_chunk, _enc, done) {
          done();
        },
      });
    return {
      cwd,
      env: this.env,
      now: () => now,
      stdout: sink(),
      stderr: sink(),
      stdoutIsTTY: false,
      stderrIsTTY: false,
      stdinIsTTY: false,
      debug: false,
      journal: silentJournal,
    };
  }

  setFault(fault: Fault, on: boolean): void {
    const file = join(this.fuzzDir, fault);
    if (on) {
      writeFileSync(file, "");
      this.faults.add(fault);
    } else {
      rmSync(file, { force: true });
      this.faults.delete(fault);
    }
  }

  clearFaults(): void {
    for (const fault of [...this.faults]) this.setFault(fault, false);
  }

  dirtyOf(path: string): DirtyFiles {
    let files = this.dirty.get(path);
    if (!files) {
      files = new Map();
      this.dirty.set(path, files);
    }
    return files;
  }

  /** The checkout at `path` is gone: nothing of it is the model's to watch any more. */
  forget(path: string): void {
    this.dirty.delete(path);
    this.ignored.delete(path);
    this.merging.delete(path);
    this.patching.delete(path);
    this.submodules.delete(path);
  }

  /** The berth holds a submodule commit no other repository has. */
  hasNestedWork(path: string): boolean {
    return [...this.nestedCommits.values()].some((w) => w.berth === path);
  }

  /** The commit is still in the repository at `gitDir`. */
  commitExistsIn(gitDir: string, commit: string): boolean {
    return (
      existsSync(gitDir) &&
      this.tryGit(gitDir, [
        "--git-dir",
        gitDir,
        "--work-tree",
        gitDir,
        "cat-file",
        "-e",
        `${commit}^{commit}`,
      ])
    );
  }

  /** The checkout's git dir holds MERGE_HEAD (read from its `.git` file: no process). */
  mergeHeadExists(path: string): boolean {
    return existsSync(join(gitDirOf(path), "MERGE_HEAD"));
  }

  /** The checkout's git dir holds a stopped `git am` (rebase-apply/applying). */
  amStopped(path: string): boolean {
    return existsSync(join(gitDirOf(path), "rebase-apply", "applying"));
  }

  hasDirt(path: string): boolean {
    return (this.dirty.get(path)?.size ?? 0) > 0;
  }

  private gateLog(): string[][] {
    const file = join(this.fuzzDir, "gate.log");
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.includes(" "))
      .map((line) => line.split(" "));
  }

  /** Trees the `fuzz` check passed on (it logs only when green), under any definition. */
  provedTrees(): Set<string> {
    return new Set(this.gateLog().flatMap((f) => (f[2] === "fuzz" ? [f[1] as string] : [])));
  }

  /** Tree → the checks that passed on it under the gate definition declared now. */
  provedUnderCurrentGate(): Map<string, Set<string>> {
    const key = JSON.stringify(this.gate);
    const out = new Map<string, Set<string>>();
    this.gateLog().forEach((f, line) => {
      const era = this.gateEras.findLast((e) => e.fromLine <= line);
      if (era?.key !== key) return;
      const tree = f[1] as string;
      out.set(tree, (out.get(tree) ?? new Set()).add(f[2] as string));
    });
    return out;
  }

  /** Rewrites berth.toml in the main checkout with a new gate definition (a hand change). */
  redefineGate(gate: GateCheck[]): void {
    this.gate = gate;
    this.repo.write("berth.toml", configText(this.config, gate));
    this.gateEras.push({ fromLine: this.gateLog().length, key: JSON.stringify(gate) });
  }

  /** New "<id> <cwd>" lines of FUZZ_DIR/destroys since the last call. */
  newDestroys(): { id: string; cwd: string }[] {
    const file = join(this.fuzzDir, "destroys");
    if (!existsSync(file)) return [];
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    const fresh = lines.slice(this.destroysRead);
    this.destroysRead = lines.length;
    return fresh.map((line) => {
      const space = line.indexOf(" ");
      return { id: line.slice(0, space), cwd: line.slice(space + 1) };
    });
  }

  ignoredOf(path: string): Map<string, string> {
    let files = this.ignored.get(path);
    if (!files) {
      files = new Map();
      this.ignored.set(path, files);
    }
    return files;
  }

  /** Every file in the main checkout (tracked, untracked and ignored; .git left out), with its content. */
  mainFiles(): Map<string, string> {
    const out = new Map<string, string>();
    const walk = (dir: string, rel: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (rel === "" && entry.name === ".git") continue;
        const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
        const full = join(dir, entry.name);
        if (entry.isDirectory()) walk(full, name);
        else if (entry.isFile()) out.set(name, readFileSync(full, "latin1"));
        else out.set(name, "<not a file>");
      }
    };
    if (existsSync(this.mainPath)) walk(this.mainPath, "");
    return out;
  }

  portOf(id: string): number {
    return portFor(id, 41000, this.config.portSpan);
  }

  faultsInjected(): number {
    const file = join(this.fuzzDir, "faults.log");
    return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
  }

  cleanup(): void {
    this.repo.cleanup();
  }
}

/** A checkout's git dir, from its `.git` file (a linked worktree) or folder. */
function gitDirOf(path: string): string {
  try {
    const text = readFileSync(join(path, ".git"), "utf8").trim();
    return text.startsWith("gitdir: ") ? text.slice(8) : join(path, ".git");
  } catch {
    return join(path, ".git");
  }
}
