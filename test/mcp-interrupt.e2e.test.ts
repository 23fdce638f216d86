import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { isGone, leftovers, recordedPid, waitFor } from "./helpers/processes.js";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Every `berth mcp` tool that runs project commands or lands goes through
 * one interrupt: a client that closes the server's stdin, or cancels the
 * call (`notifications/cancelled`), stops it as a Ctrl-C of the CLI verb
 * would. An interrupted accept withdraws its entry (as `berth accept` does on
 * a Ctrl-C) instead of leaving it `gating` under a lander that is gone.
 */

let repo: TestRepo | undefined;
let client: Client | undefined;
const spawned = leftovers();
afterEach(async () => {
  spawned.killAll();
  await client?.close();
  client = undefined;
  repo?.cleanup();
});

/** A granted fleet whose one check records its pid and runs until stopped. */
function slowGateRepo(): { r: TestRepo; pidFile: string } {
  const r = makeRepo();
  const pidFile = join(r.dir.path, "check.pid");
  r.write(
    "berth.toml",
    `[acceptance]\npre_authorized = true\n[gate]\nchecks = [{ name = "slow", run = "sleep 300 & echo $! > ${pidFile}; wait" }]\n`,
  );
  r.commit("a granted fleet with one long check");
  return { r, pidFile };
}

