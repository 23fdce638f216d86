import { describe, expect, it } from "vitest";
import {
  actionUnavailable,
  buildDeskModel,
  type DeskBerthItem,
  DIRTY_IDLE_DAYS,
  filterDeskModel,
  reselect,
} from "../src/core/desk/model.js";
import type { StatusData, StatusRef, StatusRow } from "../src/core/fleet/status.js";

/**
 * The desk's grouping (spec section 8) on constructed status data: decision
 * order, each group's membership rules, contained rows with their
 * container, kept refs below, and the selection kept across refreshes.
 */

const NOW = new Date("2026-06-10T12:00:00Z");
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
const TIP = "a".repeat(40);

function row(id: string, over: Partial<StatusRow> = {}): StatusRow {
  return {
    id,
    title: null,
    path: `/w/${id}`,
    branch: `berth/${id}`,
    head: TIP,
    is_main: false,
    is_current: false,
    locked: false,
    prunable: false,
    readable: true,
    clean: true,
    changed_files: 0,
    ahead: 1,
    behind: 0,
    port: 41000,
    receipt: "missing",
    receipt_checks: null,
    last_activity: hoursAgo(1),
    running: null,
    last_action: null,
    state: "active",
    contained: null,
    in_progress: null,
    queue: null,
    granted: false,
    ...over,
  };
}

function ref(branch: string, over: Partial<StatusRef> = {}): StatusRef {
  return {
    branch,
    tip: "b".repeat(40),
    ahead: 1,
    contained_by: "berth/live",
    container_tip: "c".repeat(40),
    container_ahead: 2,
    abandoned: false,
    state: over.abandoned ? "abandoned" : "contained",
    title: null,
    ...over,
  };
}

function data(worktrees: StatusRow[], refs: StatusRef[] = []): StatusData {
  return {
    trunk: { name: "main", tip: "d".repeat(40) },
    scope: "fleet",
    worktrees,
    refs,
    landings: [],
    overlaps: [],
  };
}

const groupOf = (worktrees: StatusRow[], id: string) =>
  buildDeskModel(data(worktrees), NOW).groups.find((g) => g.items.some((i) => i.row.id === id))
    ?.key;

describe("desk model: decision order", () => {
  it("always lists the four groups in decision order, then the kept refs", () => {
    const model = buildDeskModel(
      data(
        [
          row("broken-1", { state: "broken" }),
          row("spent-1", {
            state: "contained",
            contained: {
              container: "berth/live-1",
              container_tip: "c".repeat(40),
              tip: TIP,
              container_ahead: 1,
              container_has_checkout: true,
            },
          }),
          row("busy-1"),
          row("done-1", { receipt: "honored", receipt_checks: 2 }),
        ],
        [ref("berth/old-1")],
      ),
      NOW,
    );
    expect(model.groups.map((g) => g.title)).toEqual([
      "ready to accept",
      "working",
      "contained",
      "needs attention",
    ]);
    expect(model.groups.map((g) => g.items.map((i) => i.row.id))).toEqual([
      ["done-1"],
      ["busy-1"],
      ["spent-1"],
      ["broken-1"],
    ]);
    expect(model.items.map((i) => i.key)).toEqual([
      "/w/done-1",
      "/w/busy-1",
      "/w/spent-1",
      "/w/broken-1",
      "ref:berth/old-1",
    ]);
    expect(model.refs.map((r) => r.ref.branch)).toEqual(["berth/old-1"]);
  });

  it("keeps the main checkout out of the rows (it is the header)", () => {
    const main = row("repo", { is_main: true, state: "main", ahead: null, behind: null });
    const model = buildDeskModel(data([main, row("x-1")]), NOW);
    expect(model.main?.id).toBe("repo");
    expect(model.items.map((i) => i.key)).toEqual(["/w/x-1"]);
  });

  it("sorts each group by id, so a refresh does not shuffle rows", () => {
    const model = buildDeskModel(data([row("c-1"), row("a-1"), row("b-1")]), NOW);
    expect(model.groups[1]?.items.map((i) => i.row.id)).toEqual(["a-1", "b-1", "c-1"]);
  });
});

