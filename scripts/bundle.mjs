// Runs after `tsc` (npm run build). Three parts (decision 0060, "one file for status"):
//
// - dist/cli.cjs, the entry, imports nothing: `berth --version` is answered
//   there by one small module with the version inlined.
// - dist/chunks/core.cjs, the core: ONE file holding run-verb, a plain
//   `status` (cli-status.ts) and everything it reads and renders. Node
//   resolves, reads and compiles each file apart, and ~40 chunks on status's
//   path cost tens of milliseconds (docs/performance.md, start-up). The
//   entry and the core are CommonJS: the first ES module a process loads
//   brings Node's module loader with it, another ~10 ms.
// - every other verb, the parser (cli-run.ts: commander and the declarations),
//   the desk, MCP, ...: lazily loaded chunks, split as before, importing
//   whatever the core already holds FROM the core, so that no module has two
//   copies (their state, their classes for `instanceof`). The core re-exports
//   just those bindings, under prefixed names; a chunk requires it (step 4b)
//   and gets the very module the entry loaded (Node keeps one per file).
//
// Only the small packages on the start-up path are bundled; every other
// package (the desk's ink and react, the MCP SDK, zod) stays an ordinary
// import from node_modules. dist/bundle-meta.json maps each output file back
// to the modules it holds, so tests can still prove what a verb loads.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const BUNDLED_PACKAGES = new Set([
  "@commander-js/extra-typings",
  "commander",
  "picocolors",
  "smol-toml",
  "valibot",
]);
// The lazy imports that the core inlines (bundled into it, not chunks of their own).
const CORE_LAZY = new Set([
  "cli-status.js",
  "commands/run-verb.js",
  "commands/status.js",
  "core/fleet/status-reads.js",
]);
const CORE_FILE = "./core.cjs"; // as the chunks beside it import it
// The parser, a chunk of its own that the entry imports for every verb but a plain status.
const PARSER = "cli-run.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
rmSync(join(dist, "chunks"), { recursive: true, force: true });
const abs = (file) => (isAbsolute(file) ? file : resolve(root, file));

const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  metafile: true,
  logLevel: "warning",
  // Bundled CommonJS packages (commander) call require() for node: builtins.
  banner: {
    js: "import { createRequire as __berthCreateRequire } from 'node:module'; const require = __berthCreateRequire(import.meta.url);",
  },
};
const packageName = (specifier) => {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
};
const onlyListedPackages = (b) =>
  b.onResolve({ filter: /^[^./]/ }, (args) => {
    if (args.path.startsWith("node:")) return { path: args.path, external: true };
    return BUNDLED_PACKAGES.has(packageName(args.path))
      ? undefined
      : { path: args.path, external: true };
  });

/**
 * The core's source, virtual: `exported` maps each module to the [name, alias]
 * pairs the chunks import from it; cli-status's exports are for the entry.
 */
function coreFacade(exported) {
  const lines = [];
  for (const file of CORE_LAZY) lines.push(`export * from ${JSON.stringify(join(dist, file))};`);
  for (const [file, names] of exported) {
    const list = names.map(([name, alias]) => `${name} as ${alias}`).join(", ");
    lines.push(`export { ${list} } from ${JSON.stringify(file)};`);
  }
  return lines.join("\n");
}

