import type { VerbResult } from "../result.js";

/** The `--json` document: exactly the result's public fields, in the spec's order. */
export function toEnvelope(result: VerbResult): Record<string, unknown> {
  const envelope: Record<string, unknown> = { ok: result.ok, verb: result.verb, data: result.data };
  if (result.plan !== undefined) envelope.plan = result.plan;
  if (result.steps !== undefined) envelope.steps = result.steps;
  envelope.hints = result.hints;
  if (result.error !== undefined) envelope.error = result.error;
  return envelope;
}

export function renderJson(result: VerbResult): string {
  return `${JSON.stringify(toEnvelope(result), null, 2)}\n`;
}
