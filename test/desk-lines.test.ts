import type { Key } from "ink";
import { describe, expect, it } from "vitest";
import { buildDeskModel } from "../src/core/desk/model.js";
import type { StatusRow } from "../src/core/fleet/status.js";
import { helpLines, LEGEND_KEYS, legendLines, splitKeys } from "../src/ui/desk/keys.js";
import { detailLines, listLines, OVERLAP_MARK } from "../src/ui/desk/lines.js";
import { fleetHintLines } from "../src/ui/desk/screen.js";
import { lastActionLabel, renderStatus } from "../src/ui/status-view.js";
import { colorsFor } from "../src/ui/style.js";

/** The desk's text at fifty rows: a legend that fits, titles, overlap marks, keys in chunks. */

const NOW = new Date("2026-06-10T12:00:00Z");

function row(id: string, over: Partial<StatusRow> = {}): StatusRow {
  return {
    id,
    title: null,
    path: `/w/${id}`,
    branch: `berth/${id}`,
    head: "a".repeat(40),
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
    last_activity: NOW.toISOString(),
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

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

describe("the key legend", () => {
  it("fits 80 columns in two lines and names every key", () => {
    const lines = legendLines(80);
    expect(lines.length).toBeLessThanOrEqual(2);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    const text = lines.join("   ");
    for (const key of LEGEND_KEYS) expect(text).toContain(`${key.key} ${key.label}`);
  });

  it("narrower than two lines hold: what fits, then ? help and q quit", () => {
    const [line, ...more] = legendLines(40);
    expect(more).toEqual([]);
    expect(line?.length).toBeLessThanOrEqual(40);
    expect(line).toMatch(/\? help {3}q quit$/);
    // The help pane lists them all.
    const help = helpLines().join("\n");
    for (const key of LEGEND_KEYS) expect(help).toContain(key.help);
  });

  it("the help pane's key lines fit 80 columns (a wrapped line pushes the last keys off a 24-line screen)", () => {
    const keyLines = helpLines().filter((line) => line.startsWith("  "));
    expect(keyLines).toHaveLength(LEGEND_KEYS.length);
    for (const line of keyLines) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});

describe("the list", () => {
  it("shows titles once any berth has one, marks overlapping rows, drops a branch column the ids say", () => {
    const overlap = {
      berths: ["a-1", "b-2"],
      branches: ["berth/a-1", "berth/b-2"],
      files: ["src/a.ts"],
    };
    const model = buildDeskModel(
      {
        trunk: { name: "main", tip: "d".repeat(40) },
        scope: "fleet",
        worktrees: [row("a-1", { title: "Login form" }), row("b-2"), row("c-3")],
        refs: [],
        landings: [],
        overlaps: [overlap],
      },
      NOW,
    );
    const lines = listLines(model, NOW).filter((l) => l.item !== null);
    expect(lines.map((l) => l.mark)).toEqual([OVERLAP_MARK, OVERLAP_MARK, " "]);
    expect(lines[0]?.text).toMatch(/^a-1 +Login form +clean/);
    expect(lines[0]?.text).toContain("overlaps b-2 on src/a.ts");
    expect(lines[1]?.text).toMatch(/^b-2 +- +clean/);
    expect(lines[0]?.text).not.toContain("berth/a-1");
  });
});

describe("the detail pane", () => {
  it("shows a brief's control characters as escapes, never sends them to the terminal", () => {
    const model = buildDeskModel(
      {
        trunk: { name: "main", tip: "d".repeat(40) },
        scope: "fleet",
        worktrees: [row("a-1")],
        refs: [],
        landings: [],
        overlaps: [],
      },
      NOW,
    );
    const item = model.items.find((i) => i.kind === "berth");
    if (item === undefined) throw new Error("no berth item");
    const detail = {
      commits: [],
      files: [],
      fileCount: 0,
      receipt: null,
      brief: "\u001b[2Jwiped\u009b\n",
    };
    const lines = detailLines(item, detail, model, NOW);
    expect(lines).toContain("  \\x1b[2Jwiped\\x9b");
    expect(lines.join("\n")).not.toContain("\u001b");
    expect(lines.join("\n")).not.toContain("\u009b");
  });
});

describe("the last verb beside a row's activity", () => {
  const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
  const describedEarlier = row("a-1", {
    last_activity: NOW.toISOString(),
    last_action: { verb: "describe", outcome: "ok", at: hoursAgo(3) },
  });

  it("carries its own age when the activity is newer (an edit since), else the verb alone", () => {
    expect(lastActionLabel(describedEarlier, NOW)).toBe("describe 3h ago");
    const gated = row("a-2", {
      last_activity: hoursAgo(1),
      last_action: { verb: "gate", outcome: "refused", at: hoursAgo(1) },
    });
    expect(lastActionLabel(gated, NOW)).toBe("gate refused");
    expect(lastActionLabel(row("a-3"), NOW)).toBeNull();
  });

  it("in status's table and the desk's detail", () => {
    const data = {
      trunk: { name: "main", tip: "d".repeat(40) },
      scope: "fleet" as const,
      worktrees: [describedEarlier],
      refs: [],
      landings: [],
      overlaps: [],
    };
    expect(renderStatus(data, colorsFor(false, {}), NOW)).toContain("just now (describe 3h ago)");
    const model = buildDeskModel(data, NOW);
    const item = model.items.find((i) => i.kind === "berth");
    if (item === undefined) throw new Error("no berth item");
    const detail = { commits: [], files: [], fileCount: 0, receipt: null, brief: null };
    expect(detailLines(item, detail, model, NOW).join("\n")).toContain(
      "activity just now (last: describe 3h ago)",
    );
  });
});

describe("a standing grant on a row (decision 0078)", () => {
  it("comes after why the row needs attention, and the detail's queue line names it", () => {
    const granted = row("a-1", { granted: true, behind: 2, ahead: 0 });
    const data = {
      trunk: { name: "main", tip: "d".repeat(40) },
      scope: "fleet" as const,
      worktrees: [granted],
      refs: [],
      landings: [],
      overlaps: [],
    };
    const model = buildDeskModel(data, NOW);
    const text = listLines(model, NOW)
      .map((l) => l.text)
      .join("\n");
    expect(text).toMatch(/behind main by 2: berth update; granted: lands once submitted and green/);
    const item = model.items.find((i) => i.kind === "berth");
    if (item === undefined) throw new Error("no berth item");
    const detail = { commits: [], files: [], fileCount: 0, receipt: null, brief: null };
    expect(detailLines(item, detail, model, NOW)).toContain(
      "  queue    granted: lands once submitted and green",
    );
  });
});

describe("splitKeys", () => {
  it("hands each key of a chunk on its own; an escape sequence stays one key", () => {
    expect(splitKeys("j", NO_KEY)).toEqual([["j", NO_KEY]]);
    const keys = splitKeys("jj/Lo\r", NO_KEY);
    expect(keys.map(([input]) => input)).toEqual(["j", "j", "/", "L", "o", ""]);
    expect(keys[3]?.[1].shift).toBe(true);
    expect(keys[5]?.[1].return).toBe(true);
    expect(splitKeys("\u001b[A", { ...NO_KEY, upArrow: true })).toHaveLength(1);
    expect(splitKeys("ab\u007f", NO_KEY)[2]?.[1].backspace).toBe(true);
  });
});

describe("the survey's hints under the rows", () => {
  it("shows the first two and counts the rest, so the rows keep their room", () => {
    expect(fleetHintLines([])).toEqual([]);
    expect(fleetHintLines(["one", "two"])).toEqual(["hint: one", "hint: two"]);
    expect(fleetHintLines(["one", "two", "three", "four"])).toEqual([
      "hint: one",
      "hint: two",
      "... 2 more hint(s): berth status lists them",
    ]);
  });
});