describe("desk model: ready to accept", () => {
  const ready = row("r-1", { receipt: "honored", receipt_checks: 1, ahead: 2 });

  it("is clean, ahead, not behind, with an honored receipt", () => {
    expect(groupOf([ready], "r-1")).toBe("ready");
  });

  it.each([
    ["dirty", { clean: false, changed_files: 1 }],
    ["of unknown cleanliness", { clean: null, changed_files: null }],
    ["not ahead", { ahead: 0 }],
    ["of unknown ahead", { ahead: null }],
    ["with a stale receipt", { receipt: "stale" as const }],
    ["with a dirty receipt", { receipt: "dirty" as const }],
    ["with no receipt", { receipt: "missing" as const }],
    ["locked", { locked: true, state: "locked" as const }],
  ])("is not ready when %s", (_label, over) => {
    expect(groupOf([{ ...ready, ...over }], "r-1")).toBe("working");
  });

  it("is not ready when behind: that needs attention (berth update)", () => {
    const model = buildDeskModel(data([{ ...ready, behind: 3 }]), NOW);
    const item = model.groups.find((g) => g.key === "attention")?.items[0];
    expect(item?.row.id).toBe("r-1");
    expect(item?.notes).toEqual(["behind main by 3: berth update"]);
  });
});

describe("desk model: contained", () => {
  it("is the containment module's verdict, marked with its container", () => {
    const evidence = {
      container: "berth/b-1",
      container_tip: "c".repeat(40),
      tip: TIP,
      container_ahead: 1,
      container_has_checkout: true,
    };
    const model = buildDeskModel(
      data([row("a-1", { state: "contained", contained: evidence, behind: 2 })]),
      NOW,
    );
    const group = model.groups.find((g) => g.key === "contained");
    expect(group?.items.map((i) => i.row.id)).toEqual(["a-1"]);
    expect(group?.items[0]?.row.contained).toEqual(evidence);
  });

  it("never decides containment itself: an active row stays out of the group", () => {
    // Same shape as a contained row, but the containment module said no.
    expect(groupOf([row("a-1", { ahead: 1 })], "a-1")).toBe("working");
  });
});

