import type { Config } from "../../io/config-types.js";
import { lazyCrypto } from "../../lazy-crypto.js";
import { orderChecks, type PlannedCheck } from "./gate-runner.js";

/**
 * THE gate definition a receipt is bound to (spec invariant 8, decision
 * 0017): the one place that turns `[gate]` in berth.toml into the checks a
 * gate runs and the digest a receipt records. Steps:
 * 1. the declared checks in dependency order (`after`), each with its
 *    effective timeout (its own `timeout_s`, else `[gate].timeout_s`);
 * 2. the digest: SHA-256 of that list as JSON, each check as
 *    `{name, command, after, timeout_ms}` in run order.
 * `fail_fast` is left out on purpose: it only decides what happens after a
 * check fails, and a receipt is only ever written when every check passed.
 */

export interface GateDefinition {
  /** In dependency order, with their effective timeouts. */
  checks: PlannedCheck[];
  /** `sha256:<hex>` of the checks as planned. */
  digest: string;
}

export function gateDefinitionOf(
  gate: Pick<Config["gate"], "checks" | "timeout_s" | "fail_fast">,
): GateDefinition {
  const checks = orderChecks(gate.checks).map(
    (check): PlannedCheck => ({
      name: check.name,
      command: check.run,
      after: [...check.after],
      timeoutMs: (check.timeout_s ?? gate.timeout_s) * 1000,
    }),
  );
  // Hashed when first read: a survey with no receipt to judge never needs it.
  let digest: string | undefined;
  return {
    checks,
    get digest() {
      digest ??= gateDigest(checks);
      return digest;
    },
  };
}

/** The digest of planned checks; any change to a name, command, `after`, order or timeout changes it. */
export function gateDigest(checks: readonly PlannedCheck[]): string {
  const canonical = checks.map((check) => ({
    name: check.name,
    command: check.command,
    after: [...check.after],
    timeout_ms: check.timeoutMs,
  }));
  return `sha256:${lazyCrypto().createHash("sha256").update(JSON.stringify(canonical)).digest("hex")}`;
}
