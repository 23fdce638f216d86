/**
 * Loads `<repo>/berth.toml` (spec section 3): parse with smol-toml, check the
 * shape with valibot, then check the rules that span several keys. Every
 * failure is a `ConfigError` naming the file, the key path and what was
 * expected; the defaults live only in the schema below.
 */

import { isUtf8 } from "node:buffer";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse, TomlDate, TomlError } from "smol-toml";
import * as v from "valibot";
import { ConfigError } from "../errors.js";
import { checkGateGraph } from "./config-gate-graph.js";
import type { Config, GateCheckConfig, ResourceConfig } from "./config-types.js";

export const CONFIG_FILE_NAME = "berth.toml";

const PORT_MIN = 1024;
const PORT_LIMIT = 65536;
// A leading letter keeps file order: JavaScript objects put all-digit keys first.
const RESOURCE_NAME = /^[a-z][a-z0-9_-]*$/;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
// valibot's record() silently skips these keys, so refuse them instead of losing a resource.
const RESERVED_KEYS = new Set(["constructor", "prototype", "__proto__"]);

/** Reads and validates `<repoRoot>/berth.toml`; no file means every default. */
export async function loadConfig(repoRoot: string): Promise<Config> {
  const file = resolve(repoRoot, CONFIG_FILE_NAME);
  const text = readConfigText(file);
  if (text === null) return toConfig(null, validate(file, {}));
  const config = toConfig(file, validate(file, parseToml(file, text)));
  checkPortBand(file, config);
  checkGateGraph(file, config.gate.checks);
  return config;
}

/**
 * Synchronous, and asked first whether it exists: every verb reads it at its
 * start, where the promise API's first open (and a missing file's error, with
 * its stack) cost a status several milliseconds of its start-up.
 */
function readConfigText(file: string): string | null {
  if (!existsSync(file)) return null;
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw new ConfigError(file, undefined, `cannot read the file (${code ?? String(error)})`);
  }
  // TOML is UTF-8: decoding other bytes would read a value with U+FFFD in it, silently altered.
  if (!isUtf8(bytes)) throw new ConfigError(file, undefined, "not UTF-8 text, as TOML must be");
  return bytes.toString("utf8");
}

function parseToml(file: string, text: string): unknown {
  try {
    // Integers as bigint so `port_span = 2000.0` reads as a float and is refused.
    return parse(text, { integersAsBigInt: true });
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.replace(/^Invalid TOML document: /, "").split("\n")[0];
      const where = `line ${error.line}, column ${error.column}`;
      throw new ConfigError(
        file,
        undefined,
        `invalid TOML at ${where}: ${reason}`,
        error.codeblock,
      );
    }
    throw new ConfigError(file, undefined, `invalid TOML: ${String(error)}`);
  }
}

// ---------------------------------------------------------------------------
// Messages: every schema carries its own, so no raw valibot text reaches a user.

type Issue = v.BaseIssue<unknown>;

/** "the string "x"", "the integer 3", "a table": how a found value reads in a message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return `the string ${JSON.stringify(truncate(value))}`;
  if (typeof value === "bigint") return `the integer ${value}`;
  if (typeof value === "number") return `the float ${value}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "an array";
  if (value instanceof TomlDate) return `the date-time ${value.toISOString()}`;
  return "a table";
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function expected(what: string): (issue: Issue) => string {
  return (issue) => `expected ${what}, found ${describeValue(issue.input)}`;
}

// ---------------------------------------------------------------------------
// Schema building blocks.

function isTable(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  // smol-toml tables have a null prototype; arrays and dates must not pass as tables.
  return proto === null || proto === Object.prototype;
}

const tableGuard = v.custom<Record<string, unknown>>(isTable, expected("a table"));

/** A TOML table that refuses unknown keys and lists the known ones. */
function table<const E extends v.ObjectEntries>(entries: E) {
  const known = Object.keys(entries).join(", ");
  const message = (issue: Issue): string => {
    if (issue.expected === "never") {
      return `unknown key ${JSON.stringify(issue.input)} (known keys: ${known})`;
    }
    return "expected this key to be set, found nothing (it has no default)";
  };
  return v.pipe(tableGuard, v.strictObject(entries, message));
}

const boolean = v.boolean(expected("a boolean (true or false)"));

function string(what = "a string") {
  return v.string(expected(what));
}

function nonEmptyString(what: string) {
  return v.pipe(
    string(what),
    v.check((text) => text.trim() !== "", expected(what)),
  );
}

function stringArray<T extends v.GenericSchema<string, string>>(item: T, def: () => string[]) {
  return v.optional(v.array(item, expected("an array of strings")), def);
}

