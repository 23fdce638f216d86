import { afterEach, describe, expect, it } from "vitest";
import { runUpdate } from "../src/core/landing/update.js";
import { startBerth } from "../src/core/lifecycle/start.js";
import { UserError } from "../src/errors.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

/** Bugs the reliability work found, each pinned by a test that fails without its fix. */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

describe("safety regressions", () => {
  /** From the main checkout, `berth update --from side`, where side holds a commit no gate proved. */
  async function updateTrunkFromSide(tagLikeTheTrunk: boolean) {
    repo = makeRepo();
    repo.git(["branch", "side"]);
    repo.git(["checkout", "-q", "side"]);
    repo.write("side.txt", "side\n");
    repo.commit("side work, never gated");
    repo.git(["checkout", "-q", "main"]);
    if (tagLikeTheTrunk) repo.git(["tag", "main"]);
    const trunkBefore = repo.git(["rev-parse", "refs/heads/main"]);
    const { ctx } = testContext(repo.path, repo.env);
    const error = await runUpdate(ctx, { from: "side" }).then(
      () => null,
      (e: unknown) => e,
    );
    return { error, trunkBefore, trunkAfter: repo.git(["rev-parse", "refs/heads/main"]) };
  }

  it("update refuses in a checkout that has the trunk out: only accept moves the trunk (invariant 3)", async () => {
    const { error, trunkBefore, trunkAfter } = await updateTrunkFromSide(false);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe("precondition_failed");
    expect(trunkAfter).toBe(trunkBefore);
  });

  it("update refuses on the trunk even while a tag shares the trunk's name (model seed 4036569084)", async () => {
    // git shortens HEAD's branch to "heads/main" here; berth must still see the trunk.
    const { error, trunkBefore, trunkAfter } = await updateTrunkFromSide(true);
    expect((error as UserError).message).toContain("has the trunk (main) checked out");
    expect(trunkAfter).toBe(trunkBefore);
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
