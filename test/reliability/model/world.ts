import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
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
}

export type Fault = "fail-destroy" | "fail-create" | "fail-setup";

/** The gate check: red while the tree holds FAIL; green runs log "<commit> <tree>". */
const GATE_CHECK = `if [ -e FAIL ]; then echo "FAIL is present"; exit 1; fi; echo $(git rev-parse HEAD HEAD^{tree}) >> "$FUZZ_DIR/gate.log"`;

function fails(flag: Fault, what: string): string {
  return `if [ -e "$FUZZ_DIR/${flag}" ]; then echo "${what} ${flag}" >> "$FUZZ_DIR/faults.log"; echo "injected ${flag}"; exit 1; fi`;
}

export function configText(config: WorldConfig): string {
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
      `create = '${fails("fail-create", "create")}; touch "$FUZZ_DIR/res/$BERTH_ID.$BERTH_RESOURCE"'`,
      `destroy = '${fails("fail-destroy", "destroy")}; rm -f "$FUZZ_DIR/res/$BERTH_ID.$BERTH_RESOURCE"'`,
      `gc = ${r.gc}`,
      `required = ${r.required}`,
      "",
    );
  }
  lines.push("[gate]", `checks = [{ name = "fuzz", run = '${GATE_CHECK}' }]`, "");
  return lines.join("\n");
}

export function randomConfig(rng: Prng): WorldConfig {
  const resources: WorldConfig["resources"] = [];
  const count = rng.weighted({ zero: 2, one: 5, two: 3 });
  if (count !== "zero") resources.push({ name: "db", gc: true, required: true });
  if (count === "two") {
    resources.push({ name: "cache", gc: !rng.chance(0.25), required: !rng.chance(0.3) });
  }
  return { resources, setupStep: rng.chance(0.3), portSpan: rng.pick([3, 16, 2000]) };
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
  private counter = 0;
  private clockMinutes = 0;

  constructor(readonly config: WorldConfig) {
    this.repo = copyOfTemplate();
    // berth reads berth.toml from the main checkout; excluded, it leaves that checkout clean.
    this.repo.write("berth.toml", configText(config));
    appendFileSync(join(this.repo.path, ".git", "info", "exclude"), "berth.toml\n");
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

  hasDirt(path: string): boolean {
    return (this.dirty.get(path)?.size ?? 0) > 0;
  }

  /** Trees the gate check passed on (it logs only when green). */
  provedTrees(): Set<string> {
    const file = join(this.fuzzDir, "gate.log");
    if (!existsSync(file)) return new Set();
    return new Set(
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line) => (line.includes(" ") ? [line.split(" ")[1] as string] : [])),
    );
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
