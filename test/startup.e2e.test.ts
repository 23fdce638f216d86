import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { VERSION } from "../src/version.js";
import { BERTH_BIN, makeRepo, PROJECT_ROOT, type TestRepo } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/**
 * The modules a run loads. dist/cli.js is a bundle (scripts/bundle.mjs): each
 * loaded bundle file stands for the modules dist/bundle-meta.json says it
 * holds, so these checks see through the bundling to the code itself.
 */
function loadedModules(args: string[], cwd: string, env: NodeJS.ProcessEnv): string[] {
  const log = join(cwd, "..", `imports-${args.join("-")}.log`);
  execFileSync(
    process.execPath,
    ["--import", join(PROJECT_ROOT, "test/helpers/record-imports.mjs"), BERTH_BIN, ...args],
    { cwd, env: { ...env, BERTH_TEST_IMPORT_LOG: log }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const meta = JSON.parse(readFileSync(join(PROJECT_ROOT, "dist/bundle-meta.json"), "utf8")) as {
    outputs: Record<string, string[]>;
  };
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((url) => {
      if (!url.startsWith("file:")) return [url];
      const path = fileURLToPath(url);
      const inputs = meta.outputs[relative(PROJECT_ROOT, path)];
      return inputs === undefined ? [path] : inputs.map((input) => resolve(PROJECT_ROOT, input));
    });
}

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

  it.each([["--version"], ["--help"]])(
    "berth %s loads no verb, ink, react or MCP module",
    (flag) => {
      repo = makeRepo();
      const modules = loadedModules([flag], repo.path, repo.env);
      expect(modules.some((m) => m.endsWith("/dist/cli.js"))).toBe(true);
      expect(modules.some((m) => m.includes("commander/"))).toBe(true);
      expect(modules.filter((m) => /\/dist\/(core|commands|git|io)\//.test(m))).toEqual([]);
      expect(
        modules.filter((m) => /node_modules\/(ink|react|@modelcontextprotocol)\//.test(m)),
      ).toEqual([]);
    },
  );

  it("berth status loads no ink, react or MCP module", () => {
    repo = makeRepo();
    const modules = loadedModules(["status"], repo.path, repo.env);
    expect(modules.some((m) => m.includes("/dist/commands/status.js"))).toBe(true);
    expect(
      modules.filter((m) => /node_modules\/(ink|react|@modelcontextprotocol)\//.test(m)),
    ).toEqual([]);
  });
});