/** A TOML integer (bigint from the parser) in [min, max], handed on as a number. */
function integer(what: string, min: bigint, max?: bigint) {
  const inRange = (n: bigint) => n >= min && (max === undefined || n <= max);
  return v.pipe(
    v.bigint(expected(what)),
    v.check(inRange, expected(what)),
    v.transform((n) => Number(n)),
  );
}

const positiveInteger = integer("a positive integer", 1n);

/** Why `name` is not a valid git branch name, or null (git check-ref-format rules). */
export function refNameProblem(name: string): string | null {
  if (name === "") return "it is empty";
  if (hasSpaceOrControl(name)) return "it contains a space or control character";
  const bad = /[~^:?*[\\]/.exec(name);
  if (bad) return `it contains ${JSON.stringify(bad[0])}`;
  if (name.includes("..")) return 'it contains ".."';
  if (name.includes("@{")) return 'it contains "@{"';
  if (name === "@") return 'it is "@"';
  if (name.startsWith("-")) return 'it starts with "-"';
  if (name.endsWith(".")) return 'it ends with "."';
  const parts = name.split("/");
  if (parts.includes("")) return "it has an empty path component";
  if (parts.some((part) => part.startsWith("."))) return 'a path component starts with "."';
  if (parts.some((part) => part.endsWith(".lock"))) return 'a path component ends with ".lock"';
  return null;
}

function hasSpaceOrControl(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f || /\s/.test(char)) return true;
  }
  return false;
}

/** Why `file`, an env file relative to the checkout, would not be inside it, or null. */
function envFileProblem(file: string): string | null {
  if (file.trim() === "") return "it is empty";
  if (file.startsWith("/")) return "it is an absolute path";
  if (file.split("/").includes("..")) return 'it has a ".." component';
  return null;
}

/** berth adds refs/heads/ itself: "refs/heads/main" would name refs/heads/refs/heads/main. */
const FULL_REF = 'it starts with "refs/": write the branch as git branch shows it';

function branchNameProblem(name: string): string | null {
  return name.startsWith("refs/") ? FULL_REF : refNameProblem(name);
}

function branchPrefixProblem(prefix: string): string | null {
  if (prefix === "") return "it is empty";
  if (!prefix.endsWith("/")) return 'it does not end with "/"';
  return prefix.startsWith("refs/") ? FULL_REF : refNameProblem(prefix.slice(0, -1));
}

/** A string that must satisfy `problem`; the message explains the first rule it breaks. */
function checkedString(what: string, problem: (text: string) => string | null) {
  return v.pipe(
    string(what),
    v.check(
      (text) => problem(text) === null,
      (issue) => {
        const why = typeof issue.input === "string" ? problem(issue.input) : null;
        return `${expected(what)(issue)}${why ? ` (${why})` : ""}`;
      },
    ),
  );
}

// ---------------------------------------------------------------------------
// The schema. Defaults are spec section 3, and only here.

const repositorySchema = table({
  trunk: v.optional(checkedString("a branch name", branchNameProblem)),
  branch_prefix: v.optional(
    checkedString('a branch prefix of valid git ref characters ending in "/"', branchPrefixProblem),
    "berth/",
  ),
});

const resourceSchema = table({
  create: nonEmptyString("a non-empty shell command"),
  destroy: nonEmptyString("a non-empty shell command"),
  ensure: v.optional(string('a shell command (or "" for none)'), ""),
  required: v.optional(boolean, true),
  gc: v.optional(boolean, true),
});

const resourceName = v.pipe(
  string("a resource name"),
  v.regex(
    RESOURCE_NAME,
    expected('a resource name of a-z, 0-9, "_" and "-", starting with a letter'),
  ),
);

const resourcesSchema = v.pipe(
  tableGuard,
  v.check(
    (resources) => !Object.keys(resources).some((key) => RESERVED_KEYS.has(key)),
    (issue) => {
      const keys = isTable(issue.input) ? Object.keys(issue.input) : [];
      const name = keys.find((key) => RESERVED_KEYS.has(key)) ?? "";
      return `expected a resource name that is not reserved, found ${JSON.stringify(name)}`;
    },
  ),
  v.record(resourceName, resourceSchema),
);