// The core's lazy imports go through dist/chunks/import-chunk.cjs (src/import-chunk.cts): the
// core may be compiled where an import() has no module loader (load-core.cts, its code cache).
const LAZY_MARK = "berth-lazy-chunk:";
const IMPORT_CHUNK = "import-chunk.cjs";
const CORE_BANNER = `const __berthImportChunk = (chunk) => require("./${IMPORT_CHUNK}")(require("node:path").join(__dirname, chunk));`;
function routeLazyImports(text) {
  const routed = text.replaceAll(`import("${LAZY_MARK}`, '__berthImportChunk("');
  if (/\bimport\(/.test(routed))
    throw new Error("the core holds an import() not routed through its chunk importer");
  return routed;
}

/** Builds the core; a dynamic import outside CORE_LAZY goes to the chunk importer, for `lazyPath(file)`. */
function buildCore(exported, lazyPath, write) {
  const lazy = new Set();
  return build({
    ...common,
    format: "cjs",
    banner: { js: CORE_BANNER },
    stdin: { contents: coreFacade(exported), resolveDir: dist, sourcefile: "core-facade.js" },
    outfile: join(dist, "chunks", "core.cjs"),
    write: false,
    plugins: [
      {
        name: "core",
        setup(b) {
          onlyListedPackages(b);
          b.onResolve({ filter: /^\./ }, (args) => {
            if (args.kind !== "dynamic-import") return undefined;
            const file = resolve(args.resolveDir, args.path);
            if (CORE_LAZY.has(relative(dist, file))) return undefined;
            lazy.add(file);
            return { path: `${LAZY_MARK}${lazyPath(file)}`, external: true };
          });
        },
      },
    ],
  }).then((result) => {
    if (write) {
      for (const { path, text } of result.outputFiles) writeFileSync(path, routeLazyImports(text));
      copyFileSync(join(dist, IMPORT_CHUNK), join(dist, "chunks", IMPORT_CHUNK));
    }
    return { result, lazy };
  });
}

// 1. Which modules the core holds, and which lazy imports leave it.
const probe = await buildCore([], (file) => file, false);
const coreModules = new Set(
  Object.keys(probe.result.metafile.inputs)
    .filter((input) => !input.startsWith("<stdin>") && !input.includes("core-facade"))
    .map(abs),
);

// 2. Each core module's export names (bundle: false reads one file's syntax).
const names = await build({
  entryPoints: [...coreModules].filter((file) => !file.endsWith(".cjs")),
  bundle: false,
  write: false,
  metafile: true,
  outdir: join(dist, "names-unwritten"), // write: false: only the metafile
  outbase: root,
  format: "esm",
  logLevel: "silent",
});
const exportsOf = new Map();
for (const output of Object.values(names.metafile.outputs)) {
  if (output.entryPoint) exportsOf.set(abs(output.entryPoint), output.exports);
}
// `export *` drops a name two of them share: the lazy import would then find nothing.
const selfExported = [...CORE_LAZY].flatMap((f) => exportsOf.get(join(dist, f)) ?? []);
if (new Set(selfExported).size !== selfExported.length) {
  throw new Error(`the core's own lazy modules export a name twice: ${selfExported.join(", ")}`);
}
const moduleIds = new Map([...coreModules].map((file, i) => [file, `m${i}`]));
const alias = (file, name) => `${moduleIds.get(file)}$${name}`;

// 3. The lazy chunks: a core module resolves to a shim re-exporting it from the core.
// esbuild keeps every name a shim re-exports from an external file, used or not,
// so a first pass (`only` null) finds the names the chunks use, and the second
// re-exports just those: the core then exports, and keeps, only what is used.
const buildLazy = (only, write) =>
  build({
    ...common,
    entryPoints: [...probe.lazy, join(dist, PARSER)],
    outdir: dist,
    outbase: dist,
    splitting: true,
    write,
    entryNames: "chunks/[name]-[hash]",
    chunkNames: "chunks/[name]-[hash]",
    plugins: [
      {
        name: "the-core-is-imported",
        setup(b) {
          onlyListedPackages(b);
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (args.namespace === "core-shim") return { path: CORE_FILE, external: true };
            if (args.pluginData === "inner" || args.kind === "entry-point") return undefined;
            const found = await b.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              importer: args.importer,
              pluginData: "inner",
            });
            if (found.errors.length > 0 || found.external)
              return found.external ? found : undefined;
            return coreModules.has(found.path)
              ? // One shim per importer, in the importer's chunk: a shared one made
                // esbuild import every name of `import * as v from "valibot"`.
                // (Paths relative: esbuild prints them in the chunks, which ship.)
                {
                  path: relative(root, found.path),
                  namespace: "core-shim",
                  suffix: `?${relative(root, args.importer)}`,
                }
              : { path: found.path };
          });
          b.onLoad({ filter: /.*/, namespace: "core-shim" }, (args) => {
            const file = abs(args.path);
            const list = (exportsOf.get(file) ?? [])
              .filter((name) => only === null || only.has(alias(file, name)))
              .map((name) => `${alias(file, name)} as ${name}`);
            return { contents: `export { ${list.join(", ")} } from "${CORE_FILE}";`, loader: "js" };
          });
        },
      },
    ],
  });

// 4. The bindings the chunks use from the core: the only ones it must export.
const CORE_IMPORT = /(import|export)\s*\{([^}]*)\}\s*from\s*"\.\/core\.cjs";?/g;
const usedAliases = (outputFiles) => {
  const used = new Set();
  for (const { path, text } of outputFiles) {
    if (!path.endsWith(".js")) continue;
    if (/import\s*\*\s*as\s+\w+\s+from\s*"\.\/core\.cjs"/.test(text)) {
      throw new Error(`${path} imports the core's namespace; name its bindings instead`);
    }
    const rest = text.replace(CORE_IMPORT, "");
    for (const [, kind, list] of text.matchAll(CORE_IMPORT)) {
      for (const item of list
        .split(",")
        .map((i) => i.trim())
        .filter(Boolean)) {
        const [name, , local = name] = item.split(/\s+/);
        const mention = new RegExp(`(?<![\\w$])${local.replace(/\$/g, "\\$")}(?![\\w$])`);
        if (kind === "export" || mention.test(rest)) used.add(name);
      }
    }
  }
  return used;
};
const wanted = usedAliases((await buildLazy(null, false)).outputFiles);
const lazy = await buildLazy(wanted, false);
const exported = [...coreModules]
  .map((file) => [
    file,
    (exportsOf.get(file) ?? []).map((n) => [n, alias(file, n)]).filter(([, a]) => wanted.has(a)),
  ])
  .filter(([, list]) => list.length > 0);

