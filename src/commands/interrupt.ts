/**
 * Runs `work` with a signal that a Ctrl-C or SIGTERM aborts, so the verb can
 * stop its own child processes (which run in their own process groups and
 * would not see the terminal's signal) and still report, instead of dying.
 */
export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await work(interrupt.signal);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
