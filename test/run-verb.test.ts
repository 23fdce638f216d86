import { afterEach, describe, expect, it } from "vitest";
import { acceptCommand } from "../src/commands/accept.js";
import { proposeDeskAction } from "../src/commands/desk-actions.js";
import { type DeskVerb, runDeskAction } from "../src/commands/desk-run.js";
import { humanOutput, runVerb } from "../src/commands/run-verb.js";
import { worktreeDropCommand } from "../src/commands/worktree-drop.js";
import { buildDeskModel, type DeskBerthItem } from "../src/core/desk/model.js";
import { readStatus } from "../src/core/fleet/status.js";
import { UserError } from "../src/errors.js";
import { appliedResult, INTERNAL_FAILURE_HINT, plannedResult } from "../src/result.js";
import { shellCommand } from "../src/text.js";
import { renderJson, toEnvelope } from "../src/ui/envelope.js";
import { colorsFor } from "../src/ui/style.js";
import { renderWorktreeTeardown } from "../src/ui/worktree-view.js";
import { refusal } from "./helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";
import { type StartedBerth, startWithCommit } from "./helpers/train.js";

/**
 * One runner, one failure renderer, one plan/apply shape and one
 * confirmation per verb: the CLI and the desk say the same things.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const plain = colorsFor(false, {});
const printed = { stdout: plain, stderr: plain };

const refusalWithPlan = () =>
  new UserError("precondition_failed", "the berth is dirty.", {
    next: shellCommand(["berth", "gate"]),
    plan: { steps: [{ step: "run check", target: "unit" }] },

    data: { id: "x" },
  });

/** A desk action that refuses (or fails) while planning; "status" keeps the logbook out of it. */
const failingDeskVerb = (error: unknown): DeskVerb => ({
  verb: "status",
  inBerth: false,
  plan: () => Promise.reject(error),
});

const someItem = { kind: "berth", row: { path: "/", id: "x" } } as unknown as DeskBerthItem;

describe("the runner's failure rendering", () => {
  it("a refusal keeps its code, next command, data and plan, and says what to run next", async () => {
    const { ctx } = testContext("/", {});
    const outcome = await runVerb("status", ctx, {}, () => Promise.reject(refusalWithPlan()));
    expect(outcome.result).toMatchObject({
      ok: false,
      verb: "status",
      data: { id: "x" },
      plan: { steps: [{ step: "run check", target: "unit" }] },
      hints: [],
      error: { code: "precondition_failed", message: "the berth is dirty.", next: "berth gate" },
    });
    expect(humanOutput(outcome, printed)).toEqual({
      stdout: "",
      stderr: "berth status: the berth is dirty.\nNothing changed.\nnext: berth gate\n",
    });
  });

  it("an unexpected failure is internal, with the hint and the --debug pointer", async () => {
    const { ctx } = testContext("/", {});
    const outcome = await runVerb("status", ctx, {}, () => Promise.reject(new Error("boom")));
    expect(outcome.result).toMatchObject({
      ok: false,
      data: null,
      hints: [INTERNAL_FAILURE_HINT],
      error: { code: "internal", message: "boom" },
    });
    expect(humanOutput(outcome, printed).stderr).toBe(
      "berth status: unexpected failure: boom\n(rerun with --debug for the stack trace)\n" +
        `hint: ${INTERNAL_FAILURE_HINT}\n`,
    );
  });

  it("the desk shows a failure exactly as the CLI prints it, hint included", async () => {
    for (const error of [new Error("boom"), refusalWithPlan()]) {
      const { ctx } = testContext("/", {});
      const cli = await runVerb("status", ctx, {}, () => Promise.reject(error));
      const { stdout, stderr } = humanOutput(cli, printed);
      const proposal = await runDeskAction(
        { base: testContext("/", {}).ctx, cwd: () => "/" },
        "gate",
        failingDeskVerb(error),
        someItem,
      );
      expect(proposal).toEqual({
        kind: "refused",
        action: "gate",
        command: "berth status x",
        text: `${stdout}${stderr}`,
      });
    }
  });
});

describe("plan/apply results", () => {
  it("say whether they applied anything, and the JSON envelope does not carry the flag", () => {
    const data = { id: "x", path: "/x", resources: ["db"], destroyed: [] };
    const planned = plannedResult("worktree teardown", data, [{ step: "destroy resource" }]);
    expect(planned.dryRun).toBe(true);
    expect(planned).not.toHaveProperty("steps");
    expect(Object.keys(toEnvelope(planned))).toEqual(["ok", "verb", "data", "plan", "hints"]);
    expect(renderJson(planned)).not.toContain("dryRun");
    expect(renderWorktreeTeardown(planned, plain)).toContain("dry run; nothing changed");

    const applied = appliedResult("worktree teardown", data, [], []);
    expect(applied.dryRun).toBe(false);
    expect(Object.keys(toEnvelope(applied))).toEqual([
      "ok",
      "verb",
      "data",
      "plan",
      "steps",
      "hints",
    ]);
    expect(renderWorktreeTeardown(applied, plain)).toBe("no resources destroyed for x\n");

    const failed = appliedResult("update", data, [], [], {
      error: { code: "partial", message: "half" },
    });
    expect(failed.ok).toBe(false);
  });
});

async function itemFor(r: TestRepo, berth: StartedBerth): Promise<DeskBerthItem> {
  const { ctx } = testContext(r.path, r.env);
  const status = await readStatus(ctx, { all: true });
  const model = buildDeskModel(status.data as NonNullable<typeof status.data>, ctx.now());
  const item = model.items.find((i) => i.kind === "berth" && i.row.path === berth.path);
  if (item === undefined || item.kind !== "berth") throw new Error(`${berth.id} is not a row`);
  return item;
}

describe("one confirmation per verb", () => {
  it("the CLI's refusal without a terminal names the desk's command and plan text; accept hands over instead", async () => {
    repo = makeRepo();
    const worked = await startWithCommit(repo, "worked");
    const { ctx } = testContext(repo.path, repo.env);
    const env = { base: ctx, cwd: () => ctx.cwd };

    const drop = await proposeDeskAction(env, "drop", await itemFor(repo, worked));
    if (drop.kind !== "confirm") throw new Error(drop.text);
    const cliDrop = await refusal(worktreeDropCommand(ctx, worked.id, { force: true }));
    expect(cliDrop.code).toBe("confirmation_required");
    expect(cliDrop.next).toBe(drop.command);
    expect(cliDrop.message.startsWith(drop.planText.trimEnd())).toBe(true);
    expect(drop.question).toBe(`Drop ${worked.id} and discard its work?`);
    await drop.decline();

    const accept = await proposeDeskAction(env, "accept", await itemFor(repo, worked));
    if (accept.kind !== "confirm") throw new Error(accept.text);
    // accept is the exception (decision 0076): with no one to ask the CLI hands the stack over
    // for a person's approval, and names the person's accept, not the desk's --yes command.
    expect(accept.command).toBe(`berth accept ${worked.id} --yes`);
    await accept.decline();
    const cliAccept = await refusal(acceptCommand(ctx, worked.id, {}));
    expect(cliAccept.code).toBe("awaiting_approval");
    expect(cliAccept.next).toBe(`berth accept ${worked.id}`);
  });
});
