import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { receiptPath } from "../src/io/receipt-file.js";
import { isGone, leftovers, waitFor } from "./helpers/processes.js";
import { BERTH_BIN, makeRepo, type TestRepo } from "./helpers/repo.js";

/**
 * A client that closes `berth mcp`'s stdin while a tool call runs (it quit,
 * or its session ended): the server interrupts the call as a Ctrl-C would,
 * answers it, and exits. A gate's checks run in their own process groups, so
 * a server that simply exited would leave them running as orphans.
 */

let repo: TestRepo | undefined;
const spawned = leftovers();
afterEach(() => {
  spawned.killAll();
  repo?.cleanup();
});

const message = (body: object) => `${JSON.stringify({ jsonrpc: "2.0", ...body })}\n`;

describe("berth mcp when its client goes away mid-call", () => {
  it("stops the running gate's checks, answers the call, and exits", async () => {
    repo = makeRepo();
    const pidFile = join(repo.dir.path, "check.pid");
    const check = `sleep 300 & echo $! > ${pidFile}; wait`;
    repo.write("berth.toml", `[gate]\nchecks = [{ name = "long", run = "${check}" }]\n`);
    repo.commit("gate with one long check");

    const server = spawn(process.execPath, [BERTH_BIN, "mcp"], {
      cwd: repo.path,
      env: repo.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    server.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => server.on("close", resolve));
    server.stdin.write(
      message({
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "leaving-client", version: "1" },
        },
      }) +
        message({ method: "notifications/initialized" }) +
        message({ id: 2, method: "tools/call", params: { name: "gate", arguments: {} } }),
    );
    const pid = () => {
      const text = existsSync(pidFile) ? readFileSync(pidFile, "utf8") : "";
      return text.endsWith("\n") ? Number(text.trim()) : null;
    };
    await waitFor("the check to start", () => pid() !== null, 20_000);
    const sleeper = pid() as number;
    spawned.add(sleeper);

    server.stdin.end();
    expect(await exited).toBe(0);
    expect(isGone(sleeper)).toBe(true);
    const answers = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const gate = answers.find((a) => a.id === 2);
    expect(gate?.result?.structuredContent).toMatchObject({ ok: false, verb: "gate" });
    expect(existsSync(receiptPath(join(repo.path, ".git")))).toBe(false);
  });
});
