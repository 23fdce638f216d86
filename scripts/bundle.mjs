// Runs after `tsc` (npm run build): bundles the commander wiring
// (dist/cli-run.js) and everything it imports into dist/chunks/cli-run.js plus
// shared chunks in dist/chunks/, keeping each verb's lazy `import()` a chunk of
// its own. The entry, dist/cli.js, is built apart from them, so that it
// imports nothing at all: `berth --version` is answered there by one small
// module with the version inlined (docs/performance.md, start-up). Node resolves and links ~50 ES
// modules for `berth status` otherwise, which costs tens of milliseconds at
// every start (docs/performance.md). Only the small packages on the start-up
// path are bundled; every other package (the desk's ink and react, the MCP
// SDK) stays an ordinary import from node_modules.
//
// dist/bundle-meta.json maps each output file back to the modules it holds,
// so tests can still prove what a verb loads.
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const BUNDLED_PACKAGES = new Set([
  "@commander-js/extra-typings",
  "commander",
  "picocolors",
  "smol-toml",
  "valibot",
]);

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
rmSync(join(dist, "chunks"), { recursive: true, force: true });

const packageName = (specifier) => {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
};

const result = await build({
  entryPoints: {
    "chunks/cli-run": join(dist, "cli-run.js"),
    // Imported by the entry for `berth status`, before the wiring (src/cli.ts).
    "chunks/status-reads": join(dist, "core", "fleet", "status-reads.js"),
  },
  outdir: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "chunks/[name]-[hash]",
  metafile: true,
  logLevel: "warning",
  // Bundled CommonJS packages (commander) call require() for node: builtins.
  banner: {
    js: "import { createRequire as __berthCreateRequire } from 'node:module'; const require = __berthCreateRequire(import.meta.url);",
  },
  plugins: [
    {
      name: "bundle-only-listed-packages",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith("node:")) return { path: args.path, external: true };
          return BUNDLED_PACKAGES.has(packageName(args.path))
            ? undefined
            : { path: args.path, external: true };
        });
      },
    },
  ],
});

// The entry: its lazy imports (the wiring, status's first reads) are the chunks above.
const entry = await build({
  entryPoints: [join(dist, "cli.js")],
  outfile: join(dist, "cli.js"),
  allowOverwrite: true,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  metafile: true,
  logLevel: "warning",
  plugins: [
    {
      name: "imports-are-the-bundled-chunks",
      setup(b) {
        b.onResolve({ filter: /^\.\// }, (args) =>
          args.path === "./version.js"
            ? undefined
            : { path: `./chunks/${args.path.split("/").pop()}`, external: true },
        );
      },
    },
  ],
});

const outputs = {};
for (const [file, output] of Object.entries(entry.metafile.outputs)) {
  outputs[relative(root, join(root, file))] = Object.keys(output.inputs);
}
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  outputs[relative(root, join(root, file))] = Object.keys(output.inputs);
}
writeFileSync(join(dist, "bundle-meta.json"), `${JSON.stringify({ outputs }, null, 2)}\n`);
