import { UserError } from "../../errors.js";
import { shellCommand } from "../../text.js";

/**
 * The await request: the one place `berth await`'s options become a typed
 * request, or a usage error (exit 2) before anything is read. In order:
 * exactly one condition, a non-empty target for --green and --landed, and a
 * timeout in seconds, 0 or more (0 checks once).
 */

export type AwaitCondition = "green" | "landed" | "trunk-moved";

export interface AwaitOptions {
  green?: string | undefined;
  landed?: string | undefined;
  trunkMoved?: boolean | undefined;
  /** Seconds, as typed. */
  timeout?: string | undefined;
}

export interface AwaitRequest {
  condition: AwaitCondition;
  /** The berth id, path or branch; null for --trunk-moved. */
  target: string | null;
  timeoutS: number;
}

export const DEFAULT_TIMEOUT_S = 3300;

/** Exactly one condition and a non-negative timeout, or a usage error (exit 2). */
export function parseAwaitRequest(options: AwaitOptions): AwaitRequest {
  const chosen: Array<[AwaitCondition, string | null]> = [];
  if (options.green !== undefined) chosen.push(["green", options.green]);
  if (options.landed !== undefined) chosen.push(["landed", options.landed]);
  if (options.trunkMoved === true) chosen.push(["trunk-moved", null]);
  if (chosen.length !== 1) {
    throw new UserError(
      "usage",
      chosen.length === 0
        ? "berth await needs a condition: --green <berth>, --landed <berth> or --trunk-moved."
        : `berth await waits for exactly one condition, not ${chosen.length} (${chosen
            .map(([c]) => `--${c}`)
            .join(", ")}).`,
      { next: shellCommand(["berth", "await", "--help"]) },
    );
  }
  const [condition, target] = chosen[0] as [AwaitCondition, string | null];
  if (target !== null && target.trim() === "") {
    throw new UserError(
      "usage",
      `--${condition} needs a berth id, path or branch: berth await --${condition} <berth>.`,
      { next: shellCommand(["berth", "status"]) },
    );
  }
  return { condition, target, timeoutS: parseTimeout(options.timeout) };
}

function parseTimeout(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_TIMEOUT_S;
  const text = raw.trim();
  const seconds = /^(\d+(\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(seconds)) {
    throw new UserError(
      "usage",
      `--timeout "${raw}": expected a number of seconds, 0 or more (0 checks once; the default is ${DEFAULT_TIMEOUT_S}).`,
      { next: shellCommand(["berth", "await", "--help"]) },
    );
  }
  return seconds;
}
