import { AsyncLocalStorage } from "node:async_hooks";
import type { Context } from "../context.js";
import { UserError } from "../errors.js";
import type { VerbResult } from "../result.js";

/**
 * Runs `work` with a signal that a Ctrl-C (SIGINT), SIGTERM or a closed
 * terminal (SIGHUP) aborts, so the verb can stop its own child processes
 * (which run in their own process groups and would not see the signal) and
 * still report, instead of dying and leaving them running as orphans. Inside
 * `interruptibleBy`, its stop aborts the signal too.
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  for (const name of STOP_SIGNALS) process.once(name, onSignal);
  const stop = callStop.getStore();
  stop?.addEventListener("abort", onSignal);
  if (stop?.aborted) interrupt.abort();
  running.add(interrupt);
  try {
    return await work(interrupt.signal);
  } finally {
    running.delete(interrupt);
    stop?.removeEventListener("abort", onSignal);
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
  }
}

const running = new Set<AbortController>();

/**
 * Scoped, not put on `ctx.interrupt`: the core reads that as "stop every
 * project command now", which a Ctrl-C of the CLI verb means only inside
 * the verb's apply, never in a lander's teardown after its gate.
 */
const callStop = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` so that `stop` (an MCP client cancelling its call) interrupts
 * every verb running in it under `withInterrupt`, as a stop signal would.
 */
export function interruptibleBy<T>(
  stop: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  return stop === undefined ? work() : callStop.run(stop, work);
}

/**
 * Interrupts every verb running under `withInterrupt`, as a signal would:
 * `berth mcp` does when its client goes away mid-call, so a gate stops its
 * checks and reports instead of leaving them running after the server exits.
 */
export function interruptRunning(): void {
  for (const interrupt of running) interrupt.abort();
}

/**
 * Runs a verb's apply with `ctx.interrupt` set (`withInterrupt`'s signal): a
 * stop signal kills the project command running, the verb starts nothing
 * more and undoes or reports what it did, and its result or refusal says it
 * was interrupted, so the logbook records `interrupted`. Only around the
 * apply: a [y/N] question asked before it must still end at Ctrl-C.
 */
export function applyInterruptibly<R extends VerbResult>(
  ctx: Context,
  apply: (ctx: Context) => Promise<R>,
): Promise<R> {
  return withInterrupt((signal) => applyUntil(signal, ctx, apply));
}

/**
 * `applyInterruptibly` with the stop given rather than taken from process
 * signals: the desk's, whose Ctrl-C is a key on a running action.
 */
export async function applyUntil<R extends VerbResult>(
  signal: AbortSignal,
  ctx: Context,
  apply: (ctx: Context) => Promise<R>,
): Promise<R> {
  try {
    const result = await apply({ ...ctx, interrupt: signal });
    // A signal after the last step it could stop found nothing left to stop: the verb finished.
    return signal.aborted && !result.ok ? { ...result, interrupted: true } : result;
  } catch (error) {
    if (signal.aborted && error instanceof UserError) error.interrupted = true;
    throw error;
  }
}
