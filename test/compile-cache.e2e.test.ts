import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BERTH_BIN, makeRepo, PROJECT_ROOT, runBerth, type TestRepo } from "./helpers/repo.js";

// The core's code cache (src/load-core.cts, decision 0061): a saving, never a change in what runs.
let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const run = (at: TestRepo, args: string[], env: NodeJS.ProcessEnv = at.env) =>
  runBerth(args, { cwd: at.path, env });
const cacheFolder = (at: TestRepo) => join(at.dir.home, ".cache", "berth");
const caches = (folder: string) => readdirSync(folder).filter((name) => name.endsWith(".v8"));

describe("the core's code cache", () => {
  it("is written by the first run, in the user's cache folder, and taken as it is by the next", async () => {
    repo = makeRepo();
    const first = await run(repo, ["status", "--json"]);
    expect(first.code).toBe(0);
    const folder = cacheFolder(repo);
    const [name, ...others] = caches(folder);
    expect(others).toEqual([]);
    expect(name).toMatch(/^core-[0-9a-f]{20}-\d+-\d+-v\d+\.\d+\.\d+\.v8$/);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const file = join(folder, name as string);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = statSync(file);
    expect(written.size).toBeGreaterThan(10_000);
    // A cache V8 takes is not written again: a rejected one would be.
    const second = await run(repo, ["status", "--json"]);
    expect([second.code, second.stderr]).toEqual([first.code, first.stderr]);
    expect(JSON.parse(second.stdout).data).toEqual(JSON.parse(first.stdout).data);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
    expect(caches(folder)).toEqual([name]);
  });

  it("is written only by a plain status, the run it is for; other verbs only read it", async () => {
    repo = makeRepo();
    // A cache holds what its writer compiled: one from --help cost each status ~11 ms.
    for (const args of [["--help"], ["gate", "--json"], ["status", "--local", "--remote"]]) {
      await run(repo, args);
      expect(readdirSync(repo.dir.home), args.join(" ")).not.toContain(".cache");
    }
    await run(repo, ["ls"]);
    const [name] = caches(cacheFolder(repo));
    const written = statSync(join(cacheFolder(repo), name as string));
    await run(repo, ["--help"]);
    expect(statSync(join(cacheFolder(repo), name as string)).mtimeMs).toBe(written.mtimeMs);
  });

  it("leaves verbs that load chunks working from a cached core: its lazy imports still load", async () => {
    repo = makeRepo();
    await run(repo, ["status"]);
    expect(caches(cacheFolder(repo))).toHaveLength(1);
    // gate records itself in the logbook, whose code is a lazy chunk of the core.
    const gate = await run(repo, ["gate", "--json"]);
    expect(gate.stderr).toBe("");
    expect(JSON.parse(gate.stdout).ok).toBe(true);
    const logbook = await run(repo, ["logbook", "--json"]);
    expect(logbook.stdout).toContain('"verb":"gate"');
    expect((await run(repo, ["--help"])).stdout).toContain("Usage: berth");
  });

  it("is never offered for other bytes: a core edited to the same length runs as edited", async () => {
    repo = makeRepo();
    // A copy of the built tool, so that its core can be edited.
    const copy = join(repo.dir.path, "tool");
    cpSync(join(PROJECT_ROOT, "dist", "chunks"), join(copy, "chunks"), { recursive: true });
    cpSync(BERTH_BIN, join(copy, "cli.cjs"));
    const status = () =>
      spawnSync(process.execPath, [join(copy, "cli.cjs"), "status"], {
        cwd: repo?.path,
        env: repo?.env,
        encoding: "utf8",
      }).stdout;
    expect(status()).toContain(" at ");
    expect(caches(cacheFolder(repo))).toHaveLength(1);
    const core = join(copy, "chunks", "core.cjs");
    const source = readFileSync(core, "utf8");
    const edited = source.replace("` at ${shortOid(", "` AT ${shortOid(");
    expect(edited.length).toBe(source.length);
    expect(edited).not.toBe(source);
    writeFileSync(core, edited);
    // V8 checks a cache against its source's length only: the cache's name holds the file's time.
    utimesSync(core, new Date(), new Date(Date.now() + 5_000));
    expect(status()).toContain(" AT ");
    expect(status()).toContain(" AT ");
  });

  it("replaces a damaged cache, and the run is the same as without one", async () => {
    repo = makeRepo();
    const clean = await run(repo, ["status", "--json"]);
    const folder = cacheFolder(repo);
    const file = join(folder, caches(folder)[0] as string);
    writeFileSync(file, Buffer.alloc(4096, 7));
    const damaged = await run(repo, ["status", "--json"]);
    expect([damaged.code, damaged.stderr]).toEqual([0, ""]);
    expect(JSON.parse(damaged.stdout).data).toEqual(JSON.parse(clean.stdout).data);
    expect(readFileSync(file).equals(Buffer.alloc(4096, 7))).toBe(false);
  });

  it("removes the caches of other builds when it writes its own", async () => {
    repo = makeRepo();
    await run(repo, ["status"]);
    const folder = cacheFolder(repo);
    const [own] = caches(folder);
    const stale = join(folder, "core-00000000000000000000-1-1-v20.0.0.v8");
    writeFileSync(stale, "old");
    writeFileSync(join(folder, own as string), "damaged");
    await run(repo, ["status"]);
    expect(caches(folder)).toEqual([own]);
  });

  it("never fails a run where the cache folder cannot be made, and XDG_CACHE_HOME names it", async () => {
    repo = makeRepo();
    const blocked = join(repo.dir.home, "not-a-folder");
    writeFileSync(blocked, "");
    const result = await run(repo, ["status", "--json"], { ...repo.env, XDG_CACHE_HOME: blocked });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(readdirSync(repo.dir.home)).not.toContain(".cache");
    const chosen = join(repo.dir.home, "chosen");
    expect((await run(repo, ["status"], { ...repo.env, XDG_CACHE_HOME: chosen })).code).toBe(0);
    expect(caches(join(chosen, "berth"))).toHaveLength(1);
    // --version loads no core, so it writes no cache.
    execFileSync(process.execPath, [BERTH_BIN, "--version"], {
      cwd: repo.path,
      env: { ...repo.env, XDG_CACHE_HOME: join(repo.dir.home, "version-only") },
    });
    expect(readdirSync(repo.dir.home)).not.toContain("version-only");
  });

  it("exits where Node's recursive mkdir would retry forever (a cache folder under /proc), and makes missing levels private", () => {
    repo = makeRepo();
    const r = repo;
    const status = (cacheHome: string) =>
      spawnSync(process.execPath, [BERTH_BIN, "status", "--json"], {
        cwd: r.path,
        env: { ...r.env, XDG_CACHE_HOME: cacheHome },
        encoding: "utf8",
        timeout: 30_000,
      });
    const underProc = status("/proc/no-such-folder/cache");
    expect(underProc.error).toBeUndefined(); // not killed by the timeout
    expect([underProc.status, underProc.stderr]).toEqual([0, ""]);

    const nested = join(r.dir.home, "a", "b");
    expect(status(nested).status).toBe(0);
    expect(caches(join(nested, "berth"))).toHaveLength(1);
    for (const folder of [join(r.dir.home, "a"), nested, join(nested, "berth")]) {
      expect(statSync(folder).mode & 0o777).toBe(0o700);
    }
  });
});
