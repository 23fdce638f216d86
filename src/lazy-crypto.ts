/**
 * node:crypto, loaded on first use rather than imported: loading it costs
 * several milliseconds at every start, and `berth status` of a small fleet
 * never needs it (docs/performance.md, start-up).
 */
export function lazyCrypto(): typeof import("node:crypto") {
  return process.getBuiltinModule("node:crypto");
}
