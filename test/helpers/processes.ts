import { existsSync, readFileSync } from "node:fs";

/** Polls `test` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(what: string, test: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A process that no longer runs; a zombie waiting for its new parent to reap it counts as gone. */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Processes a test started that must not outlive it: killed by `killAll` (afterEach). */
export function leftovers(): { add(pid: number): void; killAll(): void } {
  const pids: number[] = [];
  return {
    add: (pid) => {
      pids.push(pid);
    },
    killAll: () => {
      for (const pid of pids.splice(0)) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    },
  };
}

/** The pid a command wrote to `file`, once written whole (the shell creates the file first); null before. */
export function recordedPid(file: string): number | null {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const pid = Number(text.trim());
  return text.endsWith("\n") && Number.isInteger(pid) && pid > 0 ? pid : null;
}
