import { describe, expect, it } from "vitest";
import { parseSince } from "../src/core/logbook/since.js";

const NOW = new Date("2026-06-01T12:00:00Z");

describe("parseSince", () => {
  it("reads ages before now", () => {
    expect(parseSince("30m", NOW)?.toISOString()).toBe("2026-06-01T11:30:00.000Z");
    expect(parseSince("2h", NOW)?.toISOString()).toBe("2026-06-01T10:00:00.000Z");
    expect(parseSince("3d", NOW)?.toISOString()).toBe("2026-05-29T12:00:00.000Z");
  });

  it("reads ISO dates and times, a time without offset as UTC", () => {
    expect(parseSince("2026-05-01", NOW)?.toISOString()).toBe("2026-05-01T00:00:00.000Z");
    expect(parseSince("2026-05-01T08:30", NOW)?.toISOString()).toBe("2026-05-01T08:30:00.000Z");
    expect(parseSince("2026-05-01T08:30:00+02:00", NOW)?.toISOString()).toBe(
      "2026-05-01T06:30:00.000Z",
    );
  });

  it("refuses anything else", () => {
    for (const bad of ["yesterday", "2h30m", "", "-3d", "2026-13-45"]) {
      expect(parseSince(bad, NOW)).toBeNull();
    }
  });

  it("refuses an age reaching back past the first instant a date can hold (not an Invalid Date)", () => {
    for (const far of ["9999999999999999d", "100100000d", "99999999999999w"]) {
      expect(parseSince(far, NOW)).toBeNull();
    }
    expect(parseSince("100000000d", NOW)?.getTime()).toBe(NOW.getTime() - 100_000_000 * 86_400_000);
  });
});
