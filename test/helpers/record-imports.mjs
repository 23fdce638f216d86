// Loaded with `node --import`: records every module the process loads, so
// tests can prove what a verb does (and does not) load at start-up.
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";

const log = process.env.BERTH_TEST_IMPORT_LOG;
register(new URL("./record-imports-hooks.mjs", import.meta.url), { data: { log } });

// A require() from CommonJS (the entry, the core) passes no hook: recorded here, as a URL too.
const load = Module._load;
Module._load = function recordedLoad(request, parent, isMain) {
  const filename = Module._resolveFilename(request, parent, isMain);
  if (log && isAbsolute(filename)) appendFileSync(log, `${pathToFileURL(filename).href}\n`);
  return load.call(this, request, parent, isMain);
};
