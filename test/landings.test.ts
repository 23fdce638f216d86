import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AwaitData, EXIT_NOT_MET, runAwait } from "../src/core/await/await.js";
import type { AwaitOptions } from "../src/core/await/request.js";
import { readStatus } from "../src/core/fleet/status.js";
import { applyAccept, planAccept } from "../src/core/landing/accept.js";
import { LANDING_NOTES_REF } from "../src/core/landing/landings.js";
import { readNote } from "../src/git/notes.js";
import { readLandingEntries } from "../src/io/landing-log.js";
import { writeLandingRecord } from "../src/io/unfinished-landing.js";
import type { VerbResult } from "../src/result.js";
import { renderStatus } from "../src/ui/status-view.js";
import { colorsFor } from "../src/ui/style.js";
import { refusal } from "./helpers/refusal.js";
import { makeRepo, type TestRepo, testContext } from "./helpers/repo.js";
import { startWithCommit } from "./helpers/train.js";

/**
 * Landings as history (issue 16, item 1; spec section 2): every landing is
 * written once to the landing log and as a note on the landed commit, and
 * `await` answers from them once the branch is gone. In process, on real
 * repositories.
 */

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const tipOf = (ref: string) => repo.git(["rev-parse", ref]);
const commonDir = () => join(repo.path, ".git");

function awaitFrom(cwd: string, options: AwaitOptions): Promise<VerbResult<AwaitData>> {
  const { ctx } = testContext(cwd, repo.env);
  return runAwait(ctx, options);
}

/** `berth accept` of the berth at `path`, in process; it gates first when it must. */
async function acceptIn(path: string, target?: string) {
  const { ctx } = testContext(path, repo.env);
  return applyAccept(ctx, await planAccept(ctx, { target }));
}

