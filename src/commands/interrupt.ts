/**
 * Runs `work` with a signal that a Ctrl-C (SIGINT), SIGTERM or a closed
 * terminal (SIGHUP) aborts, so the verb can stop its own child processes
 * (which run in their own process groups and would not see the signal) and
 * still report, instead of dying and leaving them running as orphans.
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  for (const name of STOP_SIGNALS) process.once(name, onSignal);
  try {
    return await work(interrupt.signal);
  } finally {
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
  }
}
