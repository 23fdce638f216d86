import { performance } from "node:perf_hooks";
import { type WatchedFolder, watchFolders } from "../../io/watch.js";
import { timerDelay } from "../timer.js";

/**
 * The wait: the one place a condition is waited for. It knows nothing of
 * what the condition is; it asks a probe. In order: evaluate at once; then
 * sleep until a wake-up (a debounced file event in the watched folders, the
 * poll backstop, the deadline, an interrupt) and evaluate again, until the
 * condition holds, the deadline passes, the signal aborts or an evaluation
 * fails in a way the caller calls final (thrown). Wake-ups that arrive
 * during an evaluation coalesce into one more evaluation.
 */

/** The backstop: file events are fast but not guaranteed. */
export const POLL_MS = 2000;
/** Events this close together cause one evaluation (a ref update is several file operations). */
export const DEBOUNCE_MS = 75;

export type Ending = "met" | "timeout" | "interrupted";

/** Evaluates the condition once; a failure is reported and retried at the next wake-up. */
export interface Probe<O extends { met: boolean }> {
  observe(): Promise<O>;
}

export interface WaitOptions<O> {
  timeoutMs: number;
  folders: WatchedFolder[];
  signal: AbortSignal | undefined;
  /** Called once when the wait starts sleeping (not when the first evaluation answers). */
  onWaiting: (first: O) => void;
  onEvaluationError: ((error: unknown) => void) | undefined;
  /** A failure that ends the wait (it is thrown) instead of being retried: an answer, not a glitch. */
  isFinal?: ((error: unknown) => boolean) | undefined;
}

export async function waitFor<O extends { met: boolean }>(
  probe: Probe<O>,
  options: WaitOptions<O>,
): Promise<{ observation: O; ending: Ending }> {
  const { signal } = options;
  let observation = await probe.observe();
  if (observation.met) return { observation, ending: "met" };
  if (signal?.aborted) return { observation, ending: "interrupted" };
  if (options.timeoutMs <= 0) return { observation, ending: "timeout" };

  const deadline = performance.now() + options.timeoutMs;
  const wake = new Wakeup();
  const watch = watchFolders(options.folders, wake.fire, {
    debounceMs: DEBOUNCE_MS,
    pollMs: POLL_MS,
  });
  // A longer wait is ended by the poll's deadline check instead.
  const timer = setTimeout(wake.fire, timerDelay(options.timeoutMs));
  signal?.addEventListener("abort", wake.fire);
  options.onWaiting(observation);
  try {
    for (;;) {
      await wake.next();
      if (signal?.aborted) return { observation, ending: "interrupted" };
      const pastDeadline = performance.now() >= deadline;
      try {
        observation = await probe.observe();
      } catch (error) {
        if (options.isFinal?.(error)) throw error;
        options.onEvaluationError?.(error);
      }
      if (observation.met) return { observation, ending: "met" };
      if (signal?.aborted) return { observation, ending: "interrupted" };
      if (pastDeadline || performance.now() >= deadline) return { observation, ending: "timeout" };
    }
  } finally {
    watch.close();
    clearTimeout(timer);
    signal?.removeEventListener("abort", wake.fire);
  }
}

/** A wake-up flag: `fire` resolves the pending `next()`, or makes the next one resolve at once. */
class Wakeup {
  private pending = false;
  private resume: (() => void) | null = null;

  readonly fire = (): void => {
    const resume = this.resume;
    if (resume === null) {
      this.pending = true;
      return;
    }
    this.resume = null;
    resume();
  };

  next(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.resume = resolve;
    });
  }
}
