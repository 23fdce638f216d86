import { availableParallelism } from "node:os";

/** Per-worktree git calls run in this many lanes at a time: enough to keep every core busy. */
export const DEFAULT_POOL_SIZE = Math.max(2, availableParallelism() + 1);

/** Maps `items` through `fn` with at most `limit` calls in flight, keeping order. */
export async function mapPool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
