import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  appendEvents,
  appendRaw,
  beginEvent,
  finishEvent,
  logbookDirOf,
  logbookLines,
} from "./helpers/logbook.js";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";
import { assertJsonOutput } from "./helpers/schemas.js";

/** The logbook end to end, through the built binary. */

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const berth = (r: TestRepo, args: string[]) => runBerth(args, { cwd: r.path, env: r.env });
const parseLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

function snapshot(r: TestRepo): Record<string, string> {
  const dir = logbookDirOf(r.path);
  if (!existsSync(dir)) return {};
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n), "utf8")]));
}

describe("berth start and status", () => {
  it("start writes exactly one begin and one finish with the same id; status writes nothing", async () => {
    repo = makeRepo();
    const started = await berth(repo, ["start", "x", "--json"]);
    expect(started.code).toBe(0);
    const events = logbookLines(repo.path).map((l) => JSON.parse(l));
    expect(events.map((e) => e.event)).toEqual(["begin", "finish"]);
    expect(events[0].invocation).toBe(events[1].invocation);
    expect(events[0]).toMatchObject({
      schema: 1,
      verb: "start",
      branch: started.json.data.branch,
      path: started.json.data.path,
    });
    expect(events[1]).toMatchObject({ outcome: "ok", error_code: null });
    expect(Object.keys(events[1]).sort()).toEqual([
      "at",
      "branch",
      "duration_ms",
      "error_code",
      "event",
      "host",
      "invocation",
      "outcome",
      "path",
      "pid",
      "schema",
      "target",
      "verb",
    ]);
    expect(events[1].target).toBe(started.json.data.branch);

    const before = snapshot(repo);
    const status = await berth(repo, ["status", "--json"]);
    expect(status.code).toBe(0);
    await berth(repo, ["status"]);
    await berth(repo, ["logbook"]);
    expect(snapshot(repo)).toEqual(before);
    const row = status.json.data.worktrees.find(
      (w: { path: string }) => w.path === started.json.data.path,
    );
    expect(row.last_action).toMatchObject({ verb: "start", outcome: "ok" });
    expect(row.running).toBeNull();
    expect(typeof row.last_activity).toBe("string");
  });

  it("a refusal before begin still writes one begin and one finish; --dry-run writes nothing", async () => {
    repo = makeRepo();
    const refused = await berth(repo, ["start", "x", "--from", "no-such-ref"]);
    expect(refused.code).toBe(1);
    const events = logbookLines(repo.path).map((l) => JSON.parse(l));
    expect(events.map((e) => e.event)).toEqual(["begin", "finish"]);
    expect(events[1]).toMatchObject({
      outcome: "refused",
      error_code: "unknown_target",
      branch: "main",
    });

    const before = snapshot(repo);
    expect((await berth(repo, ["start", "y", "--dry-run"])).code).toBe(0);
    expect(snapshot(repo)).toEqual(before);
  });

  it("a berth that is running a verb shows as running in status, from another process", async () => {
    repo = makeRepo();
    const started = await berth(repo, ["start", "x", "--json"]);
    const { path, branch } = started.json.data;
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
    appendEvents(repo.path, [
      beginEvent({ at: twoHoursAgo, verb: "gate", path, branch, pid: process.pid }),
    ]);
    const status = await berth(repo, ["status", "--json"]);
    const row = status.json.data.worktrees.find((w: { path: string }) => w.path === path);
    expect(row.running).toBe("gate");
    const human = await berth(repo, ["status"]);
    expect(human.stdout).toMatch(/running gate/);
  });
});

describe("[logbook] enabled = false", () => {
  it("no verb creates logbook files, and status reports last_activity from git", async () => {
    repo = makeRepo({ config: "[logbook]\nenabled = false\n" });
    expect((await berth(repo, ["start", "x"])).code).toBe(0);
    expect((await berth(repo, ["start", "y", "--from", "nope"])).code).toBe(1);
    expect((await berth(repo, ["init"])).code).toBe(1);
    const status = await berth(repo, ["status", "--json"]);
    expect(status.code).toBe(0);
    expect(existsSync(join(repo.path, ".git", "berth", "logbook"))).toBe(false);
    expect(status.json.data.worktrees).toHaveLength(2);
    for (const row of status.json.data.worktrees) {
      expect(Number.isNaN(Date.parse(row.last_activity))).toBe(false);
      expect(row.running).toBeNull();
      expect(row.last_action).toBeNull();
    }
  });
});

