import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellCommand } from "../src/text.js";
import { wrapPane } from "../src/ui/desk/wrap.js";

/** The words a shell makes of `script` (rows joined by newlines, as a paste gives them). */
function shellWords(script: string): string[] {
  const out = execFileSync("sh", ["-c", `set -- ${script}\nprintf '%s\\0' "$@"`], {
    encoding: "utf8",
  });
  return out.split("\0").slice(0, -1);
}

const LONG_PATH = "/home/someone/projects/a-rather-long-repository-name.worktrees/ab-12cd34";
const args = [
  "berth",
  "worktree",
  "drop",
  "ab-12cd34",
  "--force",
  "--yes",
  "--message",
  "it's a title with spaces in it",
  LONG_PATH,
];

describe("the desk pane wraps instead of cutting", () => {
  it.each([24, 30, 40, 57, 80])(
    "breaks a command at %i columns into rows a shell reads as the very command",
    (width) => {
      const command = shellCommand(args);
      const rows = wrapPane([`$ ${command}`], width);
      expect(rows.length).toBeGreaterThan(1);
      for (const row of rows) expect([...row].length).toBeLessThanOrEqual(width);
      for (const row of rows.slice(0, -1)) expect(row.endsWith("\\")).toBe(true);
      // Pasted into a shell, the rows are the very command.
      expect(shellWords(rows.join("\n").slice(2))).toEqual(args);
      expect(shellWords(command)).toEqual(args);
    },
  );

  it("breaks between shell words where they fit, with a visible continuation", () => {
    const rows = wrapPane(
      [`$ ${shellCommand(["berth", "worktree", "drop", "ab-12cd34", "--yes"])}`],
      24,
    );
    expect(rows).toEqual(["$ berth worktree drop \\", "    ab-12cd34 --yes"]);
  });

  it("splits a quoted argument wider than a row at one of its spaces", () => {
    const words = ["berth", "start", "x", "--title", "one two three four five six"];
    const rows = wrapPane([`$ ${shellCommand(words)}`], 30);
    expect(rows).toEqual([
      "$ berth start x --title \\",
      "    'one two three four '\\",
      "'five six'",
    ]);
    expect(shellWords(rows.join("\n").slice(2))).toEqual(words);
  });

  it("splits a path wider than a row after a slash", () => {
    const rows = wrapPane([`$ ${shellCommand(["cd", LONG_PATH])}`], 30);
    expect(rows[0]).toBe("$ cd \\");
    expect(rows[1]).toBe("    /home/someone/projects/\\");
    expect(shellWords(rows.join("\n").slice(2))).toEqual(["cd", LONG_PATH]);
  });

  it("wraps text at its spaces, indented under its line, losing nothing", () => {
    const line = "  - 3 uncommitted change(s): src/a.ts, src/b.ts, src/c.ts, docs/d.md, README.md";
    const rows = wrapPane([line], 32);
    for (const row of rows) expect([...row].length).toBeLessThanOrEqual(32);
    expect(rows.slice(1).every((row) => row.startsWith("    "))).toBe(true);
    expect(rows.map((row) => row.trim()).join(" ")).toBe(line.trim());
  });

  it("leaves lines that fit as they are", () => {
    expect(wrapPane(["$ berth status", "short"], 80)).toEqual(["$ berth status", "short"]);
  });
});
