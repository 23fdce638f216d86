import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { type Context, silentJournal } from "../../src/context.js";
import { assertJsonOutput } from "./schemas.js";

/**
 * Real temporary git repositories, isolated from the user's git config:
 * no global or system config, a temporary HOME, fixed author and dates.
 */

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BERTH_BIN = join(PROJECT_ROOT, "dist", "cli.cjs");

export interface TempDir {
  path: string;
  home: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

export function isolatedEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // XDG_CACHE_HOME too: berth's code cache (load-core.cts) then lives in the temporary HOME.
    // NODE_EXTRA_CA_CERTS makes every Node process parse a certificate bundle at start-up
    // (~100 ms where a host sets it); the processes a test starts open no TLS connection.
    if (!/^(GIT_|BERTH_|XDG_CACHE_HOME$|NODE_EXTRA_CA_CERTS$)/.test(key)) env[key] = value;
  }
  return {
    ...env,
    HOME: home,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@example.com",
    GIT_COMMITTER_NAME: "Test Author",
    GIT_COMMITTER_EMAIL: "author@example.com",
    GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
    GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
    NO_COLOR: "1",
  };
}

export function makeTempDir(prefix = "berth-test-"): TempDir {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const home = join(path, "home");
  execFileSync("mkdir", ["-p", home]);
  return {
    path,
    home,
    env: isolatedEnv(home),
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
}

export interface TestRepo {
  /** The main checkout. */
  path: string;
  /** Folder holding the repo (and the default `<repo>.worktrees`). */
  dir: TempDir;
  env: NodeJS.ProcessEnv;
  git(args: string[], cwd?: string): string;
  /** Writes a file (relative to `cwd`, default the main checkout). */
  write(file: string, content: string, cwd?: string): void;
  /** Commits everything in `cwd` with a message; returns the new commit. */
  commit(message: string, cwd?: string): string;
  cleanup(): void;
}

export interface RepoOptions {
  name?: string;
  trunk?: string;
  /** berth.toml content, committed with the initial commit. */
  config?: string;
  /** Make no initial commit. */
  empty?: boolean;
  /** git's hash: SHA-1 unless asked (`git init --object-format`). */
  objectFormat?: "sha1" | "sha256";
}

export function makeRepo(options: RepoOptions = {}): TestRepo {
  const dir = makeTempDir();
  const path = join(dir.path, options.name ?? "repo");
  const format = `--object-format=${options.objectFormat ?? "sha1"}`;
  execFileSync("git", ["init", "-q", format, "-b", options.trunk ?? "main", path], {
    env: dir.env,
  });
  const repo = repoAt(path, dir);
  repo.git(["config", "gc.auto", "0"]);
  repo.git(["config", "commit.gpgsign", "false"]);
  if (!options.empty) {
    repo.write("README.md", "# test repo\n");
    if (options.config !== undefined) repo.write("berth.toml", options.config);
    repo.commit("initial commit");
  }
  return repo;
}

/**
 * A one-commit repository beside `r`'s (in its temporary folder), to add as a
 * submodule: its path. `file` holds `content`.
 */
export function makeSubmoduleOrigin(r: TestRepo, name: string, file = "f.txt", content = "one\n") {
  const origin = join(r.dir.path, name);
  r.git(["init", "-q", "-b", "main", origin]);
  r.write(file, content, origin);
  r.commit(name, origin);
  return origin;
}

/** `git submodule <args>` in `cwd`: from a local path, which git refuses by default since 2.38.1. */
export function submodule(r: TestRepo, args: string[], cwd?: string): string {
  return r.git(["-c", "protocol.file.allow=always", "submodule", ...args], cwd);
}

/** The helpers over a repository that already exists at `path` inside `dir`. */
export function repoAt(path: string, dir: TempDir): TestRepo {
  const env = dir.env;
  const git = (args: string[], cwd = path) =>
    execFileSync("git", args, {
      cwd,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).replace(/\n$/, "");
  return {
    path,
    dir,
    env,
    git,
    write: (file, content, cwd = path) => writeFileSync(join(cwd, file), content),
    commit: (message, cwd = path) => {
      git(["add", "-A"], cwd);
      git(["commit", "-q", "--allow-empty", "-m", message], cwd);
      return git(["rev-parse", "HEAD"], cwd);
    },
    cleanup: dir.cleanup,
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The parsed --json document, when stdout holds one. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read deep into the documented envelope.
  json: any;
}

/** Runs the built `berth` binary (end-to-end tier). */
export function runBerth(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  const child = spawn(process.execPath, [BERTH_BIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  child.stdin.end(options.input ?? "");
  return collectRun(child).finally(() => clearTimeout(timer));
}

/**
 * Everything a spawned berth printed, its exit code (128 when killed) and its
 * JSON, once it closes. A `--json` run's output is checked against the
 * published schemas (helpers/schemas.ts): a mismatch rejects, failing the test.
 */
export function collectRun(child: ChildProcess): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const args = child.spawnargs[1] === BERTH_BIN ? child.spawnargs.slice(2) : [];
      try {
        assertJsonOutput(args, stdout, code);
      } catch (error) {
        reject(error);
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolvePromise({ code: code ?? (signal ? 128 : -1), stdout, stderr, json });
    });
  });
}

/** A Context for in-process verb tests: fixed clock, captured streams, no terminal. */
export function testContext(cwd: string, env: NodeJS.ProcessEnv, now = "2026-06-01T12:00:00Z") {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk, _enc, done) {
        into.push(chunk.toString());
        done();
      },
    });
  const ctx: Context = {
    cwd,
    env,
    now: () => new Date(now),
    stdout: sink(out),
    stderr: sink(err),
    stdoutIsTTY: false,
    stderrIsTTY: false,
    stdinIsTTY: false,
    debug: false,
    journal: silentJournal,
  };
  return { ctx, stdout: () => out.join(""), stderr: () => err.join("") };
}