// 4b. Each chunk requires the core rather than importing it. An ES module importing a CommonJS
// file makes Node parse that file for its export names, ~40 ms for the core on every verb but
// status; a require() of the core, already loaded, costs nothing (`require` is the banner's).
// A name is then looked up, not linked, so the build checks each against the core's exports.
const coreExports = new Set(exported.flatMap(([, list]) => list.map(([, a]) => a)));
function requireTheCore(path, text) {
  return text.replace(CORE_IMPORT, (_, kind, list) => {
    if (kind === "export") throw new Error(`${path} re-exports from the core; import, then export`);
    const bindings = list
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean)
      .map((item) => {
        const [name, , local = name] = item.split(/\s+/);
        if (!coreExports.has(name)) throw new Error(`${path} imports ${name}: the core lacks it`);
        return name === local ? name : `${name}: ${local}`;
      });
    return `const { ${bindings.join(", ")} } = require(${JSON.stringify(CORE_FILE)});`;
  });
}
mkdirSync(join(dist, "chunks"), { recursive: true });
for (const { path, text } of lazy.outputFiles) writeFileSync(path, requireTheCore(path, text));

// 5. The core, importing each lazy chunk by its output's name.
const chunkOf = new Map();
for (const [file, output] of Object.entries(lazy.metafile.outputs)) {
  if (output.entryPoint) chunkOf.set(abs(output.entryPoint), `./${basename(file)}`);
}
const core = await buildCore(exported, (file) => chunkOf.get(file) ?? missing(file), true);
function missing(file) {
  throw new Error(`no chunk for the lazy import of ${file}`);
}

// 6. The entry: it loads the core (load-core.cts: a plain status) and imports the parser's chunk.
// The core's digest names its code cache (load-core.cts): a cache is offered only for these bytes.
const parserChunk = `./chunks/${basename(chunkOf.get(join(dist, PARSER)) ?? missing(PARSER))}`;
const coreDigest = createHash("sha256")
  .update(readFileSync(join(dist, "chunks", "core.cjs")))
  .digest("hex")
  .slice(0, 20);
const ENTRY_BUNDLES = new Set(["./version.js", "./load-core.cjs"]);
const entry = await build({
  ...common,
  format: "cjs",
  banner: undefined,
  entryPoints: [join(dist, "cli.cjs")],
  outfile: join(dist, "cli.cjs"),
  allowOverwrite: true,
  define: { BERTH_CORE_DIGEST: JSON.stringify(coreDigest) },
  plugins: [
    {
      name: "the-parser-is-a-chunk",
      setup(b) {
        b.onResolve({ filter: /^\.\// }, (args) => {
          if (ENTRY_BUNDLES.has(args.path)) return undefined;
          if (args.path === `./${PARSER}`) return { path: parserChunk, external: true };
          throw new Error(
            `the entry imports ${args.path}: only ${[...ENTRY_BUNDLES]} and the parser`,
          );
        });
      },
    },
  ],
});

// bundle-meta.json; and no module may sit in two outputs (two copies of its state).
const outputs = {};
const holder = new Map();
for (const build of [entry, core.result, lazy]) {
  for (const [file, output] of Object.entries(build.metafile.outputs)) {
    if (!/\.c?js$/.test(file)) continue;
    const inputs = Object.keys(output.inputs).filter(
      (i) => !/^(core-shim:|<stdin>)/.test(i) && !i.includes("core-facade"),
    );
    outputs[relative(root, abs(file))] = inputs.map((i) => relative(root, abs(i)));
    for (const input of inputs) {
      const other = holder.get(abs(input));
      // The entry's own copy of version.js is a constant, inlined by design.
      if (other !== undefined && !input.endsWith("version.js")) {
        throw new Error(`${input} is bundled into both ${other} and ${file}`);
      }
      holder.set(abs(input), file);
    }
  }
}
writeFileSync(join(dist, "bundle-meta.json"), `${JSON.stringify({ outputs }, null, 2)}\n`);
