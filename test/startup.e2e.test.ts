import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VERSION } from "../src/version.js";
import { loadedModules } from "./helpers/imports.js";
import { BERTH_BIN, makeRepo, PROJECT_ROOT, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("start-up", () => {
  it("--version matches package.json", () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
    expect(
      execFileSync(process.execPath, [BERTH_BIN, "--version"], { encoding: "utf8" }).trim(),
    ).toBe(VERSION);
  });

  it("berth --version loads the entry alone: no commander, program or verb code", () => {
    repo = makeRepo();
    for (const flag of ["--version", "-V"]) {
      const modules = loadedModules([flag], repo.path, repo.env);
      // The entry bundle holds the version and the core's loader; anything more is start-up cost (spec section 10).
      expect(modules.filter((m) => !m.startsWith("node:"))).toEqual([
        join(PROJECT_ROOT, "dist/version.js"),
        join(PROJECT_ROOT, "dist/load-core.cjs"),
        join(PROJECT_ROOT, "dist/cli.cjs"),
      ]);
    }
  });

  // scripts/bundle.mjs: status's whole path is one file, the core (decision 0060).
  const CORE = join(PROJECT_ROOT, "dist/chunks/core.cjs");
  const PARSER_CHUNK = /\/dist\/chunks\/cli-run-\w+\.js$/;
  const loadedFiles = (args: string[]) => {
    const at = repo ?? makeRepo();
    const files = loadedModules(args, at.path, at.env, 0, false);
    return [...new Set(files.filter((m) => !m.startsWith("node:")))];
  };
  const OTHER_VERBS = /\/dist\/(commands\/(?!status\.js|run-verb\.js|outcome\.js)|ui\/desk\/)/;
  const PACKAGES = /node_modules\/(ink|react|@modelcontextprotocol|zod)\//;

  it("berth status loads two files, the entry and the core: no parser, no other verb's code", () => {
    repo = makeRepo();
    for (const args of [["status"], ["status", "--json"], ["ls", "--all"], ["list", "--local"]]) {
      expect(loadedFiles(args)).toEqual([join(PROJECT_ROOT, "dist/cli.cjs"), CORE]);
    }
    const modules = loadedModules(["status", "--debug"], repo.path, repo.env);
    for (const held of ["commands/status.js", "core/fleet/status-reads.js", "cli-status.js"]) {
      expect(modules).toContain(join(PROJECT_ROOT, "dist", held));
    }
    // A plain status never needs commander or the declarations of every verb (cli-status.ts).
    expect(modules.filter((m) => m.includes("commander/") || m.endsWith("/program.js"))).toEqual(
      [],
    );
    // start, accept, desk, mcp, ... stay lazily loaded chunks; ink, react, the MCP SDK, zod too.
    expect(modules.filter((m) => OTHER_VERBS.test(m))).toEqual([]);
    expect(modules.filter((m) => PACKAGES.test(m))).toEqual([]);
  });

  it("berth --help loads the core and the parser, and no other verb or package", () => {
    repo = makeRepo();
    const files = loadedFiles(["--help"]);
    expect(files.slice(0, 2)).toEqual([join(PROJECT_ROOT, "dist/cli.cjs"), CORE]);
    // The parser's chunk, and the small chunks esbuild splits out of what it shares.
    expect(files.slice(2).filter((f) => PARSER_CHUNK.test(f))).toHaveLength(1);
    // Any other argument of status is the parser's: its help, its usage errors.
    expect(loadedFiles(["status", "--help"]).some((f) => PARSER_CHUNK.test(f))).toBe(true);
    const usage = loadedModules(["status", "--json", "--bogus"], repo.path, repo.env, 2, false);
    expect(usage.some((f) => PARSER_CHUNK.test(f))).toBe(true);
    const modules = loadedModules(["--help"], repo.path, repo.env);
    expect(modules.some((m) => m.includes("commander/"))).toBe(true);
    expect(modules.filter((m) => OTHER_VERBS.test(m))).toEqual([]);
    expect(modules.filter((m) => PACKAGES.test(m))).toEqual([]);
  });

  // Node's built-in modules a run has loaded, read at its exit by a CommonJS preload (no hook).
  const builtinsLoaded = (args: string[], at: TestRepo): string[] => {
    const preload = join(at.path, "..", "builtins-preload.cjs");
    const out = join(at.path, "..", `builtins-${args.join("-")}.log`);
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));`,
    );
    execFileSync(process.execPath, ["--require", preload, BERTH_BIN, ...args], {
      cwd: at.path,
      env: at.env,
      stdio: "ignore",
    });
    return readFileSync(out, "utf8").split("\n");
  };
  const ESM_LOADER = "NativeModule internal/modules/esm/loader";

  it("berth status and --version never start Node's ES module loader: the entry and the core are CommonJS", () => {
    repo = makeRepo();
    for (const args of [["status"], ["status", "--json"], ["--version"]]) {
      expect(builtinsLoaded(args, repo)).not.toContain(ESM_LOADER);
    }
    // The probe sees the loader where it is loaded: the parser's chunk is an ES module.
    expect(builtinsLoaded(["--help"], repo)).toContain(ESM_LOADER);
  });

  it("another verb loads its chunks beside the core, which it imports rather than copies", () => {
    repo = makeRepo();
    const files = loadedFiles(["start", "--dry-run", "x"]);
    expect(files.slice(0, 2)).toEqual([join(PROJECT_ROOT, "dist/cli.cjs"), CORE]);
    expect(files.length).toBeGreaterThan(2);
  });
});

describe("the bundle (scripts/bundle.mjs)", () => {
  const meta = JSON.parse(readFileSync(join(PROJECT_ROOT, "dist/bundle-meta.json"), "utf8")) as {
    outputs: Record<string, string[]>;
  };

  it("holds each module once: no second copy of its state or classes", () => {
    const holders = new Map<string, string[]>();
    for (const [file, inputs] of Object.entries(meta.outputs)) {
      for (const input of inputs) holders.set(input, [...(holders.get(input) ?? []), file]);
    }
    const twice = [...holders].filter(([, files]) => files.length > 1).map(([input]) => input);
    // The entry inlines the version, a constant, so that --version loads nothing else.
    expect(twice).toEqual(["dist/version.js"]);
    // Module-level state (status-reads' started reads, the crypto cache) and instanceof.
    for (const held of ["core/fleet/status-reads.js", "lazy-crypto.js", "errors.js"]) {
      expect(holders.get(`dist/${held}`)).toEqual(["dist/chunks/core.cjs"]);
    }
    expect(holders.get("dist/core/logbook/journal.js")).toHaveLength(1);
  });

  it("links: every chunk loads, and takes from the core only names the core exports", () => {
    const chunks = Object.keys(meta.outputs).filter((f) => f.startsWith("dist/chunks/"));
    const script = `for (const f of ${JSON.stringify(chunks)}) await import(${JSON.stringify(`${PROJECT_ROOT}/`)} + f);`;
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: PROJECT_ROOT });
    // A chunk requires the core (no ES import of a CommonJS file): a missing name would be undefined, not a link error.
    const core = createRequire(import.meta.url)(
      join(PROJECT_ROOT, "dist/chunks/core.cjs"),
    ) as object;
    const taken = chunks
      .filter((f) => f.endsWith(".js"))
      .flatMap((f) => {
        const text = readFileSync(join(PROJECT_ROOT, f), "utf8");
        expect(text).not.toMatch(/from\s*"\.\/core\.cjs"/);
        return [...text.matchAll(/const \{([^}]*)\} = require\("\.\/core\.cjs"\);/g)].flatMap(
          ([, list]) => (list ?? "").split(",").map((item) => item.split(":")[0]?.trim() ?? ""),
        );
      });
    expect(taken.length).toBeGreaterThan(100);
    expect(taken.filter((name) => !Object.hasOwn(core, name))).toEqual([]);
  });
});
