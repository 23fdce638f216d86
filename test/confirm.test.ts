import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { UserError } from "../src/errors.js";
import { shellCommand } from "../src/text.js";
import { type ConfirmRequest, confirmOrRefuse } from "../src/ui/confirm.js";
import { testContext } from "./helpers/repo.js";

const request: ConfirmRequest = {
  verb: "worktree drop",
  yes: false,
  planText: "Drop x:\n  destroys  the checkout\n",
  plan: [{ step: "remove worktree", target: "/tmp/x" }],
  question: "Drop x?",
  yesCommand: shellCommand(["berth", "worktree", "drop", "x", "--yes"]),
};

function onTerminal() {
  const t = testContext("/", {});
  t.ctx.stdinIsTTY = true;
  return t;
}

describe("the [y/N] confirmation", () => {
  it("goes ahead on y, asking on stderr with the plan", async () => {
    const { ctx, stderr, stdout } = onTerminal();
    await confirmOrRefuse(ctx, request, Readable.from(["y\n"]));
    expect(stderr()).toBe("Drop x:\n  destroys  the checkout\nDrop x? [y/N] ");
    expect(stdout()).toBe("");
  });

  it("defaults to No on an empty answer, and on end of input", async () => {
    for (const input of [["\n"], []]) {
      const { ctx } = onTerminal();
      const error = await confirmOrRefuse(ctx, request, Readable.from(input)).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).code).toBe("confirmation_required");
      expect((error as UserError).message).toContain("Not confirmed");
    }
  });

  it("refuses without a terminal, carrying the plan; --yes skips the question", async () => {
    const { ctx, stderr } = testContext("/", {});
    const error = (await confirmOrRefuse(ctx, request).catch((e: unknown) => e)) as UserError;
    expect(error.code).toBe("confirmation_required");
    expect(error.message).toContain("destroys  the checkout");
    expect(error.plan).toEqual({ steps: request.plan });
    expect(error.next).toBe("berth worktree drop x --yes");
    await confirmOrRefuse(ctx, { ...request, yes: true });
    expect(stderr()).toBe("");
  });
});
