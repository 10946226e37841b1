// The JSON-RPC variants: what they POST to `/1/json-rpc`, the TTLs that keep the answers cached
// for the whole bench, and the checks that they are measured on cache hits.
//
// - gateway-rpc-hit: one `eth_blockNumber` call, the call clients make most;
// - gateway-rpc-batch10: one batch of ten `eth_getBalance` calls on ten addresses (what a wallet
//   or a portfolio page sends), each a cache entry of its own.
// Both answers are warmed before the check request; the TTLs below outlast any bench, so every
// measured request is answered from the in-process cache, call by call.
import type { Variant } from './shared.js';

export const RPC_PATH = '/1/json-rpc';

/**
 * `cache.ttlSeconds` entries for the bench's gateway: eth_blockNumber moves with the head (2 s by
 * default) and a balance on `latest` too; an hour keeps both cached through any run.
 */
export const BENCH_RPC_TTLS: Readonly<Record<string, number>> = { 'rpc.eth_blockNumber': 3600, 'rpc.eth_getBalance': 3600 };

const BATCH_SIZE = 10;
/** Ten distinct addresses, stable between runs. */
const BATCH_ADDRESSES = Array.from({ length: BATCH_SIZE }, (_, i) => `0x${(0xd8da6bf2 + i * 104_729).toString(16).padStart(40, '0')}`);

const SINGLE_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
const BATCH_BODY = JSON.stringify(
  BATCH_ADDRESSES.map((address, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [address, 'latest'] })),
);

/** The JSON-RPC variants and what they send: one body, every request the same. */
export const RPC_REQUESTS: ReadonlyMap<Variant, { body: string; calls: number }> = new Map([
  ['gateway-rpc-hit', { body: SINGLE_BODY, calls: 1 }],
  ['gateway-rpc-batch10', { body: BATCH_BODY, calls: BATCH_SIZE }],
]);

/**
 * What the bench origin answers a JSON-RPC call with (bench/origin.ts): a block number, or a
 * balance derived from the address; never null (null answers are not cached).
 */
export function originResult(method: unknown, params: unknown): string {
  if (method === 'eth_getBalance' && Array.isArray(params) && typeof params[0] === 'string') {
    return `0x${(BigInt(params[0]) % 10n ** 21n).toString(16)}`;
  }
  return '0x1406f40';
}

const isAnswer = (v: unknown, id: number): boolean =>
  v !== null &&
  typeof v === 'object' &&
  (v as { id?: unknown }).id === id &&
  typeof (v as { result?: unknown }).result === 'string' &&
  (v as { error?: unknown }).error === undefined;

/**
 * A JSON-RPC error comes with HTTP 200, so a status check alone would not notice one: the answer
 * must be JSON-RPC results with the request's ids, and (for the single call, when `hit`)
 * `x-cache: HIT`. Returns what is wrong, or undefined.
 */
async function rpcProblem(url: string, variant: Variant, authorization: string, hit: boolean): Promise<string | undefined> {
  const spec = RPC_REQUESTS.get(variant)!;
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: spec.body,
    signal: AbortSignal.timeout(5_000),
  });
  const text = await res.text();
  if (res.status !== 200) return `status ${res.status}: ${text.slice(0, 200)}`;
  if (res.headers.get('x-ratelimit-limit') === null) return 'no x-ratelimit-limit header';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `a body that is not JSON: ${text.slice(0, 200)}`;
  }
  const answers = spec.calls === 1 ? [parsed] : parsed;
  if (!Array.isArray(answers) || answers.length !== spec.calls || !answers.every((a, i) => isAnswer(a, i + 1))) {
    return `not ${spec.calls} JSON-RPC result(s) with the request's ids: ${text.slice(0, 200)}`;
  }
  if (hit && spec.calls === 1 && res.headers.get('x-cache') !== 'HIT') return `x-cache ${res.headers.get('x-cache')}, not HIT`;
  return undefined;
}

/**
 * The warm-up request, which fills the cache (the origin's answers), then the check request, which
 * must be answered from it; throws when either is wrong.
 */
export async function warmAndCheckRpc(url: string, variant: Variant, authorization: string): Promise<void> {
  for (const [what, hit] of [
    ['warm-up', false],
    ['check', true],
  ] as const) {
    const problem = await rpcProblem(url, variant, authorization, hit);
    if (problem) throw new Error(`${variant} answered the ${what} request with ${problem}`);
  }
}

/** Where the bench origin says how many JSON-RPC calls it has answered (bench/origin.ts). */
export const RPC_CALLS_PATH = '/bench/rpc-calls';

/** How many JSON-RPC calls the origin has answered: unchanged over a run means every call of it was a hit. */
export async function originRpcCalls(origin: string): Promise<number> {
  const res = await fetch(`${origin}${RPC_CALLS_PATH}`, { signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  const n = Number(text);
  if (res.status !== 200 || !Number.isInteger(n)) throw new Error(`origin ${RPC_CALLS_PATH}: ${res.status} ${text.slice(0, 100)}`);
  return n;
}
