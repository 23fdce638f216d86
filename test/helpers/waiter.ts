import { spawn } from "node:child_process";
import { logbookLines } from "./logbook.js";
import { BERTH_BIN, type RunResult } from "./repo.js";
import { assertJsonOutput } from "./schemas.js";

/** The built binary running in the background, with its pid and when it exited. */
export interface Waiter {
  pid: number;
  /** Exit code once it exited, else null. */
  exit: number | null;
  /** When it exited (Date.now()). */
  exitedAt: number | null;
  done: Promise<RunResult>;
  kill(signal: NodeJS.Signals): void;
}

/** Like runBerth, a `--json` answer is checked against its schema: \`done\` rejects if it is not valid. */
export function startBackground(args: string[], cwd: string, env: NodeJS.ProcessEnv): Waiter {
  const child = spawn(process.execPath, [BERTH_BIN, ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const waiter: Waiter = {
    pid: child.pid as number,
    exit: null,
    exitedAt: null,
    kill: (signal) => child.kill(signal),
    done: new Promise((resolve, reject) => {
      child.on("exit", () => {
        waiter.exitedAt = Date.now();
      });
      child.on("close", (code, signal) => {
        waiter.exit = code ?? (signal ? 128 : -1);
        try {
          assertJsonOutput(args, stdout, code);
        } catch (error) {
          reject(error);
          return;
        }
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: waiter.exit, stdout, stderr, json });
      });
    }),
  };
  return waiter;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once the background verb has journaled its begin (for await: it is about to wait). */
export async function begun(waiter: Waiter, repoPath: string, verb = "await"): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const began = logbookLines(repoPath).some((line) => {
      const event = JSON.parse(line) as { event: string; verb: string; pid: number };
      return event.event === "begin" && event.verb === verb && event.pid === waiter.pid;
    });
    if (began) return;
    if (waiter.exit !== null) {
      const { stdout, stderr } = await waiter.done;
      throw new Error(`it exited (${waiter.exit}) before its begin: ${stdout}${stderr}`);
    }
    await sleep(50);
  }
  throw new Error(`${verb} never began`);
}
