import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  decidedArchivePath,
  type QueueEntry,
  RECENT_DECIDED,
  readQueue,
  writeEntry,
} from "../src/io/queue-store.js";
import { berthWith, queueFixture } from "./helpers/queue.js";
import { runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * A fleet that has landed for months: decided entries no reader needs leave
 * the queue folder after a drain, into `<queue>/decided.jsonl`, so status,
 * await's polls and each lander round read only what is still in play.
 */

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const GATE = '[gate]\nchecks = [{ name = "ok", run = "true" }]\n';
const DAY_MS = 24 * 60 * 60 * 1000;

describe("decided queue entries", () => {
  it("a drain moves the old decided ones to decided.jsonl and keeps what readers need", async () => {
    const fx = queueFixture(GATE);
    repo = fx.repo;
    const r = fx.repo;
    const { env } = fx;
    const main = r.path;
    const commonDir = join(main, ".git");
    const berth = (...args: string[]) => runBerth([...args, "--json"], { cwd: main, env });
    const live = await berthWith(r, env, "live", { "live.txt": "1\n" });
    expect((await berth("accept", live.id, "--no-wait")).json.data.queue.seq).toBe(1);
    expect((await berth("queue", "withdraw", live.id)).code).toBe(0);
    const [first] = await readQueue(commonDir);
    if (first === undefined) throw new Error("no entry");

    // Sixty berths long gone, landed two days ago; one decided an hour ago.
    const old = new Date(Date.now() - 2 * DAY_MS).toISOString();
    const gone = (seq: number, at: string): QueueEntry => ({
      ...first,
      seq,
      id: `gone-${seq}`,
      branch: `berth/gone-${seq}`,
      state: "landed",
      reason: null,
      updated_at: at,
    });
    for (let seq = 2; seq <= 61; seq++) await writeEntry(commonDir, gone(seq, old));
    const fresh = gone(5, new Date(Date.now() - 60 * 60 * 1000).toISOString());
    await writeEntry(commonDir, fresh);
    // live's withdrawn entry is old too, but its berth is still here.
    await writeEntry(commonDir, { ...first, updated_at: old });

    const run = await berth("queue", "run");
    expect(run.code, run.stderr).toBe(0);
    const kept = (await readQueue(commonDir)).map((e) => e.seq);
    const newest = Array.from({ length: RECENT_DECIDED }, (_, i) => 61 - RECENT_DECIDED + 1 + i);
    expect(kept).toEqual([1, 5, ...newest]);
    const archived = readFileSync(decidedArchivePath(commonDir), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as QueueEntry).seq);
    expect(archived.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 60 }, (_, i) => i + 2).filter(
        (seq) => seq !== 5 && !newest.includes(seq),
      ),
    );
    expect(
      readdirSync(join(commonDir, "berth", "queue")).filter((n) => n.endsWith(".json")),
    ).toHaveLength(kept.length);

    // berth queue says where the rest went; the next submission follows the newest number.
    const listed = await berth("queue");
    expect(listed.json.data.entries).toHaveLength(kept.length);
    expect(listed.json.hints).toEqual([
      `older decided entries (more than a day old, beyond the last ${RECENT_DECIDED}) are in ${decidedArchivePath(commonDir)}`,
    ]);
    const next = await berthWith(r, env, "next", { "next.txt": "1\n" });
    expect((await berth("accept", next.id, "--no-wait")).json.data.queue.seq).toBe(62);
  });

  it("an entry file berth cannot read (a newer version's, one edited by hand) keeps its number: the next submission goes past it", async () => {
    const fx = queueFixture(GATE);
    repo = fx.repo;
    const r = fx.repo;
    const { env } = fx;
    const main = r.path;
    const berth = (...args: string[]) => runBerth([...args, "--json"], { cwd: main, env });
    const one = await berthWith(r, env, "one", { "one.txt": "1\n" });
    expect((await berth("accept", one.id, "--no-wait")).json.data.queue.seq).toBe(1);
    const folder = join(main, ".git", "berth", "queue");
    const foreign = `${JSON.stringify({ version: 2, seq: 2, id: "from-a-newer-berth" })}\n`;
    writeFileSync(join(folder, "000002.json"), foreign);
    writeFileSync(join(folder, "000003.json"), '{"torn');
    // Before: the next number was the last readable entry's plus one, taken, forever.
    const two = await berthWith(r, env, "two", { "two.txt": "2\n" });
    const submitted = await berth("accept", two.id, "--no-wait");
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(submitted.json.data.queue.seq).toBe(4);
    expect(readFileSync(join(folder, "000002.json"), "utf8")).toBe(foreign);
    expect(readFileSync(join(folder, "000003.json"), "utf8")).toBe('{"torn');
    // berth queue says which files it skipped.
    const listed = await berth("queue");
    expect(listed.json.data.entries.map((e: { seq: number }) => e.seq)).toEqual([1, 4]);
    expect(listed.json.hints).toContain(
      `berth cannot read 2 entry file(s), left as they are (a newer berth's, or edited by hand): ${join(folder, "000002.json")}, ${join(folder, "000003.json")}`,
    );
  });
});
