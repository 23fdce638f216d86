import { afterAll, describe, expect, it } from "vitest";
import { declaredProgram, leafCommands } from "../scripts/man-page.js";
import { LOGBOOK_OUTCOMES } from "../src/io/logbook.js";
import { makeRepo, makeTempDir, type RunResult, runBerth, type TestRepo } from "./helpers/repo.js";
import { envelopeProblem, logbookEventProblem, readSchema } from "./helpers/schemas.js";

/**
 * schemas/envelope.schema.json and schemas/logbook-event.schema.json against
 * the built binary (`npm run build` first). runBerth validates every `--json`
 * output of every test against them (helpers/schemas.ts); this file runs
 * every verb the CLI declares once, so none goes unchecked, and shows that
 * the schemas refuse what the contract forbids.
 */

const ENVELOPE = readSchema("envelope.schema.json");
const DATA_SCHEMAS = Object.keys(
  (ENVELOPE.definitions as { data: Record<string, unknown> }).data,
).sort();
// The harness hooks and `mcp` print what their callers read (a path, MCP frames), never an envelope.
const VERBS = leafCommands(declaredProgram())
  .filter((c) => c.command.options.some((o) => o.flags === "--json"))
  .map((c) => c.name)
  .sort();

const CONFIG = `[gate]
checks = [{ name = "ok", run = "true" }]

[worktree.resources.db]
create = 'true'
destroy = 'true'
`;

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

/** The verbs whose output this file's runs produced (and runBerth validated). */
const seen = new Map<string, RunResult>();

async function berth(repo: TestRepo, args: string[], cwd = repo.path): Promise<RunResult> {
  const run = await runBerth([...args, "--json"], { cwd, env: repo.env });
  const group = args[0] === "worktree" || args[0] === "queue";
  const sub = args[1];
  const verb =
    group && sub !== undefined && !sub.startsWith("-") ? `${args[0]} ${sub}` : (args[0] as string);
  if (!seen.has(verb)) seen.set(verb, run);
  return run;
}

