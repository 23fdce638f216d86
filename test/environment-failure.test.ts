import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { failureOutcome } from "../src/commands/run-verb.js";
import { GitError } from "../src/errors.js";
import { colorsFor } from "../src/ui/style.js";
import { testContext } from "./helpers/repo.js";

/**
 * A full disk is the machine's failure, not a bug in berth: the refusal says
 * so, names what to look at, and never claims that nothing changed.
 */

const plain = colorsFor(false, {});

function outcomeOf(error: unknown) {
  const { ctx } = testContext("/", {});
  const outcome = failureOutcome("start", error, ctx);
  return { result: outcome.result, stderr: outcome.human(plain, plain).stderr ?? "" };
}

describe("a failure of the machine", () => {
  it("a write the kernel refuses with ENOSPC (/dev/full) is precondition_failed, not internal", () => {
    let thrown: unknown;
    try {
      writeFileSync("/dev/full", "x");
    } catch (error) {
      thrown = error;
    }
    expect((thrown as NodeJS.ErrnoException).code).toBe("ENOSPC");
    const { result, stderr } = outcomeOf(thrown);
    expect(result.error).toMatchObject({ code: "precondition_failed", next: "berth status" });
    expect(result.error?.message).toContain("the disk is full (ENOSPC)");
    expect(result.hints).toEqual([]);
    expect(stderr).not.toContain("unexpected failure");
    expect(stderr).not.toContain("Nothing changed");
  });

  it("a git that says the device is full is the same", () => {
    const git = new GitError(
      ["worktree", "add", "x"],
      128,
      "fatal: could not write index: No space left on device\n",
    );
    expect(outcomeOf(git).result.error?.code).toBe("precondition_failed");
    expect(outcomeOf(git).result.error?.message).toContain("No space left on device");
  });

  it("any other unexpected failure stays internal", () => {
    expect(outcomeOf(new Error("boom")).result.error?.code).toBe("internal");
  });
});
