import url = require("node:url");

/**
 * Imports one of the core's lazy chunks, an ES module, for the core. The core
 * may be compiled by load-core.cts, where Node 20 gives an `import()` no
 * module loader without an experimental flag; an `import()` in this file,
 * compiled by Node's own loader, always has one (scripts/bundle.mjs routes the
 * core's lazy imports here).
 */
function importChunk(file: string): Promise<unknown> {
  return import(url.pathToFileURL(file).href);
}

export = importChunk;
