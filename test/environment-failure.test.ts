import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { failureOutcome } from "../src/commands/run-verb.js";
import { machineFailure } from "../src/core/machine-failure.js";
import { GitError } from "../src/errors.js";
import { colorsFor } from "../src/ui/style.js";
import { testContext } from "./helpers/repo.js";

/**
 * A full disk is the machine's failure, not a bug in berth: the refusal says
 * so, names what to look at, and never claims that nothing changed.
 */

const plain = colorsFor(false, {});

async function outcomeOf(error: unknown) {
  const { ctx } = testContext("/", {});
  const outcome = failureOutcome("start", await machineFailure(error), ctx);
  return { result: outcome.result, stderr: outcome.human(plain, plain).stderr ?? "" };
}

describe("a failure of the machine", () => {
  it("a write the kernel refuses with ENOSPC (/dev/full) is precondition_failed, not internal", async () => {
    let thrown: unknown;
    try {
      writeFileSync("/dev/full", "x");
    } catch (error) {
      thrown = error;
    }
    expect((thrown as NodeJS.ErrnoException).code).toBe("ENOSPC");
    const { result, stderr } = await outcomeOf(thrown);
    expect(result.error).toMatchObject({ code: "precondition_failed", next: "berth status" });
    expect(result.error?.message).toContain("the disk is full (ENOSPC)");
    expect(result.hints).toEqual([]);
    expect(stderr).not.toContain("unexpected failure");
    expect(stderr).not.toContain("Nothing changed");
  });

  it("a git that says the device is full is the same", async () => {
    const git = new GitError(
      ["worktree", "add", "x"],
      128,
      "fatal: could not write index: No space left on device\n",
    );
    const { result } = await outcomeOf(git);
    expect(result.error?.code).toBe("precondition_failed");
    expect(result.error?.message).toContain("No space left on device");
  });

  it("any other unexpected failure stays internal, a git usage error from a git new enough too", async () => {
    expect((await outcomeOf(new Error("boom"))).result.error?.code).toBe("internal");
    // This machine's git is at least the minimum: an option it does not know is berth's bug.
    const usage = new GitError(
      ["status", "--bogus"],
      129,
      "error: unknown option `bogus'\nusage: git status\n",
    );
    expect((await outcomeOf(usage)).result.error?.code).toBe("internal");
  });
});