describe("a landing is recorded once, in the landing log and as a note", () => {
  it("accept writes one entry and a note on the landed commit; await answers from them once the branch is gone", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b", a);
    const tipA = tipOf(a.branch);
    const tipB = tipOf(b.branch);
    const old = tipOf("main");
    const accepted = await acceptIn(b.path);
    expect(accepted.ok).toBe(true);
    expect(repo.git(["branch", "--list", b.branch])).toBe("");

    const entries = await readLandingEntries(commonDir());
    expect(entries).toEqual([
      {
        version: 1,
        id: b.id,
        branch: b.branch,
        tip: tipB,
        trunk: "main",
        old_trunk: old,
        new_trunk: tipB,
        proved_by: "gate",
        stages: [{ branch: a.branch, tip: tipA }],
        at: "2026-06-01T12:00:00.000Z",
      },
    ]);
    const note = await readNote(repo.path, LANDING_NOTES_REF, tipB);
    expect(JSON.parse(note ?? "null")).toEqual(entries[0]);

    for (const target of [b.branch, b.id]) {
      const landed = await awaitFrom(repo.path, { landed: target, timeout: "0" });
      expect(landed.exitCode).toBeUndefined();
      expect(landed.data).toMatchObject({
        met: true,
        met_by: "landed",
        branch: b.branch,
        path: null,
        tip: tipB,
        landed_commit: tipB,
        landing: { id: b.id, branch: b.branch, tip: tipB, new_trunk: tipB, landed_with: null },
      });
      const green = await awaitFrom(repo.path, { green: target, timeout: "0" });
      expect(green.data).toMatchObject({ met: true, met_by: "landed", landed_commit: tipB });
    }
  });

  it("a partial accept's finish does not record the landing again", async () => {
    repo = makeRepo();
    const gone = join(repo.dir.path, "destroy-works");
    writeFileSync(
      join(repo.path, "berth.toml"),
      `[worktree.resources.db]\ncreate = 'true'\ndestroy = 'test -e "${gone}"'\n`,
    );
    const b = await startWithCommit(repo, "b");
    const first = await acceptIn(b.path);
    expect(first.error?.code).toBe("partial");
    expect(first.data?.landing.trunk_landed).toBe(true);
    expect(await readLandingEntries(commonDir())).toHaveLength(1);

    writeFileSync(gone, "");
    const again = await acceptIn(repo.path, b.branch);
    expect(again.ok).toBe(true);
    expect(again.data?.resumed).toBe(true);
    const entries = await readLandingEntries(commonDir());
    expect(entries.map((e) => e.branch)).toEqual([b.branch]);
    const note = (await readNote(repo.path, LANDING_NOTES_REF, tipOf("main"))) ?? "";
    expect(note.trim().split("\n")).toHaveLength(1);
  });

  it("the finish of a landing whose run stopped before recording it records it, from the unfinished-landing record", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const tip = tipOf(b.branch);
    const old = tipOf("main");
    // What a SIGKILL right after the trunk's compare-and-swap leaves behind.
    await writeLandingRecord(commonDir(), {
      version: 1,
      id: b.id,
      branch: b.branch,
      path: b.path,
      trunk: "main",
      old,
      new: tip,
      validated_by: "receipt",
      main_checkout: null,
      created_at: "2026-06-01T11:59:00.000Z",
    });
    repo.git(["update-ref", "refs/heads/main", tip, old]);
    expect(await readLandingEntries(commonDir())).toEqual([]);

    const finished = await acceptIn(repo.path, b.id);
    expect(finished.ok).toBe(true);
    expect(await readLandingEntries(commonDir())).toEqual([
      expect.objectContaining({
        id: b.id,
        branch: b.branch,
        tip,
        old_trunk: old,
        new_trunk: tip,
        proved_by: "receipt",
        at: "2026-06-01T11:59:00.000Z",
      }),
    ]);
    expect(await readNote(repo.path, LANDING_NOTES_REF, tip)).toContain(b.branch);
  });

  it("status lists the last day's landings, newest first, and says what each became", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const tipA = tipOf(a.branch);
    expect((await acceptIn(a.path)).ok).toBe(true);
    const b = await startWithCommit(repo, "b");
    expect((await acceptIn(b.path)).ok).toBe(true);
    const { ctx } = testContext(repo.path, repo.env, "2026-06-01T14:00:00Z");
    const status = await readStatus(ctx, {});
    const landings = status.data?.landings ?? [];
    expect(landings.map((l) => l.branch)).toEqual([b.branch, a.branch]);
    expect(landings[0]).toEqual({
      id: expect.any(String),
      branch: expect.any(String),
      tip: expect.stringMatching(/^[0-9a-f]{40}$/),
      new_trunk: expect.stringMatching(/^[0-9a-f]{40}$/),
      at: "2026-06-01T12:00:00.000Z",
    });
    const text = renderStatus(
      status.data as NonNullable<typeof status.data>,
      colorsFor(false, {}),
      new Date("2026-06-01T14:00:00Z"),
    );
    expect(text).toContain(`${a.id} landed 2h ago as ${tipA.slice(0, 8)}`);

    const nextDay = testContext(repo.path, repo.env, "2026-06-02T13:00:00Z").ctx;
    expect((await readStatus(nextDay, {})).data?.landings).toEqual([]);
  });
});

