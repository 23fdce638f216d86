import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJournal, logbookOutcome } from "../src/core/logbook/journal.js";
import { openRepository } from "../src/core/repo/repository.js";
import { UserError } from "../src/errors.js";
import type { VerbResult } from "../src/result.js";
import { logbookDirOf, logbookLines } from "./helpers/logbook.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const okResult: VerbResult = { ok: true, verb: "start", data: null, hints: [] };
function refusal(code: NonNullable<VerbResult["error"]>["code"]): VerbResult {
  return { ok: false, verb: "start", data: null, hints: [], error: { code, message: "no" } };
}

describe("logbookOutcome", () => {
  it("maps results to ok, refused, failed, timeout and interrupted", () => {
    expect(logbookOutcome(okResult)).toBe("ok");
    expect(
      logbookOutcome(refusal("precondition_failed"), new UserError("precondition_failed", "x")),
    ).toBe("refused");
    expect(logbookOutcome(refusal("locked"))).toBe("refused");
    expect(logbookOutcome(refusal("confirmation_required"))).toBe("refused");
    // Got part-way: failed, with error_code saying how (partial, teardown_failed).
    expect(logbookOutcome(refusal("partial"))).toBe("failed");
    expect(logbookOutcome(refusal("teardown_failed"))).toBe("failed");
    expect(
      logbookOutcome(
        refusal("precondition_failed"),
        new UserError("precondition_failed", "x", { nothingChanged: false }),
      ),
    ).toBe("failed");
    expect(logbookOutcome(refusal("gate_failed"))).toBe("failed");
    expect(logbookOutcome(refusal("internal"), new Error("bug"))).toBe("failed");
    // An await that answered "not met" by its timeout (exit 124) timed out; it did not fail.
    expect(logbookOutcome({ ok: true, verb: "await", data: null, hints: [], exitCode: 124 })).toBe(
      "timeout",
    );
    // Ctrl-C'd: an await (exit 130) and a gate whose checks were stopped (gate_failed).
    expect(logbookOutcome({ ok: true, verb: "await", data: null, hints: [], exitCode: 130 })).toBe(
      "interrupted",
    );
    expect(logbookOutcome({ ...refusal("gate_failed"), interrupted: true })).toBe("interrupted");
  });
});

describe("createJournal", () => {
  it("writes the begin when the verb opens the repository and begins, and the finish after", async () => {
    repo = makeRepo();
    const { ctx } = testContext(repo.path, repo.env);
    const journal = createJournal(ctx, "start");
    ctx.journal = journal;
    await openRepository(ctx);
    expect(logbookLines(repo.path)).toEqual([]);
    journal.begin({ branch: "berth/x", path: "/somewhere/x" });
    const [beginLine] = logbookLines(repo.path);
    expect(JSON.parse(beginLine ?? "")).toMatchObject({
      schema: 1,
      event: "begin",
      at: "2026-06-01T12:00:00.000Z",
      invocation: journal.invocation,
      verb: "start",
      branch: "berth/x",
      path: "/somewhere/x",
      pid: process.pid,
    });
    await journal.finish(okResult);
    const lines = logbookLines(repo.path).map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      event: "finish",
      invocation: journal.invocation,
      branch: "berth/x",
      outcome: "ok",
      error_code: null,
    });
    expect(lines[1].duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("writes both events at finish for a verb that refused before begin, naming the current checkout", async () => {
    repo = makeRepo();
    const { ctx } = testContext(repo.path, repo.env);
    const journal = createJournal(ctx, "gate");
    ctx.journal = journal;
    await journal.finish(refusal("precondition_failed"), new UserError("precondition_failed", "x"));
    const lines = logbookLines(repo.path).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.event)).toEqual(["begin", "finish"]);
    expect(lines[0]).toMatchObject({ branch: "main", path: repo.path });
    expect(lines[1]).toMatchObject({ outcome: "refused", error_code: "precondition_failed" });
    expect(new Set(lines.map((l) => l.invocation)).size).toBe(1);
  });

  it("writes nothing when the logbook is off", async () => {
    repo = makeRepo({ config: "[logbook]\nenabled = false\n" });
    const { ctx } = testContext(repo.path, repo.env);
    const journal = createJournal(ctx, "start");
    ctx.journal = journal;
    await openRepository(ctx);
    journal.begin({ branch: "berth/x", path: "/x" });
    await journal.finish(okResult);
    expect(logbookLines(repo.path)).toEqual([]);
  });

  it("never throws on a write error, and says so once under --debug", async () => {
    repo = makeRepo();
    mkdirSync(join(repo.path, ".git", "berth"));
    writeFileSync(logbookDirOf(repo.path), "a file where the folder should be");
    const { ctx, stderr } = testContext(repo.path, repo.env);
    ctx.debug = true;
    const journal = createJournal(ctx, "start");
    ctx.journal = journal;
    await openRepository(ctx);
    journal.begin({ branch: "berth/x", path: "/x" });
    await journal.finish(okResult);
    expect(stderr().match(/logbook not written/g)).toHaveLength(1);
  });
});