describe("desk model: needs attention", () => {
  it.each([
    [
      "broken (another branch)",
      { state: "broken" as const, branch: "elsewhere" },
      "has elsewhere checked out, not the branch berth made for it",
    ],
    [
      "broken (its branch deleted)",
      { state: "broken" as const, head: null, ahead: null, behind: null },
      "its branch berth/x-1 was deleted under it",
    ],
    [
      "unreadable",
      { state: "unreadable" as const, readable: false, clean: null },
      "git cannot read its checkout",
    ],
    [
      "prunable",
      { state: "prunable" as const, prunable: true, readable: null, clean: null },
      "its folder is gone (stale metadata): berth worktree prune clears it",
    ],
    [
      "landed",
      { state: "landed" as const, ahead: 0, behind: 2 },
      "landed: berth worktree prune clears it",
    ],
    ["behind", { behind: 1 }, "behind main by 1: berth update"],
  ])("holds a %s row", (_label, over, note) => {
    const model = buildDeskModel(data([row("x-1", over)]), NOW);
    const item = model.groups.find((g) => g.key === "attention")?.items[0];
    expect(item?.row.id).toBe("x-1");
    expect(item?.notes).toEqual([note]);
  });

  it(`holds a dirty row idle for ${DIRTY_IDLE_DAYS} days or more, not a dirty row in use`, () => {
    const stale = row("old-1", {
      clean: false,
      changed_files: 3,
      last_activity: hoursAgo(24 * DIRTY_IDLE_DAYS + 1),
    });
    const fresh = row("new-1", { clean: false, changed_files: 3, last_activity: hoursAgo(24) });
    const running = { ...stale, id: "run-1", path: "/w/run-1", running: "gate" };
    const unknown = { ...stale, id: "unk-1", path: "/w/unk-1", last_activity: null };
    const model = buildDeskModel(data([stale, fresh, running, unknown]), NOW);
    const attention = model.groups.find((g) => g.key === "attention")?.items ?? [];
    expect(attention.map((i) => i.row.id)).toEqual(["old-1"]);
    expect(attention[0]?.notes).toEqual([
      `3 uncommitted file(s), untouched for ${DIRTY_IDLE_DAYS} days`,
    ]);
    expect(groupOf([fresh], "new-1")).toBe("working");
    expect(groupOf([running], "run-1")).toBe("working");
    expect(groupOf([unknown], "unk-1")).toBe("working");
  });

  it("names every reason a row has", () => {
    const model = buildDeskModel(
      data([
        row("x-1", {
          state: "broken",
          branch: "elsewhere",
          behind: 2,
          clean: false,
          changed_files: 1,
          last_activity: hoursAgo(24 * 5),
        }),
      ]),
      NOW,
    );
    expect(model.groups[3]?.items[0]?.notes).toEqual([
      "has elsewhere checked out, not the branch berth made for it",
      // update refuses tracked changes: the advice never names a verb that would refuse.
      "behind main by 2: berth update (it needs tracked changes committed or stashed first; untracked files may stay)",
      "1 uncommitted file(s), untouched for 5 days",
    ]);
  });

  it("advises berth update to a clean berth behind the trunk, commit or stash to a dirty one", () => {
    const model = buildDeskModel(
      data([
        row("clean-1", { behind: 3 }),
        row("dirty-1", { behind: 3, clean: false, changed_files: 2 }),
        row("landed-1", { state: "landed", ahead: 0, clean: false, changed_files: 1 }),
        row("landed-2", { state: "landed", ahead: 0 }),
      ]),
      NOW,
    );
    const notes = (id: string) =>
      model.groups[3]?.items.find((i) => i.row.id === id)?.notes.join(" | ");
    expect(notes("clean-1")).toBe("behind main by 3: berth update");
    expect(notes("dirty-1")).toBe(
      "behind main by 3: berth update (it needs tracked changes committed or stashed first; untracked files may stay)",
    );
    expect(notes("landed-1")).toBe(
      "landed, with 1 uncommitted file(s): commit or stash first, then berth worktree prune clears it",
    );
    expect(notes("landed-2")).toBe("landed: berth worktree prune clears it");
  });
});