describe("every verb's --json output matches the schemas", { timeout: 180_000 }, () => {
  it("declares a data schema for exactly the verbs the CLI has", () => {
    expect(DATA_SCHEMAS).toEqual(VERBS);
  });

  it("runs each verb once through the built binary; runBerth validates each document", async () => {
    const plain = makeRepo();
    cleanups.push(plain.cleanup);
    expect((await berth(plain, ["init"])).json.ok).toBe(true);

    const repo = makeRepo({ config: CONFIG });
    cleanups.push(repo.cleanup);
    const a = (await berth(repo, ["start", "first stage"])).json.data;
    repo.write("a.txt", "work\n", a.path);
    repo.commit("stage work", a.path);
    expect((await berth(repo, ["status"])).json.data.worktrees).toHaveLength(2);
    expect((await berth(repo, ["gate"], a.path)).json.data.green).toBe(true);
    expect((await berth(repo, ["update"], a.path)).json.data.up_to_date).toBe(true);
    const awaited = await berth(repo, ["await", "--green", a.branch, "--timeout", "0"]);
    expect(awaited.json.data.met).toBe(true);
    expect((await berth(repo, ["worktree", "setup"], a.path)).code).toBe(0);
    expect((await berth(repo, ["worktree", "teardown", "--yes"], a.path)).code).toBe(0);
    const b = (await berth(repo, ["start", "second"])).json.data;
    repo.write("b.txt", "work\n", b.path);
    repo.commit("second's work", b.path);
    expect((await berth(repo, ["describe", b.id, "--title", "Second"])).json.data.changed).toBe(
      true,
    );
    const shelf = (await berth(repo, ["start", "shelf"])).json.data;
    expect((await berth(repo, ["worktree", "park", shelf.id, "--yes"])).json.data.parked).toBe(
      true,
    );
    expect((await berth(repo, ["path", b.id])).json.data.berth.path).toBe(b.path);
    expect((await berth(repo, ["switch", b.id])).json.data.berth.path).toBe(b.path);
    expect((await berth(repo, ["shell-init", "bash"])).json.data.shell).toBe("bash");
    expect((await berth(repo, ["completion", "bash"])).json.data.shell).toBe("bash");
    // A fresh berth is not contained (the idle clause): reclaim refuses it, changing nothing.
    // Its success documents are validated by test/worktree-reclaim.e2e.test.ts.
    const reclaim = await berth(repo, ["worktree", "reclaim", b.id, "--yes"]);
    expect(reclaim.json.error.code).toBe("precondition_failed");
    // The landing queue: b waits for approval (--no-wait, no --yes), is approved, then withdrawn;
    // a grant before submission; a's accept lands through the queue.
    const waiting = await berth(repo, ["accept", b.id, "--no-wait"]);
    expect(waiting.json.data.queue.state).toBe("awaiting_approval");
    expect((await berth(repo, ["queue"])).json.data.entries).toHaveLength(1);
    expect((await berth(repo, ["queue", "approve", b.id])).json.data.entry.state).toBe("queued");
    expect((await berth(repo, ["queue", "withdraw", b.id])).json.data.entry.state).toBe(
      "withdrawn",
    );
    expect((await berth(repo, ["queue", "run"])).json.data.decided).toEqual([]);
    expect((await berth(repo, ["worktree", "drop", b.id, "--force", "--yes"])).json.ok).toBe(true);
    const landed = await berth(repo, ["accept", a.id, "--yes"]);
    expect(landed.json.data.landing.trunk_landed).toBe(true);
    expect(landed.json.data.queue).toMatchObject({ state: "landed", authority: "confirmed" });
    const afterLanding = await berth(repo, ["queue"]);
    expect(afterLanding.json.data.entries.map((e: { state: string }) => e.state)).toEqual([
      "withdrawn",
      "landed",
    ]);
    expect((await berth(repo, ["worktree", "prune", "--yes"])).code).toBe(0);
    const logbook = await berth(repo, ["logbook"]);
    expect(logbook.code).toBe(0);
    expect(logbook.stdout.split("\n").filter(Boolean).length).toBeGreaterThan(10);
    expect((await berth(repo, ["desk"])).json.error.code).toBe("precondition_failed");

    const dir = makeTempDir();
    cleanups.push(dir.cleanup);
    const tour = await runBerth(["tour", "--json"], { cwd: dir.path, env: dir.env });
    expect(tour.json.ok).toBe(true);
    seen.set("tour", tour);

    expect([...seen.keys()].sort()).toEqual(VERBS);
    for (const [verb, run] of seen) {
      // desk only ever refuses --json; logbook prints JSON Lines when it succeeds; reclaim refused above.
      if (verb === "desk" || verb === "logbook" || verb === "worktree reclaim") continue;
      expect(run.json?.ok, `${verb}: ${run.stdout}${run.stderr}`).toBe(true);
    }
  });
});

/** A status document as the binary prints it, for the refusals below. */
async function statusDocument(): Promise<Record<string, unknown>> {
  const repo = makeRepo();
  cleanups.push(repo.cleanup);
  await runBerth(["start", "row", "--json"], { cwd: repo.path, env: repo.env });
  const run = await runBerth(["status", "--json"], { cwd: repo.path, env: repo.env });
  expect(envelopeProblem(run.json)).toBeNull();
  return run.json;
}

