// Loaded with `node --import`: records every module the process loads, so
// tests can prove what a verb does (and does not) load at start-up.
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";

const log = process.env.BERTH_TEST_IMPORT_LOG;
register(new URL("./record-imports-hooks.mjs", import.meta.url), { data: { log } });

// A CommonJS module (the entry, the core) passes no hook: it is recorded as it enters
// require's cache, which both require and the entry's core loader (load-core.cts) fill.
Module._cache = new Proxy(Module._cache, {
  set(cache, filename, module) {
    if (log && typeof filename === "string" && isAbsolute(filename) && !(filename in cache)) {
      appendFileSync(log, `${pathToFileURL(filename).href}\n`);
    }
    cache[filename] = module;
    return true;
  },
});
