import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  commonOptions,
  declaredProgram,
  leafCommands,
  MAN_PAGE_PATH,
  renderManPage,
} from "../scripts/man-page.js";
import { VERSION } from "../src/version.js";

/**
 * berth.1 is generated from the CLI's declarations (scripts/man-page.ts):
 * rendered by man(1) itself, it names every command, argument and option the
 * commander program declares, so a new verb or flag cannot be missing.
 */

const dir = mkdtempSync(join(tmpdir(), "berth-man-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The page as man(1) shows it: plain text, no pager, no hyphenation, one width. */
function manText(page: string): string {
  const file = join(dir, "berth.1");
  writeFileSync(file, page);
  return execFileSync("man", ["-l", file], {
    encoding: "utf8",
    env: { ...process.env, LC_ALL: "C.UTF-8", MANWIDTH: "100", MANPAGER: "cat", PAGER: "cat" },
  });
}

/** Words as man prints them: runs of blanks (line breaks, indents) as one space. */
const squeeze = (text: string) => text.replace(/\s+/g, " ");

describe("berth.1", () => {
  const program = declaredProgram();
  const text = manText(renderManPage(program));
  const flat = squeeze(text);
  const commands = leafCommands(program);

  it("is a real man page: man(1) renders its sections", () => {
    expect(text).toMatch(/^BERTH\(1\)/);
    for (const section of [
      "NAME",
      "SYNOPSIS",
      "DESCRIPTION",
      "COMMANDS",
      "OPTIONS",
      "EXIT STATUS",
    ]) {
      expect(text).toMatch(new RegExp(`^${section}$`, "m"));
    }
    expect(flat).toContain("git berth verb");
    expect(flat).toContain(`berth ${VERSION}`);
  });

  it("lists every command the program declares, with its description", () => {
    const names = commands.map((c) => c.name);
    // The program's verbs as of writing; any verb added later is checked the same way below.
    expect(names).toEqual(
      expect.arrayContaining(["init", "start", "status", "gate", "accept", "worktree prune"]),
    );
    for (const { name, command } of commands) {
      const heading = new RegExp(`^ {3}berth ${name}( |$)`, "m");
      expect(text, name).toMatch(heading);
      expect(flat, name).toContain(squeeze(command.description()));
      for (const argument of command.registeredArguments) {
        expect(flat, `${name} ${argument.name()}`).toContain(squeeze(argument.description));
      }
    }
  });

  it("lists every option of every command, each under its command unless every verb has it", () => {
    const common = new Set(commonOptions(program).map((o) => o.flags));
    expect(common).toEqual(new Set(["--json", "--debug"]));
    const sections = text.split(/^ {3}(?=berth )/m);
    for (const { name, command } of commands) {
      const section = squeeze(sections.find((s) => s.startsWith(`berth ${name} `)) ?? "");
      for (const option of command.options) {
        const where = common.has(option.flags) ? flat : section;
        expect(where, `${name} ${option.flags}`).toContain(
          `${option.flags} ${squeeze(option.description)}`,
        );
      }
    }
    for (const option of program.options) expect(flat).toContain(option.flags);
  });

  it("is what the build wrote at the package root (npm run build)", () => {
    expect(readFileSync(MAN_PAGE_PATH, "utf8")).toBe(renderManPage(program));
  });
});
