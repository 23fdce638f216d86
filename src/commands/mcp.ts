import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { VERSION } from "../version.js";
import { interruptRunning } from "./interrupt.js";
import { callTool, TOOLS } from "./mcp-tools.js";

/**
 * `berth mcp`: a stdio MCP server over the tools in mcp-tools.ts. Only this
 * verb imports the MCP SDK and zod (cli-run.ts loads this module on demand), so
 * every other verb starts as before. stdout carries the protocol alone: the
 * verbs' own progress and stories go to stderr.
 */

const INSTRUCTIONS = [
  "berth runs a fleet of git worktrees (berths), one per line of work.",
  "Workflow: start (work in the path it returns), commit, gate, accept, then await landed.",
  "Pass path (absolute) to act in a berth or repository other than the server's folder.",
  "accept lands only with a grant; otherwise a person approves with the command it names.",
  "No tool removes a berth: dropping, pruning and reclaiming stay a person's decision.",
].join(" ");

/** The `--json` envelope as an output schema: the shape every tool's structured content has. */
const ENVELOPE = z.looseObject({
  ok: z.boolean(),
  verb: z.string(),
  data: z.unknown(),
  hints: z.array(z.string()),
});

/** Tool calls not yet answered: the server waits for them before it exits. */
const inFlight = new Set<Promise<unknown>>();

export function buildMcpServer(): McpServer {
  const server = new McpServer({ name: "berth", version: VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: ENVELOPE,
        annotations: {
          title: tool.title,
          readOnlyHint: tool.readOnly,
          destructiveHint: tool.destructive,
          idempotentHint: tool.readOnly,
          openWorldHint: false,
        },
      },
      async (args: Record<string, unknown>, extra: { signal: AbortSignal }) => {
        // extra.signal: the client cancelled this call (notifications/cancelled).
        const call = callTool(tool, args, extra.signal);
        inFlight.add(call);
        const answer = await call.finally(() => inFlight.delete(call));
        return {
          content: [{ type: "text" as const, text: answer.text }],
          structuredContent: answer.envelope,
          isError: answer.isError,
        };
      },
    );
  }
  return server;
}

/** What ends the server besides its client closing stdin: a supervisor's stop, or a Ctrl-C. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Serves on stdin/stdout until the client closes stdin, or a stop signal
 * (SIGINT, SIGTERM, SIGHUP) says to, idle or mid-call alike: a running
 * call's own handler takes the signal only to stop that call. Calls still running then are interrupted, as a Ctrl-C would (a
 * gate stops its checks, an await ends), and answered before the server
 * exits: none is cut off mid-way with its child processes left running.
 */
export async function serveMcp(): Promise<void> {
  const server = buildMcpServer();
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
    for (const name of STOP_SIGNALS) process.once(name, () => resolve());
  });
  await server.connect(transport);
  await closed;
  interruptRunning();
  await Promise.allSettled([...inFlight]);
  // The SDK sends each answer once its handler has returned: a turn of the event loop later.
  await new Promise((resolve) => setImmediate(resolve));
  await server.close().catch(() => undefined);
}
