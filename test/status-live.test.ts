import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { statusCommand } from "../src/commands/status.js";
import { renderStatus } from "../src/ui/status-view.js";
import { colorsFor } from "../src/ui/style.js";
import { gitShim } from "./helpers/git-shim.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";
import { startWithCommit } from "./helpers/train.js";

/** Cursor up n lines, then clear to the end of the screen: a frame redrawn in place. */
const ESC = String.fromCharCode(27);
const REDRAW = new RegExp(`^${ESC}\\[\\d+A${ESC}\\[J`);

let repo: TestRepo | undefined;
const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
  repo?.cleanup();
});

/** A terminal stand-in: it records every write, in order, with its size. */
function fakeTerminal(rows = 40) {
  const writes: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        writes.push(chunk.toString());
        done();
      },
    }),
    { isTTY: true, columns: 160, rows },
  );
  return { stream, writes };
}

/**
 * A real git, slowed for `status` only, so the skeleton is surely drawn before
 * any berth's status is in: one more second per berth, so arrivals are far more
 * than a frame apart and each one is drawn, however loaded the machine.
 */
function slowStatusGit(dir: string): string {
  const delays = `case "$PWD $*" in *gamma*) sleep 3;; *beta*) sleep 2;; *alpha*) sleep 1;; esac`;
  return gitShim(dir, "slow", [`case " $* " in *" status "*) ${delays};; esac`]);
}

async function fleet(): Promise<TestRepo> {
  const r = makeRepo();
  const a = await startWithCommit(r, "alpha");
  await startWithCommit(r, "beta", a);
  await startWithCommit(r, "gamma");
  writeFileSync(join(r.path, "scratch.txt"), "dirty\n");
  return r;
}

describe("status on a terminal", () => {
  it("draws the skeleton first, fills rows as statuses arrive, then prints the final table in its place", async () => {
    repo = await fleet();
    const terminal = fakeTerminal();
    const { ctx } = testContext(repo.path, repo.env);
    ctx.stdout = terminal.stream;
    ctx.stdoutIsTTY = true;
    ctx.env = { ...repo.env, TERM: "xterm" };
    process.env.PATH = slowStatusGit(repo.dir.path);
    const outcome = await statusCommand(ctx, {});
    const rows = (outcome.result.data as { worktrees: { id: string }[] }).worktrees;
    expect(rows).toHaveLength(4);

    const frames = terminal.writes;
    expect(frames.length).toBeGreaterThanOrEqual(2);
    // The skeleton: every id and the header, before any status was in.
    const first = frames[0] as string;
    for (const row of rows) expect(first).toContain(row.id);
    expect(first).toContain("…");
    // At most the current checkout's status (it starts before discovery) is in.
    expect(first).toMatch(/reading [01]\/4…/);
    for (const row of rows.slice(1)) {
      expect(first.split("\n").find((line) => line.includes(row.id))).not.toContain("clean");
    }
    // Later frames redraw in place (cursor up, clear) as statuses arrive.
    const later = frames.slice(1);
    expect(later.every((f) => REDRAW.test(f))).toBe(true);
    expect(later.some((f) => f.includes("clean"))).toBe(true);

    // The final text erases the last frame, then is the table a pipe would get.
    const lastLines = (frames.at(-1) as string).replace(REDRAW, "").split("\n").length - 1;
    const colors = colorsFor(true, ctx.env);
    const stdout = outcome.human(colors).stdout as string;
    expect(stdout.startsWith(`\u001b[${lastLines}A\u001b[J`)).toBe(true);
    const data = outcome.result.data as Parameters<typeof renderStatus>[0];
    expect(stdout.slice(`\u001b[${lastLines}A\u001b[J`.length)).toBe(
      renderStatus(data, colors, ctx.now()),
    );
  }, 60_000);

  it("on a terminal too small for the table, draws only how many statuses are in", async () => {
    repo = await fleet();
    const terminal = fakeTerminal(4);
    const { ctx } = testContext(repo.path, repo.env);
    ctx.stdout = terminal.stream;
    ctx.stdoutIsTTY = true;
    ctx.env = { ...repo.env, TERM: "xterm" };
    process.env.PATH = slowStatusGit(repo.dir.path);
    const outcome = await statusCommand(ctx, {});
    expect(terminal.writes.length).toBeGreaterThanOrEqual(1);
    expect(terminal.writes[0]).toMatch(/^trunk main; reading [01]\/4…\n$/);
    const stdout = outcome.human(colorsFor(true, ctx.env)).stdout as string;
    expect(stdout.startsWith(`${ESC}[1A${ESC}[J`)).toBe(true);
  }, 60_000);

  it("draws nothing when stdout is not a terminal, or with --json", async () => {
    repo = await fleet();
    for (const [isTTY, json] of [
      [false, false],
      [true, true],
    ] as const) {
      const terminal = fakeTerminal();
      const { ctx } = testContext(repo.path, repo.env);
      ctx.stdout = terminal.stream;
      ctx.stdoutIsTTY = isTTY;
      ctx.env = { ...repo.env, TERM: "xterm" };
      const outcome = await statusCommand(ctx, { json });
      expect(terminal.writes).toEqual([]);
      const stdout = outcome.human(colorsFor(false, ctx.env)).stdout as string;
      expect(stdout).not.toContain("\u001b[");
    }
  }, 60_000);
});
