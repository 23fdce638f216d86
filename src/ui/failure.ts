import { UserError } from "../errors.js";
import { type ResultError, thrownError } from "../result.js";
import { renderRefusal } from "./refusal.js";
import type { Colors } from "./style.js";

/**
 * A thrown refusal or failure for a person (stderr), beside its result
 * (`failureResult`): a refusal says what is wrong and what to run next; an
 * unexpected failure says so, with its stack under `--debug`.
 */
export function renderFailure(
  verb: string,
  error: unknown,
  resultError: ResultError,
  debug: boolean,
  c: Colors,
): string {
  if (error instanceof UserError) {
    return renderRefusal(verb, resultError, error.nothingChanged, c);
  }
  const err = thrownError(error);
  return `${c.red(`berth ${verb}: unexpected failure:`)} ${err.message}\n${
    debug ? `${err.stack ?? ""}\n` : "(rerun with --debug for the stack trace)\n"
  }`;
}
