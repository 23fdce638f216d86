import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  appendLogbookEvent,
  parseEventLine,
  parseLogbookText,
  readLogbook,
} from "../src/io/logbook.js";
import { monthFileName } from "../src/io/month-files.js";
import { beginEvent, finishEvent } from "./helpers/logbook.js";
import { makeTempDir, type TempDir } from "./helpers/repo.js";

let dir: TempDir | undefined;
afterEach(() => {
  dir?.cleanup();
  dir = undefined;
});

const begin = beginEvent({ at: "2026-06-01T10:00:00.000Z", invocation: "aaaa", verb: "start" });
const finish = finishEvent({ at: "2026-06-01T10:00:01.000Z", invocation: "aaaa", verb: "start" });
const line = (value: unknown) => JSON.stringify(value);

describe("parseLogbookText", () => {
  it("reads well-formed events in order", () => {
    const read = parseLogbookText(`${line(begin)}\n${line(finish)}\n`);
    expect(read.events).toEqual([begin, finish]);
    expect(read.skipped).toBe(0);
  });

  it("skips and counts a torn last line and a line of an unknown schema", () => {
    const torn = line(finish).slice(0, 40);
    const future = line({ ...begin, schema: 2, invocation: "bbbb" });
    const read = parseLogbookText(`${line(begin)}\n${future}\n${line(finish)}\n${torn}`);
    expect(read.events).toEqual([begin, finish]);
    expect(read.skipped).toBe(2);
  });

  it("recovers the event appended after a torn line", () => {
    const torn = line(begin).slice(0, 50);
    const read = parseLogbookText(`${torn}${line(finish)}\n`);
    expect(read.events).toEqual([finish]);
    expect(read.skipped).toBe(1);
  });

  it("refuses lines of the wrong shape", () => {
    expect(parseEventLine(line({ ...begin, pid: "12" }))).toBeNull();
    expect(parseEventLine(line({ ...begin, event: "middle" }))).toBeNull();
    expect(parseEventLine(line({ ...finish, outcome: "great" }))).toBeNull();
    expect(parseEventLine(line({ ...finish, duration_ms: -1 }))).toBeNull();
    expect(parseEventLine(line({ ...begin, at: "yesterday" }))).toBeNull();
    expect(parseEventLine("[1,2]")).toBeNull();
    expect(parseEventLine(line({ ...begin, target: 7 }))).toBeNull();
    expect(parseEventLine(line(begin))).toEqual(begin);
  });

  it("reads lines written before events named a target (as target: null) and the old `partial` outcome", () => {
    const { target: _target, ...oldBegin } = { ...begin, branch: "berth/x" };
    const { target: _t, ...oldFinish } = { ...finish, branch: "berth/x", outcome: "partial" };
    const read = parseLogbookText(`${line(oldBegin)}\n${line(oldFinish)}\n`);
    expect(read.skipped).toBe(0);
    expect(read.events).toMatchObject([
      { event: "begin", branch: "berth/x", target: null },
      { event: "finish", branch: "berth/x", target: null, outcome: "partial" },
    ]);
    for (const outcome of ["timeout", "interrupted"]) {
      expect(parseEventLine(line({ ...finish, outcome, target: "berth/y" }))).toMatchObject({
        outcome,
        target: "berth/y",
      });
    }
  });
});

describe("appendLogbookEvent", () => {
  it("creates the folder and appends one line per event to the event's month file", () => {
    dir = makeTempDir();
    const logbook = join(dir.path, "berth", "logbook");
    appendLogbookEvent(logbook, begin);
    appendLogbookEvent(logbook, finish);
    expect(readdirSync(logbook)).toEqual(["2026-06.jsonl"]);
    expect(readFileSync(join(logbook, "2026-06.jsonl"), "utf8")).toBe(
      `${line(begin)}\n${line(finish)}\n`,
    );
    expect(monthFileName(new Date("2026-12-31T23:59:59Z"))).toBe("2026-12.jsonl");
  });

  it("keeps the 12 newest month files when a new month starts", () => {
    dir = makeTempDir();
    const logbook = join(dir.path, "logbook");
    mkdirSync(logbook);
    const months: string[] = [];
    for (let m = 1; m <= 12; m++) months.push(`2025-${String(m).padStart(2, "0")}.jsonl`);
    months.push("2026-01.jsonl");
    for (const name of months) writeFileSync(join(logbook, name), "");
    writeFileSync(join(logbook, "notes.txt"), "not a month file");
    appendLogbookEvent(logbook, { ...begin, at: "2026-02-03T00:00:00.000Z" });
    const kept = readdirSync(logbook).sort();
    expect(kept.filter((n) => n.endsWith(".jsonl"))).toEqual([...months.slice(2), "2026-02.jsonl"]);
    expect(kept).toContain("notes.txt");
  });

  it("throws when the folder cannot be written (the journal catches it)", () => {
    dir = makeTempDir();
    const blocked = join(dir.path, "logbook");
    writeFileSync(blocked, "a file where the folder should be");
    expect(() => appendLogbookEvent(blocked, begin)).toThrow();
  });
});

describe("readLogbook", () => {
  it("reads nothing from a folder that does not exist", async () => {
    dir = makeTempDir();
    expect(await readLogbook(join(dir.path, "none"))).toEqual({ events: [], skipped: 0 });
  });

  it("reads month files oldest first, and only the newest when asked", async () => {
    dir = makeTempDir();
    const logbook = join(dir.path, "logbook");
    const may = { ...begin, at: "2026-05-31T23:00:00.000Z", invocation: "may" };
    appendLogbookEvent(logbook, begin);
    appendLogbookEvent(logbook, may);
    expect((await readLogbook(logbook)).events).toEqual([may, begin]);
    expect((await readLogbook(logbook, { newestFiles: 1 })).events).toEqual([begin]);
    expect((await readLogbook(logbook, { fromMonth: "2026-06" })).events).toEqual([begin]);
    expect(existsSync(join(logbook, "2026-05.jsonl"))).toBe(true);
  });
});
