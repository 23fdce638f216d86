import fs = require("node:fs");
import os = require("node:os");
import path = require("node:path");
import vm = require("node:vm");

const {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} = fs;
const { basename, dirname, join } = path;

/**
 * Loads the core (dist/chunks/core.cjs) as `require` would, with V8's code
 * cache: compiling its ~240 KB, and the functions a run calls, is ~10 ms of
 * every start-up that a cached compilation skips (decision 0061). Node 20
 * has no compile cache of its own for CommonJS (`module.enableCompileCache`
 * is Node 22).
 *
 * The cache is a file in the user's cache folder, named by the core's digest
 * (fixed by the build: scripts/bundle.mjs), its size and time, and Node's
 * version, so a cache is only ever offered for the very bytes it came from;
 * V8 checks its own version and flags besides, and rejects a damaged file.
 * A missing, rejected or unwritable cache costs only the compilation: the run
 * goes on as without one.
 *
 * A cache holds the functions compiled by the run that wrote it, so only the
 * run it is for writes it: the caller calls `keepCache` on a plain status
 * (the start-up budget's run), once the core has said that it is one. A cache
 * written by `--help` held a third of status's functions and cost each later
 * status ~11 ms (docs/performance.md, start-up). It is written at exit, once,
 * after the run has compiled what it calls; other verbs only read it.
 */
function loadCore(coreFile: string, digest: string | null): LoadedCore {
  // require's own Module class, taken from a module: `node:module` would load Node's ES module
  // loader with it (decision 0060: a plain status never does).
  const Module = require.main?.constructor as typeof import("node:module") | undefined;
  if (Module === undefined || digest === null) {
    return { exports: require(coreFile), keepCache: nothingToKeep };
  }
  const source = readFileSync(coreFile, "utf8");
  const cacheFile = cacheFileFor(coreFile, digest);
  const cachedData = cacheFile === null ? undefined : readIfPresent(cacheFile);
  const script = new vm.Script(Module.wrap(source), {
    filename: coreFile,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  // Registered before it runs, as require does: a chunk's require of the core gets this module.
  const module = new Module(coreFile);
  module.filename = coreFile;
  require.cache[coreFile] = module;
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  try {
    run.call(
      module.exports,
      module.exports,
      Module.createRequire(coreFile),
      module,
      coreFile,
      dirname(coreFile),
    );
  } catch (error) {
    delete require.cache[coreFile];
    throw error;
  }
  module.loaded = true;
  const stale = cachedData === undefined || script.cachedDataRejected === true;
  return {
    exports: module.exports,
    keepCache: () => {
      if (cacheFile !== null && stale) process.once("exit", () => writeCache(cacheFile, script));
    },
  };
}

interface LoadedCore {
  exports: unknown;
  /** Writes this run's compilation as the cache at exit, unless the cache it read was taken. */
  keepCache: () => void;
}

/** Loaded without a cache (no digest, or no module class to build one with). */
function nothingToKeep(): void {
  // Nothing was compiled through vm.Script, so there is no cache to write.
}

const CACHE_PREFIX = "core-";

function cacheFileFor(coreFile: string, digest: string): string | null {
  const home = os.homedir();
  const base = process.env.XDG_CACHE_HOME || (home === "" ? "" : join(home, ".cache"));
  if (base === "") return null;
  const { size, mtimeMs } = statSync(coreFile);
  const name = `${CACHE_PREFIX}${digest}-${size}-${Math.trunc(mtimeMs)}-${process.version}.v8`;
  return join(base, "berth", name);
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Written whole under a name of its own, then renamed: a reader never sees half a file. */
function writeCache(cacheFile: string, script: vm.Script): void {
  try {
    const folder = dirname(cacheFile);
    makeFolders(folder);
    const partial = `${cacheFile}.${process.pid}.partial`;
    writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
    renameSync(partial, cacheFile);
    // A cache of another build (or another copy of this one) is never offered again.
    for (const name of readdirSync(folder)) {
      if (name.startsWith(CACHE_PREFIX) && name !== basename(cacheFile))
        unlinkSync(join(folder, name));
    }
  } catch {
    // A cache is only ever a saving: a folder berth cannot write costs the next run its compilation.
  }
}
/**
 * `folder` and each missing folder above it, one `mkdir` each, walking up no
 * further than the first that exists. Not `mkdirSync(…, { recursive: true })`:
 * under a special file system (an XDG_CACHE_HOME in /proc) Node's recursive
 * mkdir retries forever, and the run would never exit.
 */
function makeFolders(folder: string): void {
  const missing: string[] = [];
  for (let at = folder; !existsSync(at) && dirname(at) !== at; at = dirname(at))
    missing.unshift(at);
  for (const dir of missing) mkdirSync(dir, { mode: 0o700 });
}

export = { loadCore };