describe("berth logbook", () => {
  it("skips a torn last line and a line of an unknown schema; --json prints the rest", async () => {
    repo = makeRepo();
    const b = beginEvent({ at: "2026-06-01T10:00:00.000Z", verb: "start", branch: "berth/a" });
    const f = finishEvent({
      at: "2026-06-01T10:00:02.000Z",
      invocation: b.invocation,
      verb: "start",
      branch: "berth/a",
    });
    const future = { ...b, schema: 2, invocation: "from-the-future" };
    appendRaw(
      repo.path,
      "2026-06",
      `${JSON.stringify(b)}\n${JSON.stringify(future)}\n${JSON.stringify(f)}\n`,
    );
    appendRaw(repo.path, "2026-06", JSON.stringify(f).slice(0, 30));
    const json = await berth(repo, ["logbook", "--json"]);
    expect(json.code).toBe(0);
    expect(parseLines(json.stdout)).toEqual([b, f]);

    const human = await berth(repo, ["logbook"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/2026-06-01T10:00:02Z\s+start\s+berth\/a\s+ok\s+1\.0s/);
    expect(human.stderr).toMatch(/2 unreadable logbook lines skipped/);
  });

  it("a target typed with control characters (an awaited name holding ESC) is shown as escapes; --json keeps it", async () => {
    repo = makeRepo();
    const typed = "q\u001b[2J";
    const refused = await berth(repo, ["await", "--green", typed, "--timeout", "0"]);
    expect(refused.code).toBe(1);
    const human = await berth(repo, ["logbook"]);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toContain("\u001b");
    expect(human.stdout).toContain("-> q\\x1b[2J");
    const json = parseLines((await berth(repo, ["logbook", "--json"])).stdout);
    expect(json.map((e) => e.target)).toEqual([typed, typed]);
  });

  it("filters by branch, verb and since", async () => {
    repo = makeRepo();
    const now = Date.now();
    const at = (hoursAgo: number) => new Date(now - hoursAgo * 3600_000).toISOString();
    const events = [
      beginEvent({ at: at(5), verb: "start", branch: "berth/a", invocation: "one" }),
      beginEvent({ at: at(1), verb: "gate", branch: "berth/a", invocation: "two" }),
      beginEvent({ at: at(1), verb: "gate", branch: "berth/b", invocation: "three" }),
    ];
    appendEvents(repo.path, events);
    const ids = async (args: string[]) =>
      parseLines((await berth(repo as TestRepo, ["logbook", "--json", ...args])).stdout).map(
        (e) => e.invocation,
      );
    expect(await ids(["--branch", "a"])).toEqual(["one", "two"]);
    expect(await ids(["--branch", "berth/b"])).toEqual(["three"]);
    expect(await ids(["--verb", "gate", "--since", "2h"])).toEqual(["two", "three"]);
    expect(await ids(["--since", at(6)])).toEqual(["one", "two", "three"]);
    const bad = await berth(repo, ["logbook", "--since", "yesterday"]);
    expect(bad.code).toBe(2);
    // A verb the logbook never records: not just "No logbook events", but why.
    const never = await berth(repo, ["logbook", "--verb", "status"]);
    expect(never.code).toBe(0);
    expect(never.stderr).toContain("No logbook events.");
    expect(never.stderr).toContain(
      'the logbook records only verbs that change something, and "status"',
    );
    const known = await berth(repo, ["logbook", "--verb", "gate"]);
    expect(known.stderr).not.toContain("records only verbs");
  });

  it("--since an age too large for a date is the usage refusal --since nonsense gets, not internal", async () => {
    repo = makeRepo();
    const human = await berth(repo, ["logbook", "--since", "9999999999999999d"]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain('--since "9999999999999999d": expected an ISO time or an age');
    expect(human.stderr).not.toContain("unexpected failure");
    const json = await berth(repo, ["logbook", "--since", "9999999999999999d", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "usage" } });
  });

  it("--follow prints an event written by another process within 2 seconds", async () => {
    repo = makeRepo();
    const first = beginEvent({ at: new Date().toISOString(), verb: "start", invocation: "first" });
    appendEvents(repo.path, [first]);
    const child = spawn(process.execPath, [BERTH_BIN, "logbook", "--follow", "--json"], {
      cwd: repo.path,
      env: repo.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const waiters: Array<() => void> = [];
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      for (const w of waiters.splice(0)) w();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on("close", (code) => resolve(code)),
    );
    const waitFor = async (text: string, ms: number) => {
      const deadline = Date.now() + ms;
      while (!out.includes(text)) {
        const left = deadline - Date.now();
        if (left <= 0) return false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return true;
    };
    try {
      expect(await waitFor('"first"', 20_000)).toBe(true);
      const second = finishEvent({
        at: new Date().toISOString(),
        invocation: "second-event",
        verb: "start",
      });
      const writtenAt = Date.now();
      appendEvents(repo.path, [second]);
      expect(await waitFor('"second-event"', 2000)).toBe(true);
      expect(Date.now() - writtenAt).toBeLessThan(2000);
      expect(parseLines(out).map((e) => e.invocation)).toEqual(["first", "second-event"]);
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    assertJsonOutput(["logbook", "--follow", "--json"], out, 0);
  });
});

describe("robustness", () => {
  it("a logbook folder that is not writable leaves the verb's result and exit code unchanged", async () => {
    repo = makeRepo();
    // Root ignores permissions, so block the folder with a file instead.
    mkdirSync(join(repo.path, ".git", "berth"));
    writeFileSync(logbookDirOf(repo.path), "not a folder");
    const ok = await berth(repo, ["start", "x", "--json"]);
    expect(ok.code).toBe(0);
    expect(ok.json.ok).toBe(true);
    expect(existsSync(ok.json.data.path)).toBe(true);
    const refused = await berth(repo, ["start", "y", "--from", "nope", "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe("unknown_target");
    const debug = await berth(repo, ["start", "z", "--debug"]);
    expect(debug.code).toBe(0);
    expect(debug.stderr.match(/logbook not written/g)).toHaveLength(1);
    expect(ok.stderr).not.toMatch(/logbook/);
  });

  it("eight concurrent starts produce 16 well-formed lines", async () => {
    repo = makeRepo();
    const r = repo;
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => berth(r, ["start", `c${i}`, "--json"])),
    );
    const lines = logbookLines(r.path);
    expect(lines).toHaveLength(16);
    const events = lines.map((l) => JSON.parse(l));
    const byId = new Map<string, string[]>();
    for (const e of events) byId.set(e.invocation, [...(byId.get(e.invocation) ?? []), e.event]);
    expect(byId.size).toBe(8);
    for (const kinds of byId.values()) expect(kinds.sort()).toEqual(["begin", "finish"]);
    // Whatever each run's result (a fleet lock may refuse some), the finish says it.
    const finishes = events.filter((e) => e.event === "finish");
    expect(finishes.filter((e) => e.outcome === "ok")).toHaveLength(
      runs.filter((x) => x.code === 0).length,
    );
  });
});
