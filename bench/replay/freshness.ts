// Freshness of the moving fields an answer carries. Each of them implies a head h the answer was
// true at: the newest height of a block list, eth_blockNumber's result, and for every object with
// `block_number` and `confirmations`, block_number + confirmations - 1 (Blockscout counts the
// head's own block as one confirmation: Explorer.Chain.confirmations/2,
// apps/explorer/lib/explorer/chain.ex, as fixture/head.ts follows it). The chain's head passed h
// when it reached h + 1 (the fixture's headChangedAt(h + 1)); an answer served more than its
// route's TTL after that showed a moving field older than its route's TTL: a freshness violation.
// Pure: the caller passes the bodies, the times and the fixture's head history.
import type { HeadShape } from './requests.js';

/**
 * Allowance for the time an answer spends between the fixture rendering it and the gateway
 * storing it (the gateway's TTL counts from the store, the head from the fixture's render):
 * loopback and one event-loop turn, even under the replay's load.
 */
export const FRESHNESS_GRACE_MS = 100;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An integer, a decimal string or a hex quantity. */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  if (/^\d{1,15}$/.test(v)) return Number(v);
  if (/^0x[0-9a-fA-F]{1,13}$/.test(v)) return Number.parseInt(v.slice(2), 16);
  return undefined;
}

function walk(value: unknown, out: number[]): void {
  if (Array.isArray(value)) {
    for (const v of value) walk(v, out);
    return;
  }
  if (!isObject(value)) return;
  const confirmations = asNumber(value.confirmations);
  const block = asNumber(value.block_number);
  // A pending transaction has 0 confirmations and no block: it implies no head.
  if (confirmations !== undefined && confirmations > 0 && block !== undefined) out.push(block + confirmations - 1);
  for (const v of Object.values(value)) if (v !== null && typeof v === 'object') walk(v, out);
}

/** The heads an answer implies, by where its request's kind shows them; [] when it shows none or cannot be read. */
export function impliedHeads(shape: HeadShape, body: string): number[] {
  if (shape === 'none') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  if (shape === 'result-number') {
    const h = isObject(parsed) ? asNumber(parsed.result) : undefined;
    return h === undefined ? [] : [h];
  }
  if (shape === 'tip-list') {
    const items = Array.isArray(parsed) ? parsed : isObject(parsed) ? parsed.items : undefined;
    if (!Array.isArray(items)) return [];
    let top: number | undefined;
    for (const item of items) {
      const h = isObject(item) ? asNumber(item.height) : undefined;
      if (h !== undefined && (top === undefined || h > top)) top = h;
    }
    return top === undefined ? [] : [top];
  }
  const out: number[] = [];
  walk(parsed, out);
  return out;
}

/**
 * How long past its route's TTL the stalest implied head was when the answer was served, ms:
 * servedAt - (when the head first passed it) - ttl. Undefined when no implied head had been
 * passed yet (nothing moving was old). A violation is an excess above FRESHNESS_GRACE_MS.
 */
export function freshnessExcessMs(
  heads: readonly number[],
  servedAtMs: number,
  ttlSeconds: number,
  headChangedAt: (n: number) => number | undefined,
): number | undefined {
  let worst: number | undefined;
  for (const h of heads) {
    const passedAt = headChangedAt(h + 1);
    if (passedAt === undefined) continue;
    const excess = servedAtMs - passedAt - ttlSeconds * 1000;
    if (worst === undefined || excess > worst) worst = excess;
  }
  return worst;
}

export const isViolation = (excessMs: number | undefined): boolean => excessMs !== undefined && excessMs > FRESHNESS_GRACE_MS;