function serverEnv(r: TestRepo): Record<string, string> {
  return Object.fromEntries(
    Object.entries(r.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/**
 * The SDK client over a server this test spawned, so the test can close the
 * server's stdin (the client went away) and still read the answers it sends.
 */
function pipeTransport(server: ChildProcessWithoutNullStreams): Transport {
  const buffer = new ReadBuffer();
  const transport: Transport = {
    start: async () => {
      server.stdout.on("data", (chunk: Buffer) => {
        buffer.append(chunk);
        for (let m = buffer.readMessage(); m !== null; m = buffer.readMessage()) {
          transport.onmessage?.(m);
        }
      });
      server.on("close", () => transport.onclose?.());
    },
    send: async (message: JSONRPCMessage) => {
      server.stdin.write(serializeMessage(message));
    },
    close: async () => {
      server.stdin.end();
    },
  };
  return transport;
}

/** A berth with one commit, started through the MCP start tool. */
async function berthWithWork(c: Client, r: TestRepo): Promise<{ id: string; path: string }> {
  const start = await c.callTool({ name: "start", arguments: { name: "slow work" } });
  // biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb.
  const { id, path } = (start.structuredContent as any).data;
  r.write("work.txt", "work\n", path);
  r.commit("work", path);
  return { id, path };
}

async function queueEntry(r: TestRepo, id: string) {
  const queue = await runBerth(["queue", "--json"], { cwd: r.path, env: r.env });
  return queue.json.data.entries.find((e: { id: string }) => e.id === id);
}

/** Polls the queue (a berth process) until the entry is in `state`; its last state after 20 s. */
async function waitForEntry(r: TestRepo, id: string, state: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await queueEntry(r, id))?.state !== state && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `promise`'s value, or a failure naming `what` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function checkStarted(pidFile: string): Promise<number> {
  await waitFor("the check to start", () => recordedPid(pidFile) !== null, 30_000);
  const pid = recordedPid(pidFile) as number;
  spawned.add(pid);
  return pid;
}

describe("berth mcp interrupts a landing when its client goes away", () => {
  it("accept: stdin closes mid-gate; the check stops, the answer says interrupted, the entry is withdrawn, the server exits", async () => {
    const { r, pidFile } = slowGateRepo();
    repo = r;
    const server = spawn(process.execPath, [BERTH_BIN, "mcp"], {
      cwd: r.path,
      env: r.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    spawned.add(server.pid as number);
    const exited = new Promise<number | null>((resolve) => server.on("close", resolve));
    const c = new Client({ name: "leaving-client", version: "1" });
    await c.connect(pipeTransport(server));
    const { id, path } = await berthWithWork(c, r);
    const trunk = r.git(["rev-parse", "main"]);

    // Settled either way: a server that never answers must fail the test, not leave a rejection.
    const accept = c.callTool({ name: "accept", arguments: { path } }).then(
      (answer) => answer,
      (error: Error) => ({ isError: undefined, structuredContent: { thrown: error.message } }),
    );
    const sleeper = await checkStarted(pidFile);
    server.stdin.end();

    // On its own: no SIGTERM is sent (an SDK client's close sends one after 2 s).
    expect(await within(exited, 20_000, "the server to exit")).toBe(0);
    expect(isGone(sleeper)).toBe(true);
    const answer = await accept;
    expect(answer.isError).toBe(true);
    expect(answer.structuredContent).toMatchObject({ ok: false, verb: "accept" });
    // biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb.
    const envelope = answer.structuredContent as any;
    expect(envelope.error.message).toContain("interrupted");
    expect(envelope.data.queue).toMatchObject({ state: "withdrawn", rejection: null });
    expect(await queueEntry(r, id)).toMatchObject({ state: "withdrawn", position: null });
    // Decided: nothing is left for the next lander to finish.
    const drained = await runBerth(["queue", "run", "--json"], { cwd: r.path, env: r.env });
    expect(drained.json.data.decided).toEqual([]);
    expect(r.git(["rev-parse", "main"])).toBe(trunk);
  });
});

describe("berth mcp stops on a stop signal with its stdin still open", () => {
  function serve(r: TestRepo) {
    const server = spawn(process.execPath, [BERTH_BIN, "mcp"], {
      cwd: r.path,
      env: r.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    spawned.add(server.pid as number);
    const exited = new Promise<number | null>((resolve) => server.on("close", resolve));
    return { server, exited };
  }

  it("SIGTERM mid-gate: the check stops, the call is answered interrupted, the server exits", async () => {
    const { r, pidFile } = slowGateRepo();
    repo = r;
    const { server, exited } = serve(r);
    const c = new Client({ name: "supervised-client", version: "1" });
    await c.connect(pipeTransport(server));
    const { path } = await berthWithWork(c, r);
    const trunk = r.git(["rev-parse", "main"]);
    const accept = c.callTool({ name: "accept", arguments: { path } }).then(
      (answer) => answer,
      (error: Error) => ({ isError: undefined, structuredContent: { thrown: error.message } }),
    );
    const sleeper = await checkStarted(pidFile);
    server.kill("SIGTERM");

    expect(await within(exited, 20_000, "the server to exit")).toBe(0);
    expect(isGone(sleeper)).toBe(true);
    const answer = await accept;
    expect(answer.isError).toBe(true);
    // biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb.
    expect((answer.structuredContent as any).error.message).toContain("interrupted");
    expect(r.git(["rev-parse", "main"])).toBe(trunk);
  });

  it("SIGTERM while idle: the server exits 0", async () => {
    const r = makeRepo();
    repo = r;
    const { server, exited } = serve(r);
    const c = new Client({ name: "supervised-client", version: "1" });
    await c.connect(pipeTransport(server));
    await c.callTool({ name: "status", arguments: {} });
    server.kill("SIGTERM");
    expect(await within(exited, 20_000, "the server to exit")).toBe(0);
  });
});

describe("berth mcp stops a call its client cancels", () => {
  async function connect(r: TestRepo): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BERTH_BIN, "mcp"],
      cwd: r.path,
      env: serverEnv(r),
      stderr: "pipe",
    });
    const c = new Client({ name: "cancelling-client", version: "1" });
    await c.connect(transport);
    client = c;
    return c;
  }

  it("accept: the check stops, the entry is withdrawn, and the server keeps serving", async () => {
    const { r, pidFile } = slowGateRepo();
    repo = r;
    const c = await connect(r);
    const { id, path } = await berthWithWork(c, r);
    const trunk = r.git(["rev-parse", "main"]);

    const cancel = new AbortController();
    const accept = c.callTool({ name: "accept", arguments: { path } }, undefined, {
      signal: cancel.signal,
    });
    const sleeper = await checkStarted(pidFile);
    cancel.abort("the agent moved on");
    await expect(accept).rejects.toThrow();

    await waitFor("the check to stop", () => isGone(sleeper), 20_000);
    // The server answers nothing to a cancelled call: the entry says how it ended.
    await waitForEntry(r, id, "withdrawn");
    expect(await queueEntry(r, id)).toMatchObject({ state: "withdrawn", position: null });
    expect(r.git(["rev-parse", "main"])).toBe(trunk);

    // The same server answers the next call, and the logbook says the accept was interrupted.
    const logbook = await c.callTool({ name: "logbook", arguments: { verb: "accept" } });
    // biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb.
    const events = (logbook.structuredContent as any).data.events;
    expect(events.at(-1)).toMatchObject({ event: "finish", outcome: "interrupted" });
  });

  it("gate: the check stops and no receipt is written", async () => {
    const { r, pidFile } = slowGateRepo();
    repo = r;
    const c = await connect(r);
    const { id, path } = await berthWithWork(c, r);

    const cancel = new AbortController();
    const gate = c.callTool({ name: "gate", arguments: { path } }, undefined, {
      signal: cancel.signal,
    });
    const sleeper = await checkStarted(pidFile);
    cancel.abort("the agent moved on");
    await expect(gate).rejects.toThrow();
    await waitFor("the check to stop", () => isGone(sleeper), 20_000);

    const status = await c.callTool({ name: "status", arguments: { path } });
    // biome-ignore lint/suspicious/noExplicitAny: the envelope's data is per verb.
    const row = (status.structuredContent as any).data.worktrees.find(
      (w: { id: string }) => w.id === id,
    );
    expect(row.receipt).toBe("missing");
  });
});
