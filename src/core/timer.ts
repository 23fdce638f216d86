/**
 * The one place a delay is fitted to a Node timer: setTimeout holds its delay
 * in a signed 32-bit integer, and a longer one fires after 1 ms (with a warning).
 * Every timer fed a user-configured duration goes through `timerDelay`.
 */

export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms`, clamped to the longest delay a timer takes (about 24.8 days). */
export function timerDelay(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}
