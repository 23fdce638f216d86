import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  commandSequence,
  controlCharacters,
  shellCommand,
  shellQuote,
  userShellCommand,
} from "../src/text.js";
import { PROJECT_ROOT } from "./helpers/repo.js";

/** What `sh` reads back from `words`: each argument, NUL-terminated. */
function shWords(words: string): string[] {
  const run = spawnSync("/bin/sh", ["-c", `printf '%s\\0' ${words}`], { encoding: "utf8" });
  expect(run.status).toBe(0);
  return run.stdout.split("\0").slice(0, -1);
}

const HOSTILE = [
  "",
  " ",
  "my repo 'q' $(touch PWN)",
  "it's",
  "'",
  "''",
  '"double" quotes',
  "`touch PWN`",
  "$HOME",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${} is the attack.
  "${HOME}",
  "a\nb",
  "\n",
  "trailing\n",
  "tab\there",
  "=cmd",
  "-n",
  "*",
  "~",
  "a;b&&c|d",
  "back\\slash",
  "!bang",
  "#comment",
  "ünïcödé",
  "esc\x1b[2Jwipe",
  "carriage\rreturn",
  "\x7f",
  "c1\u009bcsi",
  "\x01\x02",
];

describe("shellQuote", () => {
  it.each(HOSTILE)("sh reads %j back as exactly one argument, byte for byte", (text) => {
    expect(shWords(shellQuote(text))).toEqual([text]);
  });

  it("prints no control character a terminal acts on: each is the printf that makes it", () => {
    const quoted = shellQuote("a\x1b[31mb\tc\u009b\nd");
    expect(quoted).toBe(
      `'a'"$(printf '\\033')"'[31mb'"$(printf '\\011')"'c'"$(printf '\\302\\233')"'\nd'`,
    );
    expect(controlCharacters(quoted)).toEqual(["\\x0a"]);
  });

  it("leaves plain words bare and quotes the rest", () => {
    expect(shellQuote("berth")).toBe("berth");
    expect(shellQuote("refs/heads/berth/x-1")).toBe("refs/heads/berth/x-1");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("=x")).toBe("'=x'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  it("shellCommand quotes every argument; commandSequence joins commands with &&", () => {
    const line = shellCommand(HOSTILE);
    expect(shWords(line)).toEqual(HOSTILE);
    expect(
      commandSequence(shellCommand(["git", "stash", "-u"]), shellCommand(["berth", "accept", "x"])),
    ).toBe("git stash -u && berth accept x");
  });

  it("userShellCommand passes a simple command through and wraps lists in sh -c", () => {
    expect(userShellCommand("npm test -- --run")).toBe("npm test -- --run");
    const wrapped = userShellCommand("echo a; exit 2");
    expect(wrapped).toBe("sh -c 'echo a; exit 2'");
    expect(shWords(wrapped)).toEqual(["sh", "-c", "echo a; exit 2"]);
    expect(userShellCommand("echo $(touch PWN)")).toBe("sh -c 'echo $(touch PWN)'");
  });

  it("userShellCommand leaves only text every shell reads the same bare", () => {
    for (const plain of ["npm test -- --run", "make check", "node dist/cli.cjs --x=1 a,b @c +d"]) {
      expect(userShellCommand(plain)).toBe(plain);
    }
    // Each means something else in bash or zsh than in the sh -c the check ran under.
    for (const special of [
      "test {1..1} = 1",
      "[[ a == a ]]",
      "test ! -e x",
      "ls **/*.ts",
      "ls !(x)",
      "ls ~",
      "kill %1",
      "echo $HOME",
      "=ls",
      "test a == b",
      "echo\tx",
      'echo "x"',
    ]) {
      const wrapped = userShellCommand(special);
      expect(shWords(wrapped), special).toEqual(["sh", "-c", special]);
    }
  });

  it("userShellCommand with an environment sets and removes it through env, then sh -c", () => {
    const line = userShellCommand("npm test", {
      set: { BERTH_ID: "a-1", BERTH_PATH: "/tmp/my repo 'q'" },
      unset: ["BERTH_RESOURCE"],
    });
    expect(line.startsWith("env -u BERTH_RESOURCE BERTH_ID=a-1 'BERTH_PATH=")).toBe(true);
    expect(line.endsWith(" sh -c 'npm test'")).toBe(true);
    expect(shWords(line)).toEqual([
      "env",
      "-u",
      "BERTH_RESOURCE",
      "BERTH_ID=a-1",
      "BERTH_PATH=/tmp/my repo 'q'",
      "sh",
      "-c",
      "npm test",
    ]);
  });
});

/**
 * Guard (spec invariant 10): every `next`, reproduce line and `--yes` command
 * is a `CommandLine`, a type only src/text.ts mints, so the typechecker
 * refuses a hand-made string. What the typechecker cannot see is checked here:
 * no other module casts to it, and no `next:` is written as a string literal.
 */
describe("printed commands are built, never concatenated (guard)", () => {
  const files = sourceFiles(join(PROJECT_ROOT, "src"));
  const read = (file: string) => readFileSync(file, "utf8");
  const rel = (file: string) => relative(PROJECT_ROOT, file);

  it("only src/text.ts mints a CommandLine", () => {
    const minting = files.filter((f) => /as CommandLine\b/.test(read(f))).map(rel);
    expect(minting).toEqual(["src/text.ts"]);
  });

  it("only the gate's reproduce line passes a user's shell command through", () => {
    const users = files
      .filter((f) => rel(f) !== "src/text.ts" && /\buserShellCommand\(/.test(read(f)))
      .map(rel);
    expect(users).toEqual(["src/core/landing/gate-report.ts"]);
  });

  it("no next:, reproduce: or yesCommand: is a string or template literal", () => {
    const offenders = files.flatMap((f) =>
      [...read(f).matchAll(/\b(next|reproduce|yesCommand)\s*:\s*(?:\n\s*)?["'`]/g)].map(
        (m) => `${rel(f)}: ${m[0].replace(/\s+/g, " ")}`,
      ),
    );
    expect(offenders).toEqual([]);
  });

  it("no hint concatenates a cd command by hand", () => {
    const offenders = files.filter((f) => /[`"']cd \$\{|; cd \$\{/.test(read(f))).map(rel);
    expect(offenders).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}