describe("desk model: fifty rows", () => {
  it("lists rows and refs in natural order: bulk-2 before bulk-10", () => {
    const ids = [10, 2, 1, 20, 3].map((n) => `bulk-${n}-a1b2c3`);
    const model = buildDeskModel(
      data(
        ids.map((id) => row(id)),
        [ref("berth/k-10"), ref("berth/k-9")],
      ),
      NOW,
    );
    expect(model.groups[1]?.items.map((i) => i.row.id)).toEqual([
      "bulk-1-a1b2c3",
      "bulk-2-a1b2c3",
      "bulk-3-a1b2c3",
      "bulk-10-a1b2c3",
      "bulk-20-a1b2c3",
    ]);
    expect(model.refs.map((r) => r.ref.branch)).toEqual(["berth/k-9", "berth/k-10"]);
  });

  it("filters by id, branch or title and keeps each group's total", () => {
    const model = buildDeskModel(
      data(
        [
          row("login-1", { title: "Fix the Login form" }),
          row("upload-2"),
          row("misc-3", { title: "login copy" }),
        ],
        [ref("berth/login-old"), ref("berth/other")],
      ),
      NOW,
    );
    const filtered = filterDeskModel(model, "  LOGIN ");
    expect(filtered.filter).toBe("LOGIN");
    expect(filtered.items.map((i) => (i.kind === "berth" ? i.row.id : i.ref.branch))).toEqual([
      "login-1",
      "misc-3",
      "berth/login-old",
    ]);
    expect(filtered.groups[1]?.total).toBe(3);
    expect(filtered.refsTotal).toBe(2);
    expect(filterDeskModel(model, " ")).toBe(model);
  });

  it("carries each berth's overlaps and offers a parked ref's resume command", () => {
    const overlap = {
      berths: ["a-1", "b-2"],
      branches: ["berth/a-1", "berth/b-2"],
      files: ["src/a.ts"],
    };
    const model = buildDeskModel(
      {
        ...data(
          [row("a-1"), row("b-2"), row("c-3")],
          [ref("berth/p-4", { state: "parked", contained_by: null })],
        ),
        overlaps: [overlap],
      },
      NOW,
    );
    const byId = (id: string) => model.groups[1]?.items.find((i) => i.row.id === id);
    expect(byId("a-1")?.overlaps).toEqual([overlap]);
    expect(byId("c-3")?.overlaps).toEqual([]);
    const parked = model.items.find((i) => i.kind === "ref");
    expect(actionUnavailable(parked, "park")).toBe(
      "berth/p-4 is parked, with no checkout; resume it with berth start --from berth/p-4",
    );
  });
});

describe("desk model: selection and actions", () => {
  const model = () =>
    buildDeskModel(data([row("a-1"), row("b-1"), row("c-1")], [ref("berth/k-1")]), NOW);

  it("keeps the selected berth by path and the selected kept ref by branch", () => {
    const before = model();
    const after = buildDeskModel(
      data([row("0-new"), row("a-1"), row("b-1"), row("c-1")], [ref("berth/k-1")]),
      NOW,
    );
    expect(reselect(after, before.items[1]?.key ?? null, 1)).toBe(2);
    expect(reselect(after, "ref:berth/k-1", 3)).toBe(4);
  });

  it("falls back to the same position, clamped, when the selected row is gone", () => {
    const after = buildDeskModel(data([row("a-1")]), NOW);
    expect(reselect(after, "/w/c-1", 2)).toBe(0);
    expect(reselect(buildDeskModel(data([]), NOW), "/w/c-1", 2)).toBe(-1);
  });

  it("offers reclaim on contained rows only, and says why not elsewhere", () => {
    const m = buildDeskModel(
      data([
        row("a-1", {
          state: "contained",
          contained: {
            container: "berth/b-1",
            container_tip: "c".repeat(40),
            tip: TIP,
            container_ahead: 1,
            container_has_checkout: true,
          },
        }),
        row("b-1"),
      ]),
      NOW,
    );
    const contained = m.items.find((i) => i.key === "/w/a-1") as DeskBerthItem;
    const working = m.items.find((i) => i.key === "/w/b-1") as DeskBerthItem;
    expect(actionUnavailable(contained, "reclaim")).toBeNull();
    expect(actionUnavailable(working, "reclaim")).toMatch(
      /^reclaim is only for contained rows .*b-1 is in "working"$/,
    );
    for (const action of ["gate", "update", "accept", "drop", "shell"] as const) {
      expect(actionUnavailable(working, action)).toBeNull();
    }
  });

  it("offers no berth action on a kept ref, pointing at the way back when abandoned", () => {
    const m = buildDeskModel(data([], [ref("berth/gone-1", { abandoned: true })]), NOW);
    expect(actionUnavailable(m.items[0], "reclaim")).toContain(
      "resume it with berth start --from berth/gone-1",
    );
    expect(actionUnavailable(m.items[0], "drop")).toContain("kept ref with no checkout");
    expect(actionUnavailable(undefined, "gate")).toBe("nothing is selected");
  });
});
