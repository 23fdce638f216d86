import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, TomlDate } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../src/errors.js";
import { loadConfig } from "../src/io/config.js";
import { CONFIG_SCHEMA_URL, renderStarterConfig } from "../src/io/config-template.js";
import { VERSION } from "../src/version.js";
import {
  BAD_BRANCH_PREFIXES,
  BAD_PORT_BANDS,
  branchPrefixConfig,
  INVALID_CONFIGS,
  MALFORMED,
  portBandConfig,
  VALID_CONFIGS,
  ZERO_PORT_SPAN,
} from "./fixtures/configs.js";
import { compileSchema, readSchema } from "./helpers/schemas.js";

/**
 * schemas/berth.toml.schema.json against the real loader, on every berth.toml
 * fixture of the test suite: a fixture validates against the schema exactly
 * when loadConfig accepts it, except where the loader refuses it by a rule
 * JSON Schema cannot express. Those rules are listed in the schema's
 * description and below; every disagreement must be explained by one of
 * them, and each of them must explain at least one fixture.
 */

const SCHEMA = readSchema("berth.toml.schema.json");
const validate = compileSchema(SCHEMA);

/** The loader's rules JSON Schema cannot express: the name the schema lists, the loader's message. */
const LOADER_ONLY_RULES: [name: string, message: RegExp][] = [
  ["unique check names", /expected a unique check name/],
  ["after names another check", /expected the name of another declared check/],
  ["no dependency cycle", /expected no dependency cycle/],
  ["port band fits", /so that port_base \+ port_span <= 65536/],
  ["integer, not float", /found the float -?\d+\b/],
  ["string, not date-time", /found the date-time /],
];

type Fixture = [label: string, text: string];

const FIXTURES: Fixture[] = [
  ...Object.entries(VALID_CONFIGS).map(([label, text]): Fixture => [`valid: ${label}`, text]),
  ...Object.entries(INVALID_CONFIGS).map(([label, text]): Fixture => [`invalid: ${label}`, text]),
  ...BAD_BRANCH_PREFIXES.map(
    ([prefix]): Fixture => [`branch_prefix ${JSON.stringify(prefix)}`, branchPrefixConfig(prefix)],
  ),
  ...BAD_PORT_BANDS.map(
    ([lines]): Fixture => [`port band ${JSON.stringify(lines)}`, portBandConfig(lines)],
  ),
  ...MALFORMED.map(([label, text]): Fixture => [`malformed: ${label}`, text]),
  ["zero port span", ZERO_PORT_SPAN],
  ["starter file", renderStarterConfig("main")],
  ["starter file, trunk with a slash", renderStarterConfig("trunk/v2")],
];

/**
 * The TOML document as the JSON value an editor validates (Taplo's model):
 * integers and floats become numbers, date-times strings. null when the text
 * is not TOML at all: there is no document to validate, and the editor
 * reports the syntax error instead.
 */
