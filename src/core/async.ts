// Pure helpers for fan-out work: a bounded pool, de-duplication and re-ordering of keyed results.
// No I/O of their own; the adapters and the evidence reads share them instead of keeping copies.

/** `fn` over every item with at most `limit` calls in flight; results in the items' order. The first rejection rejects. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(workers);
  return out;
}

/** The strings in their first-seen order, each once. */
export function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/** The entries of `m` in `order` (its first occurrence of each key), leaving out keys `m` does not have. */
export function reorder<R>(m: ReadonlyMap<string, R>, order: readonly string[]): Map<string, R> {
  return new Map(
    unique(order)
      .filter((k) => m.has(k))
      .map((k) => [k, m.get(k)!]),
  );
}
