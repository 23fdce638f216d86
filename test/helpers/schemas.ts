import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

/**
 * The published JSON Schemas (schemas/) as validators, and the hook the
 * end-to-end helpers run on every `--json` output of the built binary: a
 * document that does not match schemas/envelope.schema.json (or, for
 * `berth logbook --json`, a line that does not match
 * schemas/logbook-event.schema.json) fails the test that produced it.
 */

const SCHEMAS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../schemas");

export interface SchemaDocument {
  $id: string;
  description: string;
  [key: string]: unknown;
}

export function readSchema(name: string): SchemaDocument {
  return JSON.parse(readFileSync(join(SCHEMAS_DIR, name), "utf8")) as SchemaDocument;
}

function newAjv(): Ajv {
  // Compiled once per test file: no inlined refs and no code optimisation keep that under a second.
  const ajv = new Ajv({
    allErrors: true,
    allowUnionTypes: true,
    inlineRefs: false,
    code: { optimize: false },
  });
  // ajv-formats is CommonJS: its default export is the module object here.
  addFormats.default(ajv);
  return ajv;
}

/** A validator for one schema (its `$ref`s stay inside it). */
export function compileSchema(schema: AnySchema): ValidateFunction {
  return newAjv().compile(schema);
}

let outputValidators: { envelope: ValidateFunction; event: ValidateFunction } | undefined;

function validators() {
  if (!outputValidators) {
    const ajv = newAjv();
    const event = readSchema("logbook-event.schema.json");
    ajv.addSchema(event);
    outputValidators = {
      envelope: ajv.compile(readSchema("envelope.schema.json")),
      event: ajv.getSchema(event.$id) as ValidateFunction,
    };
  }
  return outputValidators;
}

/** ajv's errors, one line each, the most specific (deepest) first. */
export function describeSchemaErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return [...(errors ?? [])]
    .sort((a, b) => b.instancePath.length - a.instancePath.length)
    .slice(0, 8)
    .map((e) => `  ${e.instancePath || "/"} ${e.message} (${e.schemaPath})`)
    .join("\n");
}

/** Checks one envelope document; returns what is wrong, or null. */
export function envelopeProblem(document: unknown): string | null {
  const { envelope } = validators();
  return envelope(document) ? null : describeSchemaErrors(envelope.errors);
}

/** Checks one logbook event; returns what is wrong, or null. */
export function logbookEventProblem(event: unknown): string | null {
  const { event: validate } = validators();
  return validate(event) ? null : describeSchemaErrors(validate.errors);
}

/** The verb word(s) of berth arguments: `["worktree", "drop", "x"]` → "worktree". */
function firstWord(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith("-"));
}

/**
 * The validation hook: throws when `berth <args>` ran with `--json`, ended on
 * its own (not by a signal) and printed something that is not a valid
 * document. Help and version output are not JSON documents and are skipped.
 */
export function assertJsonOutput(
  args: readonly string[],
  stdout: string,
  code: number | null,
): void {
  if (!args.includes("--json") || code === null) return;
  if (args.some((arg) => ["--help", "-h", "--version", "-V"].includes(arg))) return;
  const command = `berth ${args.join(" ")}`;
  if (firstWord(args) === "logbook" && code === 0) {
    // JSON Lines: one event per line, nothing else (a torn last line cannot be: it is berth's own output).
    stdout
      .split("\n")
      .filter((line) => line !== "")
      .forEach((line, i) => {
        let event: unknown;
        try {
          event = JSON.parse(line);
        } catch {
          throw new Error(`${command}: line ${i + 1} of its JSON Lines is not JSON: ${line}`);
        }
        const problem = logbookEventProblem(event);
        if (problem) {
          throw new Error(
            `${command}: line ${i + 1} does not match schemas/logbook-event.schema.json:\n${problem}\n${line}`,
          );
        }
      });
    return;
  }
  let document: unknown;
  try {
    document = JSON.parse(stdout);
  } catch {
    throw new Error(`${command} (exit ${code}): stdout is not one JSON document:\n${stdout}`);
  }
  const problem = envelopeProblem(document);
  if (problem) {
    throw new Error(
      `${command} (exit ${code}): its --json document does not match schemas/envelope.schema.json ` +
        `(a new verb or field goes into the schema too; docs/decisions/0021):\n${problem}\n${stdout.slice(0, 4000)}`,
    );
  }
}
