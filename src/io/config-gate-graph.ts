import { ConfigError } from "../errors.js";
import type { GateCheckConfig } from "./config-types.js";

/**
 * The rule `berth.toml`'s `[gate].checks` obey as a whole, beyond each check's
 * own shape (./config.ts checks that): names are unique, every `after` names
 * another declared check, and the `after` order has no cycle. The one place
 * the check graph is judged; the gate's scheduler relies on it.
 */

/** Names unique, every `after` names another check, and the order has no cycle. */
export function checkGateGraph(file: string, checks: readonly GateCheckConfig[]): void {
  const index = new Map<string, number>();
  checks.forEach((check, i) => {
    const first = index.get(check.name);
    if (first !== undefined) {
      const found = `found ${JSON.stringify(check.name)} again (first at gate.checks[${first}])`;
      const message = `expected a unique check name, ${found}`;
      throw new ConfigError(file, `gate.checks[${i}].name`, message);
    }
    index.set(check.name, i);
  });
  checks.forEach((check, i) => {
    for (const dep of check.after) {
      if (dep !== check.name && index.has(dep)) continue;
      const why = dep === check.name ? "a check cannot run after itself" : "no check has that name";
      const found = `found ${JSON.stringify(dep)} (${why})`;
      const message = `expected the name of another declared check, ${found}`;
      throw new ConfigError(file, `gate.checks[${i}].after`, message);
    }
  });
  const cycle = findCycle(checks, index);
  if (cycle) {
    const names = cycle.map((i) => checks[i]?.name).join(" -> ");
    const message = `expected no dependency cycle, found ${names}`;
    throw new ConfigError(file, `gate.checks[${cycle[0]}].after`, message);
  }
}

/** Depth-first search; returns the check indices of one cycle (first repeated last), or null. */
function findCycle(
  checks: readonly GateCheckConfig[],
  index: ReadonlyMap<string, number>,
): number[] | null {
  const state = new Array<"new" | "open" | "done">(checks.length).fill("new");
  const stack: number[] = [];
  const visit = (i: number): number[] | null => {
    if (state[i] === "done") return null;
    if (state[i] === "open") return [...stack.slice(stack.indexOf(i)), i];
    state[i] = "open";
    stack.push(i);
    for (const dep of checks[i]?.after ?? []) {
      const j = index.get(dep);
      const found = j === undefined ? null : visit(j);
      if (found) return found;
    }
    stack.pop();
    state[i] = "done";
    return null;
  };
  for (let i = 0; i < checks.length; i++) {
    const found = visit(i);
    if (found) return found;
  }
  return null;
}
