// Writes berth.1, the manual page, from the CLI's own declarations
// (src/program.ts: every verb, its description, arguments and options), so
// a new verb or flag is in the page as soon as it is in the CLI. Run by
// `npm run build` (through tsx), with git-berth.1 beside it for
// `git berth --help`; the package installs both (package.json "man").
// test/man-page.test.ts renders the page with man(1) and checks it lists
// every command and option.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Command, Option } from "commander";
import { buildProgram } from "../src/program.js";
import { VERSION } from "../src/version.js";

export const MAN_PAGE_PATH = join(dirname(fileURLToPath(import.meta.url)), "..", "berth.1");
/** `git berth --help` runs `man git-berth`: this page sources berth.1. */
export const GIT_MAN_PAGE_PATH = join(dirname(MAN_PAGE_PATH), "git-berth.1");
export const GIT_MAN_PAGE = ".so man1/berth.1\n";

/** Text safe in roff: backslashes escaped, "-" as a real minus (flags copy and search as typed). */
export function roff(text: string): string {
  return text.replace(/\\/g, "\\e").replace(/-/g, "\\-");
}

/** A line safe to start with: roff reads a leading "." or "'" as a request. */
function line(text: string): string {
  return /^[.']/.test(text) ? `\\&${text}` : text;
}

/** The program's program, without running it: the declarations are all the page needs. */
export function declaredProgram(): Command {
  return buildProgram(() => {
    throw new Error("the man page generator runs no verb");
  }) as unknown as Command;
}

/**
 * Every command a user can run, depth first, with its full name ("worktree
 * drop"): the leaves, and a group that runs on its own too (`berth queue`
 * lists the queue; `queue run` drains it).
 */
export function leafCommands(program: Command): { name: string; command: Command }[] {
  const out: { name: string; command: Command }[] = [];
  const visit = (command: Command, prefix: string[]) => {
    for (const sub of command.commands) {
      if ((sub as Command & { _hidden?: boolean })._hidden) continue;
      const name = [...prefix, sub.name()];
      const runsItself = (sub as Command & { _actionHandler?: unknown })._actionHandler;
      if (sub.commands.length === 0 || runsItself) out.push({ name: name.join(" "), command: sub });
      if (sub.commands.length > 0) visit(sub, name);
    }
  };
  visit(program, []);
  return out;
}

function visibleOptions(command: Command): Option[] {
  return command.options.filter((option) => !option.hidden);
}

/**
 * Options every verb with `--json` output declares alike (--json, --debug):
 * described once, not under each verb. The harness hooks and shell helpers
 * print what their callers read (a path, a script), so they have no --json.
 */
export function commonOptions(program: Command): Option[] {
  const withJson = leafCommands(program)
    .map(({ command }) => visibleOptions(command))
    .filter((options) => options.some((o) => o.flags === "--json"));
  const [first, ...rest] = withJson;
  return (first ?? []).filter((option) =>
    rest.every((options) =>
      options.some((o) => o.flags === option.flags && o.description === option.description),
    ),
  );
}

function argumentUsage(command: Command): string {
  return command.registeredArguments
    .map((a) => {
      const name = `${a.name()}${a.variadic ? "..." : ""}`;
      return a.required ? `<${name}>` : `[${name}]`;
    })
    .join(" ");
}

function optionEntry(option: Option): string[] {
  return [".TP", `.B ${roff(option.flags)}`, line(roff(option.description))];
}

/** The whole page, in man(7) macros. */
export function renderManPage(program: Command = declaredProgram()): string {
  const commands = leafCommands(program);
  const common = new Set(commonOptions(program).map((option) => option.flags));
  const out: string[] = [
    `.TH BERTH 1 "" "berth ${VERSION}" "User Commands"`,
    // No hyphenation, no justification: flags and paths stay whole and searchable.
    ".nh",
    ".ad l",
    ".SH NAME",
    `berth, git\\-berth \\- ${roff(program.description().replace(/\.$/, "").toLowerCase())}`,
    ".SH SYNOPSIS",
    ".B berth",
    ".I verb",
    "[\\fIarguments\\fR] [\\fIoptions\\fR]",
    ".br",
    ".B git berth",
    ".I verb",
    "[\\fIarguments\\fR] [\\fIoptions\\fR]",
    ".SH DESCRIPTION",
    line(roff(program.description())),
    ".PP",
    line(
      roff(
        "Each line of work gets its own checkout (a berth) with its own branch, port and resources; " +
          "work composes below the trunk, and only a stack the gate has proved lands. " +
          "Installed as git-berth too, so git runs it as `git berth`.",
      ),
    ),
    ".PP",
    line(
      roff(
        "With --json, a verb prints one JSON document on stdout, described by the package's " +
          "schemas/envelope.schema.json (berth logbook --json prints JSON Lines, one " +
          "schemas/logbook-event.schema.json object each).",
      ),
    ),
    ".SH COMMANDS",
  ];
  for (const { name, command } of commands) {
    const usage = [`berth ${name}`, argumentUsage(command), "[options]"].filter(Boolean).join(" ");
    out.push(`.SS "${roff(usage)}"`, line(roff(command.description())));
    for (const argument of command.registeredArguments) {
      out.push(".TP", `.I ${roff(argument.name())}`, line(roff(argument.description)));
    }
    for (const option of visibleOptions(command)) {
      if (!common.has(option.flags)) out.push(...optionEntry(option));
    }
  }
  out.push(
    ".SH OPTIONS",
    line(roff("Every verb that prints JSON takes (the others take --debug where they show it):")),
  );
  for (const option of commonOptions(program)) out.push(...optionEntry(option));
  out.push(".PP", line(roff("Without a verb:")));
  for (const option of visibleOptions(program)) out.push(...optionEntry(option));
  out.push(
    ...optionEntry({
      flags: "-h, --help",
      description: "show help (also after any verb)",
    } as Option),
  );
  out.push(
    ".SH EXIT STATUS",
    ".TP",
    ".B 0",
    "done, or observed",
    ".TP",
    ".B 1",
    line(roff("refused or failed; with --json, error.code says which")),
    ".TP",
    ".B 2",
    "usage error (unknown flag, missing argument)",
    ".TP",
    ".B 124",
    line(roff("berth await: the condition did not hold within --timeout")),
    ".TP",
    ".B 130",
    "interrupted (Ctrl\\-C)",
    ".SH FILES",
    ".TP",
    ".I berth.toml",
    line(
      roff(
        "optional configuration at the repository root (berth init writes a commented one; " +
          "the package's schemas/berth.toml.schema.json describes it)",
      ),
    ),
    ".TP",
    `.I ${roff("$(git rev-parse --git-common-dir)/berth/")}`,
    line(roff("berth's shared state: resource ledger, logbook, fleet lock; never committed")),
    ".SH ENVIRONMENT",
    ".TP",
    ".B NO_COLOR",
    "no colors, even on a terminal",
    ".SH PLATFORMS",
    line(
      roff(
        "Linux and macOS. On Windows only under WSL, where it runs as on Linux: project commands " +
          "run with sh -c, a gate check's timeout or interrupt stops its whole process group, and " +
          "paths are POSIX paths.",
      ),
    ),
    ".SH SEE ALSO",
    ".BR git (1),",
    ".BR git\\-worktree (1)",
  );
  return `${out.join("\n")}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(MAN_PAGE_PATH, renderManPage());
  writeFileSync(GIT_MAN_PAGE_PATH, GIT_MAN_PAGE);
}