describe("await --landed is judged by the tips the branch held while unlanded", () => {
  it("a branch reset back to the trunk while the wait runs has not landed: not met at the timeout (124)", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const work = tipOf(b.branch);
    const { ctx } = testContext(repo.path, repo.env);
    const result = await runAwait(
      ctx,
      { landed: b.id, timeout: "2" },
      {
        onWaiting: () => {
          // The trunk moves on, and b is reset onto it: none of b's work is on the trunk.
          repo.commit("the trunk moves on");
          repo.git(["reset", "-q", "--hard", "main"], b.path);
        },
      },
    );
    expect(result.exitCode).toBe(EXIT_NOT_MET);
    expect(result.data).toMatchObject({ met: false, tip: tipOf("main"), pinned: [work] });
    // A fresh call afterwards agrees: its tip is on the trunk, no landing names it.
    expect((await awaitFrom(repo.path, { landed: b.id, timeout: "0" })).data?.met).toBe(false);
  });

  it("a branch reset onto a newer trunk commit has not landed either", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    repo.commit("the trunk moves on");
    repo.git(["reset", "-q", "--hard", "main"], b.path);
    const result = await awaitFrom(repo.path, { landed: b.id, timeout: "0" });
    expect(result.exitCode).toBe(EXIT_NOT_MET);
    expect(result.data).toMatchObject({ met: false, pinned: [] });
  });

  it("a pinned tip that reaches the trunk through a later stage counts, though the branch moved away", async () => {
    repo = makeRepo();
    const a = await startWithCommit(repo, "a");
    const b = await startWithCommit(repo, "b", a);
    const pinned = tipOf(a.branch);
    const { ctx } = testContext(repo.path, repo.env);
    const result = await runAwait(
      ctx,
      { landed: a.id, timeout: "30" },
      {
        onWaiting: () => {
          // a is reset to the trunk, then b (which carries a's work) lands by hand.
          repo.git(["reset", "-q", "--hard", "main"], a.path);
          repo.git(["update-ref", "refs/heads/main", tipOf(b.branch), tipOf("main")]);
        },
      },
    );
    expect(result.data).toMatchObject({ met: true, met_by: "landed", landed_commit: pinned });
  });
});

describe("await --green needs work of the branch's own", () => {
  it("refuses a plain branch at the trunk tip with no commit of its own, pointing at --landed", async () => {
    repo = makeRepo();
    repo.git(["branch", "solo"]);
    const error = await refusal(awaitFrom(repo.path, { green: "solo", timeout: "30" }));
    expect(error.code).toBe("precondition_failed");
    expect(error.message).toContain("no commit of its own");
    expect(error.next).toBe("berth await --landed solo");
    // --landed waits instead (for it to gain a commit and land).
    expect((await awaitFrom(repo.path, { landed: "solo", timeout: "0" })).exitCode).toBe(
      EXIT_NOT_MET,
    );
  });

  it("refuses a fresh berth at its fork point, receipt or not", async () => {
    repo = makeRepo();
    const fresh = await startWithCommit(repo, "fresh", undefined, 0);
    const error = await refusal(awaitFrom(repo.path, { green: fresh.id, timeout: "30" }));
    expect(error.code).toBe("precondition_failed");
    expect(error.next).toBe(`berth await --landed ${fresh.branch}`);
  });
});

describe("a berth with a detached HEAD", () => {
  it("is found by id, path and branch, shown as detached, and its receipt counts only at the branch tip", async () => {
    repo = makeRepo();
    const b = await startWithCommit(repo, "b");
    const tip = tipOf(b.branch);
    const { ctx } = testContext(b.path, repo.env);
    const { runGate } = await import("../src/core/landing/gate.js");
    expect((await runGate(ctx, {})).ok).toBe(true);
    // Detached at a side commit with the same tree: the receipt says nothing about the branch.
    repo.git(["checkout", "-q", "--detach"], b.path);
    repo.git(["commit", "-q", "--allow-empty", "-m", "side"], b.path);

    const status = await readStatus(testContext(repo.path, repo.env).ctx, {});
    const row = status.data?.worktrees.find((w) => w.path === b.path);
    expect(row).toMatchObject({ state: "detached", branch: null, id: b.id });

    for (const target of [b.id, b.path, b.branch]) {
      const result = await awaitFrom(repo.path, { green: target, timeout: "0" });
      expect(result.exitCode, target).toBe(EXIT_NOT_MET);
      expect(result.data).toMatchObject({ met: false, branch: b.branch, path: b.path, tip });
    }
    // Back at the branch tip (still detached): the same receipt proves the branch.
    repo.git(["checkout", "-q", "--detach", tip], b.path);
    const green = await awaitFrom(repo.path, { green: b.id, timeout: "0" });
    expect(green.data).toMatchObject({ met: true, met_by: "receipt", branch: b.branch, tip });
  });
});
