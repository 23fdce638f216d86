import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * `berth mcp` driven by the official SDK client over stdio, on the built
 * binary and a real repository (spec section 12).
 */

const GATED = '[[gate.checks]]\nname = "ok"\nrun = "true"\n';

let repo: TestRepo | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  repo?.cleanup();
});

async function connect(r: TestRepo): Promise<Client> {
  const env = Object.fromEntries(
    Object.entries(r.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BERTH_BIN, "mcp"],
    cwd: r.path,
    env,
    stderr: "pipe",
  });
  const c = new Client({ name: "berth-test", version: "1.0.0" });
  await c.connect(transport);
  client = c;
  return c;
}

// biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb.
type Answer = { isError: boolean | undefined; text: string; env: any };

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const result = await c.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  return {
    isError: result.isError as boolean | undefined,
    text: content[0]?.text ?? "",
    env: result.structuredContent,
  };
}

describe("berth mcp", () => {
  it("lists strict tools, none that removes a berth", async () => {
    const r = makeRepo();
    repo = r;
    const c = await connect(r);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ["accept", "await", "gate", "logbook", "queue", "start", "status", "update"].sort(),
    );
    expect(tools.filter((t) => /drop|prune|reclaim|remove|delete/i.test(t.name))).toEqual([]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      expect(Object.keys(tool.inputSchema.properties ?? {})).toContain("path");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(
        ["status", "logbook", "queue"].includes(tool.name),
      );
    }
    expect(tools.find((t) => t.name === "accept")?.annotations?.destructiveHint).toBe(true);
  });

  it("starts, surveys, gates and waits with a resume handle on a real repository", async () => {
    const r = makeRepo({ config: GATED });
    repo = r;
    const c = await connect(r);

    const start = await call(c, "start", { name: "mcp work" });
    expect(start.isError, start.text).toBe(false);
    expect(start.env).toMatchObject({ ok: true, verb: "start", hints: expect.any(Array) });
    const { id, path, branch } = start.env.data;
    expect(id).toMatch(/^mcp-work-[0-9a-f]{6}$/);
    expect(existsSync(path)).toBe(true);
    expect(start.text).toBe(`started ${id} on ${branch} at ${path} (port ${start.env.data.port})`);

    r.write("feature.txt", "feature\n", path);
    const tip = r.commit("feature", path);

    const status = await call(c, "status", { path });
    expect(status.env).toMatchObject({ ok: true, verb: "status" });
    expect(status.env.data.scope).toBe("local");
    const row = status.env.data.worktrees.find((w: { id: string }) => w.id === id);
    expect(row).toMatchObject({ branch, head: tip, ahead: 1, clean: true });

    const gate = await call(c, "gate", { path });
    expect(gate.isError, gate.text).toBe(false);
    expect(gate.env).toMatchObject({ ok: true, verb: "gate" });
    expect(gate.env.data.branch).toBe(branch);

    const before = Date.now();
    const wait = await call(c, "await", { path: r.path, trunk_moved: true, timeout_s: 1 });
    expect(Date.now() - before).toBeLessThan(50_000);
    expect(wait.isError).toBe(false);
    expect(wait.env.verb).toBe("await");
    expect(wait.env.data.met).toBe(false);
    expect(wait.env.data.resume).toMatch(/^[0-9a-f]{16}$/);
    expect(wait.text).toContain(wait.env.data.resume);

    const resumed = await call(c, "await", { resume: wait.env.data.resume, timeout_s: 0 });
    expect(resumed.env.data).toMatchObject({ met: false, resumed: true });

    // Effectful calls are logged with their surface.
    const logbook = await call(c, "logbook", { verb: "start" });
    expect(logbook.env.ok).toBe(true);
    const surfaces = logbook.env.data.events.map((e: { surface?: string }) => e.surface);
    expect(surfaces).toEqual(["mcp", "mcp"]);
    const gates = await call(c, "logbook", { verb: "gate" });
    expect(
      gates.env.data.events.map((e: { surface?: string; target: string }) => [e.surface, e.target]),
    ).toEqual([
      ["mcp", branch],
      ["mcp", branch],
    ]);
  });

  it("answers bad arguments with a tool error naming the field, and keeps serving", async () => {
    const r = makeRepo();
    repo = r;
    const c = await connect(r);
    const mistyped = await call(c, "await", { trunk_moved: true, timeout_s: "soon" });
    expect(mistyped.isError).toBe(true);
    expect(mistyped.text).toContain("timeout_s");
    const over = await call(c, "await", { trunk_moved: true, timeout_s: 3300 });
    expect(over.isError).toBe(true);
    expect(over.text).toMatch(/timeout_s: expected at most 50/);
    const unknown = await call(c, "start", { nmae: "typo" });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain("nmae");
    const relative = await call(c, "status", { path: "repo" });
    expect(relative.isError).toBe(true);
    expect(relative.text).toContain("path: expected an absolute path");
    // A folder that does not exist is the folder's fault: git is there.
    const missing = await call(c, "gate", { path: `${r.path}-nowhere` });
    expect(missing.isError).toBe(true);
    expect(missing.env).toMatchObject({ ok: false, error: { code: "not_a_repository" } });
    expect(missing.text).toContain(`${r.path}-nowhere is not a folder that exists`);
    expect(missing.text).not.toContain("no git on PATH");
    // A file, or a path with a NUL byte, is no folder either: the same refusal, not internal.
    r.write("notes.txt", "a file\n");
    for (const path of [`${r.path}/notes.txt`, `${r.path}\u0000x`]) {
      const none = await call(c, "status", { path });
      expect(none.isError).toBe(true);
      expect(none.env, JSON.stringify(path)).toMatchObject({
        ok: false,
        error: { code: "not_a_repository" },
      });
      expect(none.text).toContain("name (or cd into) a folder inside a git repository");
    }
    // Nothing started, and the server still answers.
    expect(r.git(["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(1);
    const status = await call(c, "status", {});
    expect(status.env).toMatchObject({ ok: true, verb: "status" });
  });

  it("logbook refuses a since too large for a date as usage, not internal", async () => {
    const r = makeRepo();
    repo = r;
    const c = await connect(r);
    const far = await call(c, "logbook", { since: "9999999999999999d" });
    expect(far.isError).toBe(true);
    expect(far.env).toMatchObject({ ok: false, verb: "logbook", error: { code: "usage" } });
    expect(far.text).toContain("expected an ISO time or an age");
    expect(far.text).not.toContain("Invalid time value");
  });

  it("a dry-run gate's text says nothing ran, not green; an update with nothing to merge says so", async () => {
    const r = makeRepo({ config: '[[gate.checks]]\nname = "good"\nrun = "grep -q good x"\n' });
    repo = r;
    const c = await connect(r);
    const start = await call(c, "start", { name: "dry" });
    const { path, branch } = start.env.data;
    r.write("x", "bad\n", path);
    r.commit("the check fails on this commit", path);

    const dry = await call(c, "gate", { path, dry_run: true });
    expect(dry.env).toMatchObject({ ok: true, verb: "gate", data: { green: null } });
    expect(dry.text).not.toContain("green");
    expect(dry.text).toContain(`dry run: would gate ${branch}`);
    expect(dry.text).toContain("1 check(s); nothing ran");
    const real = await call(c, "gate", { path });
    expect(real.env.data.green).toBe(false);

    const update = await call(c, "update", { path });
    expect(update.env).toMatchObject({ ok: true, data: { up_to_date: true } });
    expect(update.text).toBe(`${branch} is already up to date with main; nothing merged`);
  });

  it("accept never lands without a grant: the entry waits for a person, who lands it", async () => {
    const r = makeRepo({ config: GATED });
    repo = r;
    const c = await connect(r);
    const start = await call(c, "start", { name: "ungranted" });
    const { id, path, branch } = start.env.data;
    r.write("work.txt", "work\n", path);
    const tip = r.commit("work", path);
    const trunk = r.git(["rev-parse", "main"]);
    const empty = await call(c, "queue", {});
    expect(empty.env).toMatchObject({ ok: true, verb: "queue", data: { entries: [] } });

    const accept = await call(c, "accept", { path });
    expect(accept.isError).toBe(false);
    expect(accept.env.ok).toBe(false);
    expect(accept.env.error.code).toBe("awaiting_approval");
    expect(accept.env.error.next).toBe(`berth accept ${id}`);
    expect(accept.text).toContain(`berth accept ${id}`);
    expect(accept.env.data.queue).toMatchObject({ state: "awaiting_approval", position: 1 });
    expect(r.git(["rev-parse", "main"])).toBe(trunk);
    expect(existsSync(path)).toBe(true);

    // The read-only queue tool shows the entry waiting; reading it changes nothing.
    const queue = await call(c, "queue", { path });
    expect(queue.isError, queue.text).toBe(false);
    expect(queue.env.data.entries).toMatchObject([
      { id, branch, tip, state: "awaiting_approval", position: 1, authority: null },
    ]);
    expect(queue.text).toBe("1 landing-queue entry, 1 still to be decided");
    expect(r.git(["rev-parse", "main"])).toBe(trunk);

    // The person's command from error.next lands it.
    const landed = await runBerth(["accept", id, "--yes", "--json"], { cwd: r.path, env: r.env });
    expect(landed.json.ok).toBe(true);
    expect(r.git(["rev-parse", "main"])).toBe(tip);
    const after = await call(c, "queue", {});
    expect(after.env.data.entries).toMatchObject([
      { id, state: "landed", position: null, authority: "confirmed" },
    ]);
  });

  it("accept does not tear down a berth already on the trunk without a grant", async () => {
    const r = makeRepo({ config: GATED });
    repo = r;
    const c = await connect(r);
    const start = await call(c, "start", { name: "by hand" });
    const { id, path, branch } = start.env.data;
    r.write("work.txt", "work\n", path);
    const tip = r.commit("work", path);
    r.git(["merge", "-q", "--ff-only", branch]); // landed by hand: only the teardown is left
    const accept = await call(c, "accept", { path });
    expect(accept.isError).toBe(false);
    expect(accept.env.error.code).toBe("awaiting_approval");
    expect(accept.env.error.message).toContain("only its teardown is left");
    expect(accept.env.error.next).toBe(`berth accept ${id}`);
    expect(accept.env.data.queue).toBeNull();
    expect(existsSync(path)).toBe(true);
    expect(r.git(["rev-parse", branch])).toBe(tip);
    const queue = await call(c, "queue", {});
    expect(queue.env.data.entries).toEqual([]);
  });

  it("accept lands with the standing grant [acceptance] pre_authorized", async () => {
    const r = makeRepo({ config: `${GATED}[acceptance]\npre_authorized = true\n` });
    repo = r;
    const c = await connect(r);
    const start = await call(c, "start", { name: "granted" });
    const { path } = start.env.data;
    r.write("work.txt", "work\n", path);
    const tip = r.commit("work", path);
    const accept = await call(c, "accept", { path });
    expect(accept.isError, accept.text).toBe(false);
    expect(accept.env).toMatchObject({ ok: true, verb: "accept" });
    expect(r.git(["rev-parse", "main"])).toBe(tip);
    expect(existsSync(path)).toBe(false);
  });
});
