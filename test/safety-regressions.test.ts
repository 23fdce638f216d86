import { afterEach, describe, expect, it } from "vitest";
import { runUpdate } from "../src/core/landing/update.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { UserError } from "../src/errors.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

/** Bugs the reliability work found, each pinned by a test that fails without its fix. */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("safety regressions", () => {
  it("update refuses in a checkout that has the trunk out: only accept moves the trunk (invariant 3)", async () => {
    repo = makeRepo();
    repo.git(["branch", "side"]);
    repo.git(["checkout", "-q", "side"]);
    repo.write("side.txt", "side\n");
    repo.commit("side work, never gated");
    repo.git(["checkout", "-q", "main"]);
    const trunkBefore = repo.git(["rev-parse", "main"]);
    const { ctx } = testContext(repo.path, repo.env);
    const error = await runUpdate(ctx, { from: "side" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe("precondition_failed");
    expect(repo.git(["rev-parse", "main"])).toBe(trunkBefore);
  });

  it("two starts that minted the same id both succeed: the id is checked again under the lock", async () => {
    repo = makeRepo();
    // Both calls mint "aaaaaa" before either holds the lock; a re-mint draws the next value.
    const values = ["aaaaaa", "aaaaaa", "bbbbbb", "cccccc"];
    const random = () => values.shift() ?? "dddddd";
    const { ctx } = testContext(repo.path, repo.env);
    const [first, second] = await Promise.all([
      startBerth(ctx, { name: "x", random }),
      startBerth(ctx, { name: "x", random }),
    ]);
    expect(first.ok && second.ok).toBe(true);
    const ids = [first.data?.id, second.data?.id].sort();
    expect(ids).toEqual(["x-aaaaaa", "x-bbbbbb"]);
    expect(first.data?.port).not.toBe(second.data?.port);
  });
});