function tomlAsJson(text: string): unknown {
  let document: unknown;
  try {
    document = parse(text, { integersAsBigInt: true });
  } catch {
    return null;
  }
  const convert = (value: unknown): unknown => {
    if (typeof value === "bigint") return Number(value);
    if (value instanceof TomlDate) return value.toISOString();
    if (Array.isArray(value)) return value.map(convert);
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      // defineProperty: a key named __proto__ stays a key, as in JSON.
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(out, key, {
          value: convert(item),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return value;
  };
  return convert(document);
}

interface Verdict {
  label: string;
  /** null: the loader accepts it; otherwise its refusal. */
  loaderError: string | null;
  /** The schema's first complaint, or null when the document validates. */
  schemaError: string | null;
}

let dir = "";
const verdicts: Verdict[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "berth-config-schema-"));
  for (const [label, text] of FIXTURES) {
    await writeFile(join(dir, "berth.toml"), text);
    const loaderError = await loadConfig(dir).then(
      () => null,
      (error: unknown) => {
        if (!(error instanceof ConfigError)) throw error;
        return error.message;
      },
    );
    const document = tomlAsJson(text);
    let schemaError: string | null = "not a TOML document";
    if (document !== null) {
      schemaError = validate(document)
        ? null
        : `${validate.errors?.[0]?.instancePath || "/"} ${validate.errors?.[0]?.message}`;
    }
    verdicts.push({ label, loaderError, schemaError });
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function ruleOf(message: string): string | null {
  return LOADER_ONLY_RULES.find(([, pattern]) => pattern.test(message))?.[0] ?? null;
}

describe("schemas/berth.toml.schema.json against loadConfig", () => {
  it("sees every fixture, valid and invalid", () => {
    expect(verdicts).toHaveLength(FIXTURES.length);
    expect(verdicts.filter((v) => v.loaderError === null).length).toBeGreaterThanOrEqual(7);
    expect(verdicts.filter((v) => v.loaderError !== null).length).toBeGreaterThan(70);
  });

  it("refuses no fixture the loader accepts", () => {
    const refused = verdicts.filter((v) => v.loaderError === null && v.schemaError !== null);
    expect(refused.map((v) => `${v.label}: ${v.schemaError}`)).toEqual([]);
  });

  it("accepts a fixture the loader refuses only when a loader-only rule refused it", () => {
    const unexplained = verdicts
      .filter((v) => v.loaderError !== null && v.schemaError === null)
      .filter((v) => ruleOf(v.loaderError as string) === null);
    expect(unexplained.map((v) => `${v.label}: ${v.loaderError}`)).toEqual([]);
  });

  it("disagrees on exactly these fixtures, each by a rule the schema's description lists", () => {
    const disagreements = verdicts
      .filter((v) => v.loaderError !== null && v.schemaError === null)
      .map((v) => [v.label, ruleOf(v.loaderError as string)]);
    expect(disagreements).toEqual([
      ["invalid: port_span is a float", "integer, not float"],
      ["invalid: after names no declared check", "after names another check"],
      ["invalid: a check runs after itself", "after names another check"],
      ["invalid: a dependency cycle", "no dependency cycle"],
      ["invalid: duplicate check names", "unique check names"],
      ['port band "port_base = 65000\\nport_span = 537"', "port band fits"],
      ["malformed: trunk is a date", "string, not date-time"],
      ["malformed: the port band leaves 65535", "port band fits"],
      ["malformed: after names no check", "after names another check"],
      ["malformed: checks wait on each other", "no dependency cycle"],
      ["malformed: two checks share a name", "unique check names"],
    ]);
    // Each listed rule explains a fixture, and the schema tells editors' users about it.
    const rules = new Set(disagreements.map(([, rule]) => rule));
    for (const [name] of LOADER_ONLY_RULES) {
      expect(rules, name).toContain(name);
      expect(SCHEMA.description, name).toContain(`- ${name}:`);
    }
  });
});

describe("the schema's defaults and the starter file", () => {
  it("states the loader's own default for every key that has one", async () => {
    const empty = await mkdtemp(join(tmpdir(), "berth-config-defaults-"));
    const loaded = (await loadConfig(empty)) as unknown as Record<string, unknown>;
    await rm(empty, { recursive: true, force: true });
    const checked: string[] = [];
    const walk = (node: Record<string, unknown>, path: string[]) => {
      const properties = (node.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const [key, child] of Object.entries(properties)) {
        const at = [...path, key];
        // resources are a table in the file and a list in the loaded config: checked below.
        if ("default" in child && at.join(".") !== "worktree.resources") {
          const value = at.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], loaded);
          expect(child.default, at.join(".")).toEqual(value);
          checked.push(at.join("."));
        }
        walk(child, at);
      }
    };
    walk(SCHEMA, []);
    expect(loaded).toMatchObject({ worktree: { resources: [] } });
    expect(checked).toEqual([
      "repository.branch_prefix",
      "worktree.root",
      "worktree.env_files",
      "worktree.inherit_env",
      "worktree.port_base",
      "worktree.port_span",
      "worktree.setup.steps",
      "worktree.setup.ensure",
      "gate.fail_fast",
      "gate.timeout_s",
      "gate.checks",
      "gate.capacity.max_parallel",
      "logbook.enabled",
      "acceptance.batch",
      "acceptance.pre_authorized",
      "acceptance.queue",
      "remote.publish_receipts",
    ]);
  });

  it("points editors at this version's schema on its first line", () => {
    const [first] = renderStarterConfig("main").split("\n");
    expect(first).toBe(`#:schema ${CONFIG_SCHEMA_URL}`);
    expect(CONFIG_SCHEMA_URL).toBe(SCHEMA.$id);
    expect(SCHEMA.$id).toContain(`/git-berth@${VERSION}/schemas/berth.toml.schema.json`);
  });
});
