// The least upstream calls any cache could make on a replay: an ideal cache with no size limit
// and no delays, run over the request stream as it was sent. Per cache key, a final answer is
// fetched once and kept for good; a moving one is fetched again once its route's TTL has passed
// since its last fetch. An answer is final when the data it is about was already below the
// finality line (head - depth, the head of the moment the request was sent) when it was fetched;
// an answer fetched while its block was above the line stays moving until it is fetched again,
// since the block could still have been replaced meanwhile. Answers a cache does not keep (not
// 200) are fetched every time. Pure.

export interface StreamItem {
  key: string;
  /** When the request was sent, ms (any clock, ascending order not required). */
  atMs: number;
  /** The route's TTL, seconds (0: not cached while moving). */
  ttlSeconds: number;
  /** Whether the answer's data lay below the finality line at atMs. */
  final: boolean;
  /** Whether a cache may keep the answer at all (a 200). */
  storable: boolean;
  /** A label to break the count down by (the route name). */
  label: string;
}

export interface LeastCalls {
  calls: number;
  /** Of which fetches of final answers (each key at most once). */
  finalFetches: number;
  byLabel: Record<string, number>;
}

/** Whether `block` lies at or below the finality line of `head` (the gateway's finality/lifetime.ts compares the same way). */
export const isFinal = (block: number | undefined, head: number, depth: number): boolean => block !== undefined && block <= head - depth;

export function leastUpstreamCalls(stream: readonly StreamItem[]): LeastCalls {
  const order = stream.map((item, i) => ({ item, i })).sort((a, b) => a.item.atMs - b.item.atMs || a.i - b.i);
  const held = new Map<string, { fetchedAt: number; final: boolean }>();
  const byLabel: Record<string, number> = {};
  let calls = 0;
  let finalFetches = 0;
  for (const { item } of order) {
    const entry = held.get(item.key);
    const fresh = entry !== undefined && (entry.final || item.atMs - entry.fetchedAt < item.ttlSeconds * 1000);
    if (fresh) continue;
    calls += 1;
    byLabel[item.label] = (byLabel[item.label] ?? 0) + 1;
    if (!item.storable) continue;
    if (item.final) finalFetches += 1;
    if (item.final || item.ttlSeconds > 0) held.set(item.key, { fetchedAt: item.atMs, final: item.final });
  }
  return { calls, finalFetches, byLabel };
}
