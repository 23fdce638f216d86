import { describe, expect, it } from "vitest";
import { digestLogbook, medianOf, type ProcessProbe } from "../src/core/logbook/worktree-digest.js";
import { beginEvent, finishEvent } from "./helpers/logbook.js";

const NOW = new Date("2026-06-01T12:00:00Z");
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const PATH = "/work/repo.worktrees/x";
const subject = { path: PATH, branch: "berth/x" };

/** This host; only pid 4242 is alive. */
const probe: ProcessProbe = { host: "here", isAlive: (pid) => pid === 4242 };

describe("digestLogbook: in flight", () => {
  it("an unmatched begin 30 minutes old by a dead pid is in flight, shown as interrupted", () => {
    const events = [beginEvent({ at: ago(30), path: PATH, pid: 1, host: "here" })];
    const digest = digestLogbook(events, NOW, probe);
    expect(digest.factsFor(subject).running).toBe("interrupted gate");
    expect(digest.inFlight).toHaveLength(1);
  });

  it("an unmatched begin 30 minutes old on another host is running: its pid cannot be asked", () => {
    const events = [beginEvent({ at: ago(30), path: PATH, pid: 1, host: "elsewhere" })];
    expect(digestLogbook(events, NOW, probe).factsFor(subject).running).toBe("gate");
  });

  it("an unmatched begin 2 hours old by a dead pid is not", () => {
    const events = [beginEvent({ at: ago(120), path: PATH, pid: 1, host: "here" })];
    expect(digestLogbook(events, NOW, probe).factsFor(subject).running).toBeNull();
  });

  it("an unmatched begin 2 hours old by a live pid on this host is in flight", () => {
    const events = [beginEvent({ at: ago(120), path: PATH, pid: 4242, host: "here" })];
    expect(digestLogbook(events, NOW, probe).factsFor(subject).running).toBe("gate");
  });

  it("a pid on another host is never probed", () => {
    const events = [beginEvent({ at: ago(120), path: PATH, pid: 4242, host: "elsewhere" })];
    expect(digestLogbook(events, NOW, probe).factsFor(subject).running).toBeNull();
  });

  it("the horizon stretches to 10x the verb's median duration", () => {
    // gate usually takes 20 minutes: a gate begun 2 hours ago may still be running.
    const history = [1, 2, 3].flatMap((i) => {
      const b = beginEvent({ at: ago(1000 + i * 30), invocation: `old${i}`, path: "/other" });
      return [
        b,
        finishEvent({
          at: ago(980 + i * 30),
          invocation: `old${i}`,
          path: "/other",
          duration_ms: 20 * 60_000,
        }),
      ];
    });
    const gate = beginEvent({ at: ago(120), path: PATH, pid: 1, host: "here" });
    const start = beginEvent({ at: ago(120), path: "/y", pid: 1, host: "here", verb: "start" });
    const digest = digestLogbook([...history, gate, start], NOW, probe);
    expect(digest.factsFor(subject).running).toBe("interrupted gate");
    expect(digest.factsFor({ path: "/y", branch: null }).running).toBeNull();
    expect(digest.inFlight.map((e) => e.invocation)).toEqual([gate.invocation]);
  });

  it("a begin with its finish is not in flight, whatever its pid", () => {
    const b = beginEvent({ at: ago(5), path: PATH, pid: 4242, host: "here" });
    const f = finishEvent({ at: ago(4), invocation: b.invocation, path: PATH });
    expect(digestLogbook([b, f], NOW, probe).factsFor(subject).running).toBeNull();
  });
});

describe("digestLogbook: last action", () => {
  it("is the newest finish about the worktree, by path or (lacking one) by branch", () => {
    const events = [
      finishEvent({ at: ago(50), invocation: "a", path: PATH, verb: "start" }),
      finishEvent({ at: ago(40), invocation: "b", path: "/elsewhere", verb: "gate" }),
      finishEvent({
        at: ago(30),
        invocation: "c",
        branch: "berth/x",
        verb: "update",
        outcome: "refused",
        error_code: "precondition_failed",
      }),
      beginEvent({
        at: ago(10),
        invocation: "d",
        path: PATH,
        verb: "accept",
        pid: 1,
        host: "here",
      }),
    ];
    const facts = digestLogbook(events, NOW, probe).factsFor(subject);
    expect(facts.lastAction).toEqual({ verb: "update", outcome: "refused", at: ago(30) });
    expect(facts.running).toBe("interrupted accept");
    expect(facts.lastEventAt?.toISOString()).toBe(ago(10));
  });

  it("knows nothing about a worktree the logbook never mentions", () => {
    const facts = digestLogbook([], NOW, probe).factsFor(subject);
    expect(facts).toEqual({ running: null, lastAction: null, lastEventAt: null });
  });
});

describe("medianOf", () => {
  it("is the middle value, or the mean of the middle two", () => {
    expect(medianOf([])).toBeNull();
    expect(medianOf([5, 1, 3])).toBe(3);
    expect(medianOf([4, 1, 3, 2])).toBe(2.5);
  });
});
