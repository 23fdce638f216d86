import { join } from "node:path";
import { refreshWorktreeIndex } from "../../git/status.js";
import { readIndexHeader } from "../../io/git-index.js";

/**
 * A new checkout's index, settled once (docs/decisions/0030). git writes the
 * index in the same second as the files it has just checked out, and a file
 * no older than the index is "racily clean": every `git status` must re-read
 * it to be sure, and berth's read-only statuses (which never write an index
 * back) would re-hash every such file on every survey, until the user ran git
 * there. `start` owns the checkout it made, so it refreshes that index once
 * the clock has passed the second the checkout was written in; the files are
 * then older than the index and stay settled.
 *
 * Waiting out the rest of that second is worth it only for a checkout large
 * enough for the re-reading to cost something; smaller ones are left alone.
 */
export const SETTLE_MIN_ENTRIES = 500;

/** File times come from the kernel's coarse clock, a few milliseconds behind Date.now(). */
const CLOCK_MARGIN_MS = 25;

export async function settleCheckoutIndex(
  path: string,
  adminDir: string,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<void> {
  const header = readIndexHeader(join(adminDir, "index"));
  if (header === null || header.entries < SETTLE_MIN_ENTRIES) return;
  const settled = (Math.floor(header.writtenMs / 1000) + 1) * 1000 + CLOCK_MARGIN_MS;
  const wait = settled - Date.now();
  if (wait > 0) await sleep(wait);
  // Best effort: a checkout git cannot refresh is still a started berth.
  await refreshWorktreeIndex(path).catch(() => undefined);
}
