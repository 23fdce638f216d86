import { expect } from "vitest";
import { UserError } from "../../src/errors.js";

/** Awaits a call that must refuse; returns its UserError (fails the test otherwise). */
export async function refusal(promise: Promise<unknown>): Promise<UserError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UserError);
  return error as UserError;
}
