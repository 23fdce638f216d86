import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { dbNameFor } from "../../src/core/berth/identity.js";
import { PROJECT_ROOT, type RunResult, runBerth, type TestRepo } from "../helpers/repo.js";

/**
 * The golden recorder: runs the built binary, turns what it printed into a
 * normalised document and either writes it (BERTH_GOLDEN_UPDATE=1) or hands
 * it back with the committed expectation for the test to compare.
 */

export const EXPECTED_DIR = join(dirname(fileURLToPath(import.meta.url)), "expected");
export const UPDATING = process.env.BERTH_GOLDEN_UPDATE === "1";

/** The commit and reflog date the helpers pin (isolatedEnv): deterministic, kept as is. */
const FIXED_GIT_TIMES = new Set(["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z"]);
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})/g;
/** The UTC stamp in recovery ref names (`20260601T120000.000Z`). */
const RECOVERY_STAMP = /\b\d{8}T\d{6}(?:\.\d+)?Z\b/g;
/** An await continuation handle in a printed command (random per run). */
const RESUME_HANDLE = /--resume [0-9a-f]{16}\b/g;
/** The port in a printed command's `env BERTH_PORT=…` (it follows from the random id). */
const PORT_ASSIGNMENT = /\bBERTH_PORT=\d+/g;
/** Keys whose values are timings: they differ on every run. */
const TIMING_KEY = /(?:^|_)(?:ms|duration|elapsed)$/;
/** Keys whose values follow from a random id (the port) or from the process. */
const PLACEHOLDER_KEYS: Record<string, string> = {
  port: "<port>",
  BERTH_PORT: "<port>",
  pid: "<pid>",
  host: "<host>",
  /** An await continuation handle: random per run. */
  resume: "<resume>",
};

/** Every expectation file a scenario wrote or compared in this run (all fixtures). */
export const RECORDED = new Set<string>();

export interface Recorded {
  file: string;
  actual: unknown;
  expected: unknown;
}

export interface RecordOptions {
  cwd?: string;
  /** stdout is JSON Lines: recorded as an array of the parsed lines. */
  jsonl?: boolean;
  /** Commits the run made whose content embeds a random id (asked after the run). */
  volatileOids?: () => string[];
}

export class Golden {
  /** Berth ids seen so far; `keepPrefix` when the id's words come from the name given. */
  private readonly ids = new Map<string, { keepPrefix: boolean }>();
  /** Commits whose content embeds a random id (a merge message naming the berth's branch). */
  private readonly volatileOids = new Set<string>();

  constructor(
    readonly repo: TestRepo,
    readonly env: NodeJS.ProcessEnv = repo.env,
  ) {}

  registerId(id: string, keepPrefix: boolean): void {
    this.ids.set(id, { keepPrefix });
  }

  registerVolatileOid(oid: string): void {
    this.volatileOids.add(oid);
  }

  /** Runs berth (not recorded); registers the id of a berth it started. */
  async berth(args: string[], cwd = this.repo.path): Promise<RunResult> {
    const run = await runBerth(args, { cwd, env: this.env });
    if (args[0] === "start" && typeof run.json?.data?.id === "string") {
      const named = args[1] !== undefined && !args[1].startsWith("--");
      this.registerId(run.json.data.id, named);
    }
    return run;
  }

  /** Starts a berth through the CLI and gives it one commit (`<file>` holding its name). */
  async start(
    name: string,
    options: { from?: string; file?: string } = {},
  ): Promise<{ id: string; branch: string; path: string }> {
    const args = ["start", name, ...(options.from ? ["--from", options.from] : []), "--json"];
    const run = await this.berth(args);
    if (run.code !== 0) throw new Error(`start ${name}: ${run.stdout}${run.stderr}`);
    const data = run.json.data as { id: string; branch: string; path: string };
    this.repo.write(options.file ?? `${name}.txt`, `${name}\n`, data.path);
    this.repo.commit(name, data.path);
    return data;
  }

