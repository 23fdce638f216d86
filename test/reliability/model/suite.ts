import { afterAll, describe, expect, it } from "vitest";
import { sequenceSeed } from "./prng.js";
import { emptyStats, runSequence, type SequenceStats } from "./sequence.js";

/**
 * The model-based suite (spec section 9: invariants 1-5, 7-9 and 11), split into shards
 * so that vitest runs them side by side. See docs/reliability.md.
 *
 *   BERTH_FUZZ_SEED=<n>     replay one sequence (every shard runs just that one)
 *   BERTH_FUZZ_RUNS=<n>     sequences over all shards (default 300)
 *   BERTH_FUZZ_BASE=<n>     the base the sequence seeds derive from (default random, printed)
 */

export function defineModelSuite(file: string, shard: number, shards: number): void {
  const env = process.env;
  const replay = env.BERTH_FUZZ_SEED;
  const runs = Number(env.BERTH_FUZZ_RUNS ?? 300);
  const base = Number(env.BERTH_FUZZ_BASE ?? Math.floor(Math.random() * 2 ** 32));
  const seeds =
    replay === undefined
      ? Array.from({ length: runs }, (_, i) => i)
          .filter((i) => i % shards === shard)
          .map((i) => sequenceSeed(base, i))
      : [Number(replay)];

  const totals: SequenceStats & { sequences: number; losses: number } = {
    sequences: 0,
    losses: 0,
    ...emptyStats(),
  };
  afterAll(() => {
    // The figures docs/reliability.md quotes come from these lines.
    console.log(`[berth fuzz] ${file} base ${base}: ${JSON.stringify(totals)}`);
  });

  describe(`random histories keep every safety invariant (base ${base}, shard ${shard + 1}/${shards})`, () => {
    it.each(seeds)("sequence seed %i", async (seed) => {
      const report = await runSequence(seed);
      add(totals, report.stats);
      totals.sequences += 1;
      if (report.violations.length > 0) totals.losses += 1;
      const replayCommand = `BERTH_FUZZ_SEED=${seed} npx vitest run ${file}`;
      expect(
        report.violations,
        `seed ${seed} broke an invariant. Replay: ${replayCommand}\nhistory:\n  ${report.log.join("\n  ")}\n`,
      ).toEqual([]);
    });
  });
}

function add(into: SequenceStats, stats: SequenceStats): void {
  into.verbs += stats.verbs;
  into.handChanges += stats.handChanges;
  into.faults += stats.faults;
  into.commitsChecked += stats.commitsChecked;
  for (const key of ["byVerb", "byCode", "byHand", "events", "ms"] as const) {
    for (const [k, n] of Object.entries(stats[key])) into[key][k] = (into[key][k] ?? 0) + n;
  }
}
