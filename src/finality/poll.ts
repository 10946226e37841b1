// The light poll of a quiet chain's head: when no answer has shown a chain's head for
// `chains.<id>.head.pollSeconds`, one `eth_blockNumber` call to its explorer (the cheapest call an
// explorer answers: Blockscout reads its newest block number from memory, Explorer.EthRPC in
// apps/explorer/lib/explorer/eth_rpc.ex). Counted in metrics, billed to no key; marked with
// `x-egw-purpose: head-poll` so that an explorer's operator can tell it from client traffic.
import type { UpstreamAnswer, UpstreamRequest } from '../upstream/client.js';
import type { ChainHead } from './head.js';
import { retryAfterMs, UpstreamInvalidBody, UpstreamStatus } from '../upstream/failures.js';

export const HEAD_POLL_HEADER = 'x-egw-purpose';
const POLL_BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
const HEAD_POLL_REQUEST: UpstreamRequest = {
  path: '/api/eth-rpc',
  method: 'POST',
  headers: { accept: 'application/json', 'content-type': 'application/json', [HEAD_POLL_HEADER]: 'head-poll' },
  body: POLL_BODY,
  // An answer without a head is a failed attempt (tried on the next upstream, counted in its health
  // by its status: a 429 cools the upstream, a 5xx counts toward its ejection).
  check: (answer) => {
    if (answer.status === 429) return new UpstreamStatus(429, retryAfterMs(answer.headers['retry-after'], Date.now()));
    if (answer.status >= 500) return new UpstreamStatus(answer.status);
    return polledHead(answer) === undefined ? new UpstreamInvalidBody('a head poll answered without a block number') : undefined;
  },
};

/** What a poll needs of a chain (request/state.ts Chain). */
export interface PolledChain {
  readonly id: string;
  readonly head: ChainHead;
  readonly upstreams: { request(req: UpstreamRequest): Promise<UpstreamAnswer> };
}

export type PollOutcome = 'ok' | 'error';

/** The block number in an eth_blockNumber answer; undefined for anything else. */
export function polledHead(answer: Pick<UpstreamAnswer, 'status' | 'body'>): number | undefined {
  if (answer.status !== 200) return undefined;
  try {
    const parsed = JSON.parse(answer.body.toString('utf8')) as { result?: unknown };
    const result = parsed.result;
    return typeof result === 'string' && /^0x[0-9a-fA-F]{1,13}$/.test(result) ? parseInt(result.slice(2), 16) : undefined;
  } catch {
    return undefined;
  }
}

/** One poll of a chain, now; resolves when its answer is in (never rejects). */
export async function pollHead(
  chain: PolledChain,
  now: () => number,
  counted: (chain: string, outcome: PollOutcome) => void,
): Promise<void> {
  const head = chain.head;
  head.polling = true;
  head.lastPollAt = now();
  let outcome: PollOutcome = 'error';
  try {
    const block = polledHead(await chain.upstreams.request(HEAD_POLL_REQUEST));
    if (block !== undefined) {
      head.observe(block, now());
      outcome = 'ok';
    }
  } catch {
    // Counted; the chain's own requests report what is wrong with its upstreams.
  } finally {
    head.polling = false;
  }
  counted(chain.id, outcome);
}

/** Checks every `tickMs` which chains are due a poll (ChainHead.pollDue) and polls them; returns a stop function. */
export function startHeadPolls(
  chains: () => Iterable<PolledChain>,
  now: () => number,
  counted: (chain: string, outcome: PollOutcome) => void,
  tickMs = 1_000,
): () => void {
  const timer = setInterval(() => {
    const at = now();
    for (const chain of chains()) if (chain.head.pollDue(at)) void pollHead(chain, now, counted);
  }, tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
