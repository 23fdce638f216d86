import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
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
      // The entry bundle holds the version; anything more is start-up cost (spec section 10).
      expect(modules.filter((m) => !m.startsWith("node:"))).toEqual([
        join(PROJECT_ROOT, "dist/version.js"),
        join(PROJECT_ROOT, "dist/cli.js"),
      ]);
    }
  });

  it("berth --help loads no verb, ink, react or MCP module", () => {
    repo = makeRepo();
    const modules = loadedModules(["--help"], repo.path, repo.env);
    expect(modules.some((m) => m.endsWith("/dist/cli-run.js"))).toBe(true);
    expect(modules.some((m) => m.includes("commander/"))).toBe(true);
    expect(modules.filter((m) => /\/dist\/(core|commands|git|io)\//.test(m))).toEqual([]);
    expect(
      modules.filter((m) => /node_modules\/(ink|react|@modelcontextprotocol)\//.test(m)),
    ).toEqual([]);
  });

  it("berth status loads no ink, react or MCP module", () => {
    repo = makeRepo();
    const modules = loadedModules(["status"], repo.path, repo.env);
    expect(modules.some((m) => m.includes("/dist/commands/status.js"))).toBe(true);
    // Its first git processes are started before commander is even loaded (status-reads.ts).
    const reads = modules.findIndex((m) => m.endsWith("/dist/core/fleet/status-reads.js"));
    const commander = modules.findIndex((m) => m.includes("node_modules/commander/"));
    expect(reads).toBeGreaterThan(-1);
    expect(commander).toBeGreaterThan(reads);
    expect(
      modules.filter((m) => /node_modules\/(ink|react|@modelcontextprotocol)\//.test(m)),
    ).toEqual([]);
  });
});