describe("what the envelope schema refuses and allows", () => {
  const copy = <T>(value: T): T => structuredClone(value);

  it("keeps the top level closed and data open", async () => {
    const doc = await statusDocument();
    expect(envelopeProblem({ ...doc, extra: 1 })).toMatch(/must NOT have additional properties/);
    const { hints: _hints, ...withoutHints } = doc;
    expect(envelopeProblem(withoutHints)).toMatch(/must have required property 'hints'/);
    // Verbs' data may gain fields, at any depth (docs/decisions/0021).
    const added = copy(doc) as { data: { worktrees: Record<string, unknown>[] } } & object;
    Object.assign(added.data, { new_field: [1, 2] });
    Object.assign(added.data.worktrees[0] as object, { new_row_field: "x" });
    expect(envelopeProblem(added)).toBeNull();
  });

  it("refuses a documented field of another type, a short commit id, a missing field", async () => {
    const doc = await statusDocument();
    const retyped = copy(doc) as { data: { worktrees: Record<string, unknown>[] } };
    (retyped.data.worktrees[1] as Record<string, unknown>).ahead = "1";
    expect(envelopeProblem(retyped)).toMatch(/worktrees\/1\/ahead must be integer,null/);
    const short = copy(doc) as { data: { worktrees: Record<string, unknown>[] } };
    (short.data.worktrees[0] as Record<string, unknown>).head = "d33ef17";
    expect(envelopeProblem(short)).toMatch(/worktrees\/0\/head must match pattern/);
    const missing = copy(doc) as { data: Record<string, unknown> };
    delete missing.data.refs;
    expect(envelopeProblem(missing)).toMatch(/must have required property 'refs'/);
  });

  it("ties ok to error, and ok:true to a verb with a data schema", () => {
    const base = { ok: true, verb: "init", data: { path: "/r/berth.toml", trunk: "main" } };
    expect(envelopeProblem({ ...base, hints: [] })).toBeNull();
    expect(envelopeProblem({ ...base, verb: "frobnicate", hints: [] })).toMatch(
      /must be equal to one of the allowed values/,
    );
    const error = { code: "precondition_failed", message: "no" };
    expect(envelopeProblem({ ...base, hints: [], error })).toMatch(/must NOT be valid/);
    expect(envelopeProblem({ ...base, ok: false, data: null, hints: [] })).toMatch(
      /must have required property 'error'/,
    );
    expect(envelopeProblem({ ...base, ok: false, data: null, hints: [], error })).toBeNull();
    expect(
      envelopeProblem({
        ...base,
        ok: false,
        data: null,
        hints: [],
        error: { ...error, code: "x" },
      }),
    ).toMatch(/code must be equal to one of the allowed values/);
    const usage = {
      ok: false,
      verb: "frobnicate",
      hints: [],
      error: { code: "usage", message: "?" },
    };
    expect(envelopeProblem({ ...usage, data: null })).toBeNull();
    expect(envelopeProblem({ ...usage, data: {} })).toMatch(/data must be null/);
  });

  it("checks logbook events: begin without finish fields, finish with them", () => {
    const begin = {
      schema: 1,
      event: "begin",
      at: "2026-06-01T12:00:00.000Z",
      invocation: "abc",
      verb: "start",
      branch: "berth/x",
      path: "/r/x",
      pid: 42,
      host: "h",
    };
    const finish = { ...begin, event: "finish", outcome: "ok", error_code: null, duration_ms: 3 };
    expect(logbookEventProblem(begin)).toBeNull();
    expect(logbookEventProblem(finish)).toBeNull();
    expect(logbookEventProblem({ ...begin, outcome: "ok" })).toMatch(/must NOT be valid/);
    const { duration_ms: _ms, ...unfinished } = finish;
    expect(logbookEventProblem(unfinished)).toMatch(/required property 'duration_ms'/);
    expect(logbookEventProblem({ ...begin, pid: "42" })).toMatch(/pid must be integer/);
    expect(logbookEventProblem({ ...begin, at: "yesterday" })).toMatch(/at must match format/);
  });
});

describe("the schemas and the code name the same logbook outcomes", () => {
  it("the envelope's and the logbook event's outcome enums are LOGBOOK_OUTCOMES", () => {
    const envelope = (ENVELOPE.definitions as Record<string, { enum: string[] }>).logbookOutcome;
    const event = (
      readSchema("logbook-event.schema.json").properties as Record<string, { enum: string[] }>
    ).outcome;
    expect([...(envelope?.enum ?? [])].sort()).toEqual([...LOGBOOK_OUTCOMES].sort());
    expect([...(event?.enum ?? [])].sort()).toEqual([...LOGBOOK_OUTCOMES].sort());
  });
});
