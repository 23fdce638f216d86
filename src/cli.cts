#!/usr/bin/env node

/**
 * The entry point, and CommonJS on purpose: an ES module entry makes Node load
 * its module loader first, ~10 ms of a plain status's start-up; the core is
 * CommonJS for the same reason (decision 0060, scripts/bundle.mjs). Only the
 * lazily loaded chunks beyond it are ES modules.
 *
 * `berth --version` is answered here, before anything else is loaded:
 * compiling the rest costs tens of milliseconds, more than the whole budget
 * for it (spec section 10). A plain `berth status` runs from cli-status.ts
 * without loading the parser; it starts its git processes first, so that they
 * run while the verb is set up. Everything else is parsed by cli-run.ts
 * (bundled: cli-status is in the core file, cli-run a chunk of its own). The
 * core is loaded by load-core.cts, from V8's code cache once a plain status
 * has written one (decision 0061).
 */
const { VERSION } = require("./version.js") as typeof import("./version.js");

/** The core's digest, written in by the bundle (scripts/bundle.mjs): it names the core's code cache. */
declare const BERTH_CORE_DIGEST: string | undefined;

const args = process.argv.slice(2);

/**
 * Variables that point git at one repository, index or object store, whatever
 * folder it runs in: set by git for its hooks (GIT_DIR, GIT_INDEX_FILE) and by
 * `git --git-dir=...`. berth runs git in every checkout of the fleet and runs
 * project commands in berths, so one inherited GIT_DIR would make each of
 * them read or write that repository instead of its own. berth's repository
 * is its folder's (decision 0067); user-wide settings (`git -c`) stay.
 */
for (const name of [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_IMPLICIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_SHALLOW_FILE",
  "GIT_GRAFT_FILE",
  "GIT_PREFIX",
  "GIT_INTERNAL_SUPER_PREFIX",
]) {
  delete process.env[name];
}

if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // What commander printed for it, and its exit: 0, even if the reader has gone.
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
} else {
  const { join } = require("node:path") as typeof import("node:path");
  const { loadCore } = require("./load-core.cjs") as typeof import("./load-core.cjs");
  const core = join(__dirname, "chunks", "core.cjs");
  const digest = typeof BERTH_CORE_DIGEST === "string" ? BERTH_CORE_DIGEST : null;
  const loaded = loadCore(core, digest);
  const { plainStatusOptions, runPlainStatus } = loaded.exports as typeof import("./cli-status.js");
  const status = plainStatusOptions(args);
  if (status !== null) {
    // The cache is made by the run it is for (load-core.cts).
    loaded.keepCache();
    void runPlainStatus(status);
  } else {
    void import("./cli-run.js").then(({ main }) => main(process.argv));
  }
}