  /**
   * Runs berth with `args` in `cwd` and records the scenario `name`: the
   * command, where it ran, its exit code and its parsed JSON (JSON Lines
   * as an array when `jsonl`).
   */
  async record(
    name: string,
    args: string[],
    options: RecordOptions = {},
  ): Promise<Recorded & { run: RunResult }> {
    const cwd = options.cwd ?? this.repo.path;
    const run = await this.berth(args, cwd);
    for (const oid of options.volatileOids?.() ?? []) this.registerVolatileOid(oid);
    const doc: Record<string, unknown> = { command: ["berth", ...args], cwd, exit: run.code };
    if (options.jsonl) {
      doc.json = run.stdout
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line));
    } else if (run.json !== undefined) {
      doc.json = run.json;
    } else {
      doc.stdout = run.stdout;
      doc.stderr = run.stderr;
    }
    const actual = this.normalise(doc);
    const file = `${name}.json`;
    if (RECORDED.has(file)) throw new Error(`scenario ${name} recorded twice`);
    RECORDED.add(file);
    const path = join(EXPECTED_DIR, file);
    if (UPDATING) {
      mkdirSync(EXPECTED_DIR, { recursive: true });
      writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
    }
    if (!existsSync(path)) {
      throw new Error(`no expectation ${path}: regenerate with BERTH_GOLDEN_UPDATE=1`);
    }
    const expected: unknown = JSON.parse(readFileSync(path, "utf8"));
    return { file, actual, expected, run };
  }

  /** Replaces exactly what differs between two runs of the same scenario. */
  normalise(doc: unknown): unknown {
    let text = JSON.stringify(doc);
    text = text.split(this.repo.dir.path).join("<tmp>");
    // A berth's database name (a reproduce line's BERTH_DB) is its id spelled with "_".
    const idOfDb = new Map([...this.ids.keys()].map((id) => [dbNameFor(id), id]));
    text = this.replaceInOrder(
      text,
      [...this.ids.keys(), ...idOfDb.keys()],
      (value, n) => {
        const id = idOfDb.get(value) ?? value;
        const joiner = id === value ? "-" : "_";
        return this.ids.get(id)?.keepPrefix ? `${value.slice(0, -7)}${joiner}<id${n}>` : `<id${n}>`;
      },
      (value) => idOfDb.get(value) ?? value,
    );
    text = text.replace(PORT_ASSIGNMENT, "BERTH_PORT=<port>");
    text = this.replaceInOrder(text, [...this.volatileOids], (_oid, n) => `<merge-oid${n}>`);
    text = text.replace(ISO_TIME, (time) => (FIXED_GIT_TIMES.has(time) ? time : "<time>"));
    text = text.replace(RECOVERY_STAMP, "<stamp>");
    text = text.replace(RESUME_HANDLE, "--resume <resume>");
    return this.normaliseFields(JSON.parse(text), new Map());
  }

  /** Replaces each of `values` in `text`, numbered by first appearance (of its `key`). */
  private replaceInOrder(
    text: string,
    values: string[],
    placeholder: (value: string, n: number) => string,
    key: (value: string) => string = (value) => value,
  ): string {
    if (values.length === 0) return text;
    const alternatives = [...values]
      .sort((a, b) => b.length - a.length)
      .map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const pattern = new RegExp(`(?<![a-z0-9])(?:${alternatives.join("|")})(?![a-z0-9])`, "g");
    const numbers = new Map<string, number>();
    return text.replace(pattern, (value) => {
      let n = numbers.get(key(value));
      if (n === undefined) {
        n = numbers.size + 1;
        numbers.set(key(value), n);
      }
      return placeholder(value, n);
    });
  }

  /** Field-level rules: timings to 0, ports/pids/hosts to placeholders, invocation ids numbered. */
  private normaliseFields(value: unknown, invocations: Map<string, string>): unknown {
    if (Array.isArray(value)) return value.map((v) => this.normaliseFields(v, invocations));
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (TIMING_KEY.test(key) && typeof v === "number") {
        out[key] = 0;
      } else if (key in PLACEHOLDER_KEYS && (typeof v === "number" || typeof v === "string")) {
        out[key] = PLACEHOLDER_KEYS[key];
      } else if (key === "invocation" && typeof v === "string") {
        let n = invocations.get(v);
        if (n === undefined) {
          n = `<invocation${invocations.size + 1}>`;
          invocations.set(v, n);
        }
        out[key] = n;
      } else {
        out[key] = this.normaliseFields(v, invocations);
      }
    }
    return out;
  }
}

/** Expectation files no scenario wrote (left from a renamed or removed scenario). */
export function staleExpectations(recorded: ReadonlySet<string>): string[] {
  if (!existsSync(EXPECTED_DIR)) return [];
  return readdirSync(EXPECTED_DIR)
    .filter((file) => file.endsWith(".json") && !recorded.has(file))
    .sort();
}

/** Formats the expectation files the way `biome check` wants them (arrays that fit on a line, on one). */
export function formatExpectations(): void {
  execFileSync(
    join(PROJECT_ROOT, "node_modules", ".bin", "biome"),
    ["format", "--write", EXPECTED_DIR],
    {
      cwd: PROJECT_ROOT,
      stdio: "ignore",
    },
  );
}

/** In update mode: removes expectation files no scenario wrote. */
export function removeStale(recorded: ReadonlySet<string>): void {
  for (const file of staleExpectations(recorded)) rmSync(join(EXPECTED_DIR, file));
}