const worktreeSchema = table({
  // Berths live under it, and berth refuses paths with a newline (docs/decisions/0018).
  root: v.optional(
    checkedString('a path (or "" for the sibling folder)', (text) =>
      text.includes("\n") ? "it contains a newline" : null,
    ),
    "",
  ),
  // Each is written in every berth's checkout: one outside it is no file of the berth's.
  env_files: stringArray(checkedString("a file path inside the repository", envFileProblem), () => [
    ".env",
    ".env.local",
  ]),
  inherit_env: stringArray(
    v.pipe(
      string("an environment variable name"),
      v.regex(ENV_KEY, expected("an environment variable name")),
    ),
    () => [],
  ),
  port_base: v.optional(
    integer(`an integer from ${PORT_MIN} to ${PORT_LIMIT - 1}`, 1024n, 65535n),
    41000n,
  ),
  port_span: v.optional(integer("an integer of at least 1", 1n), 2000n),
  setup: v.optional(
    table({
      steps: stringArray(nonEmptyString("a non-empty shell command"), () => []),
      ensure: stringArray(nonEmptyString("a non-empty shell command"), () => []),
    }),
    {},
  ),
  resources: v.optional(resourcesSchema, {}),
});

const checkSchema = table({
  name: nonEmptyString("a non-empty check name"),
  run: nonEmptyString("a non-empty shell command"),
  after: stringArray(string("a check name"), () => []),
  timeout_s: v.optional(positiveInteger),
});

const gateSchema = table({
  fail_fast: v.optional(boolean, true),
  timeout_s: v.optional(positiveInteger, 600n),
  checks: v.optional(v.array(checkSchema, expected("an array of check tables")), () => []),
  // How many gates may run at once across the fleet (spec sections 3 and 11); 0 = the cores.
  capacity: v.optional(
    table({ max_parallel: v.optional(integer("0 (the number of cores) or more", 0n), 0n) }),
    {},
  ),
});

// How the landing queue lands (spec section 11). pre_authorized is the standing
// grant: every submission (a person's --no-wait, an agent's accept through berth mcp
// or a hook) may land once green, without a person's approval. queue = false: a
// branch that does not contain the trunk's tip is refused, never integrated.
const acceptanceSchema = table({
  batch: v.optional(positiveInteger, 1n),
  pre_authorized: v.optional(boolean, false),
  queue: v.optional(boolean, true),
});

const configSchema = table({
  repository: v.optional(repositorySchema, {}),
  worktree: v.optional(worktreeSchema, {}),
  gate: v.optional(gateSchema, {}),
  acceptance: v.optional(acceptanceSchema, {}),
  logbook: v.optional(table({ enabled: v.optional(boolean, true) }), {}),
  remote: v.optional(
    table({
      name: v.optional(
        checkedString('a git remote name (or "" for none)', (text) =>
          text === "" ? null : refNameProblem(text),
        ),
        "",
      ),
      publish_receipts: v.optional(boolean, false),
    }),
    {},
  ),
});

type ParsedConfig = v.InferOutput<typeof configSchema>;

function validate(file: string, document: unknown): ParsedConfig {
  const result = v.safeParse(configSchema, document, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  throw new ConfigError(file, formatKeyPath(issue.path ?? []), issue.message);
}

/** Dotted TOML key path: `worktree.port_span`, `gate.checks[1].after`, `a."b c"`. */
export function formatKeyPath(path: readonly { key: unknown }[]): string | undefined {
  let out = "";
  for (const { key } of path) {
    if (typeof key === "number") out += `[${key}]`;
    else {
      const text = String(key);
      const bare = /^[A-Za-z0-9_-]+$/.test(text) ? text : JSON.stringify(text);
      out += out === "" ? bare : `.${bare}`;
    }
  }
  return out === "" ? undefined : out;
}

function toConfig(file: string | null, parsed: ParsedConfig): Config {
  const { repository, worktree, gate, acceptance, logbook, remote } = parsed;
  const resources: ResourceConfig[] = Object.entries(worktree.resources).map(
    ([name, resource]) => ({ name, ...resource }),
  );
  const checks: GateCheckConfig[] = gate.checks.map((check) => ({
    ...check,
    timeout_s: check.timeout_s ?? null,
  }));
  return {
    file,
    repository: { trunk: repository.trunk ?? null, branch_prefix: repository.branch_prefix },
    worktree: { ...worktree, setup: { ...worktree.setup }, resources },
    gate: {
      fail_fast: gate.fail_fast,
      timeout_s: gate.timeout_s,
      checks,
      capacity: { max_parallel: gate.capacity.max_parallel },
    },
    acceptance: { ...acceptance },
    logbook: { ...logbook },
    remote: {
      name: remote.name === "" ? null : remote.name,
      publish_receipts: remote.publish_receipts,
    },
  };
}

// ---------------------------------------------------------------------------
// Rules that span several keys.

function checkPortBand(file: string, config: Config): void {
  const { port_base: base, port_span: span } = config.worktree;
  if (base + span <= PORT_LIMIT) return;
  const most = PORT_LIMIT - base;
  throw new ConfigError(
    file,
    "worktree.port_span",
    `expected at most ${most} so that port_base + port_span <= ${PORT_LIMIT}, ` +
      `found the integer ${span}`,
  );
}
