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
