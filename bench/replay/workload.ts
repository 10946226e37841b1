// The replay's client workload: a seeded, open-loop stream of events shaped like an explorer's
// traffic. Pure: the same settings give the same events. An event says what a client asks for in
// terms that do not depend on the run: an old block by number, the k-th newest block, "the next
// page" of an indexer. bench/replay/requests.ts turns it into an HTTP request when it is sent,
// against the head of the moment and the page cursor of the indexer's previous answer.
//
// What it is made of (MIX, per mille of requests):
// - the tip: /api/v2/blocks, /api/v2/main-page/blocks, eth_blockNumber over JSON-RPC and the
//   legacy module=block&action=eth_block_number;
// - new blocks as they appear: the block k behind the head (k exponential, mean NEW_BLOCK_MEAN),
//   its transactions, one of its transactions;
// - old history, Zipf-distributed: blocks, their transactions, transactions and their logs,
//   addresses (first page of transactions, the address, its token balances), the same blocks
//   and transactions through the legacy API (getblockreward, txlist over an old range) and
//   JSON-RPC (eth_getBlockByNumber, eth_getTransactionByHash / Receipt, eth_getLogs);
// - indexers paging addresses' transaction histories with the previous answer's next_page_params.
// Arrivals are a Poisson process at `rate` requests a second.
import { exponential, seeded, uniformOf, Zipf, type Rng } from './random.js';

export interface WorkloadSettings {
  /** Length of the replay, seconds. */
  durationS: number;
  /** Mean requests per second. */
  rate: number;
  seed: number;
  /** The fixture's head when the replay starts: "old" is counted back from it. */
  startBlock: number;
}

/** Old blocks lie at least this far below the start head: final from the first request on. */
export const OLD_MIN_AGE = 1_000;
/** ...and within this many blocks below that. */
export const OLD_SPAN = 2_000_000;
/** Distinct old blocks and transactions (Zipf ranks) and their exponent. */
export const OLD_BLOCKS = 50_000;
export const OLD_TRANSACTIONS = 100_000;
export const HISTORY_EXPONENT = 1.0;
/** Distinct addresses, and their exponent. */
export const ADDRESSES = 400;
export const ADDRESS_EXPONENT = 0.9;
/** Mean distance behind the head of a "new block" request, blocks (exponential, capped). */
export const NEW_BLOCK_MEAN = 6;
export const NEW_BLOCK_MAX = 200;
/** Indexers paging addresses' histories at once. */
export const INDEXERS = 8;
/** Blocks one eth_getLogs call covers; old legacy txlist windows are LEGACY_WINDOW blocks. */
export const LOGS_RANGE = 10;
export const LEGACY_WINDOW = 10_000;

export type TipKind = 'tip-blocks' | 'tip-main-page' | 'tip-rpc-block-number' | 'tip-legacy-block-number';
export type NewKind = 'new-block' | 'new-block-txs' | 'new-tx';
export type OldBlockKind = 'old-block' | 'old-block-txs' | 'legacy-block-reward' | 'rpc-block' | 'rpc-logs';
export type OldTxKind = 'old-tx' | 'old-tx-logs' | 'rpc-tx' | 'rpc-receipt';
export type AddressKind = 'address-txs' | 'address' | 'token-balances' | 'legacy-txlist';
export type EventKind = TipKind | NewKind | OldBlockKind | OldTxKind | AddressKind | 'indexer-page';

export type ReplayEvent =
  | { atMs: number; kind: TipKind }
  /** `back` blocks behind the head when sent; `pick` chooses among the block's transactions. */
  | { atMs: number; kind: NewKind; back: number; pick: number }
  | { atMs: number; kind: OldBlockKind; block: number }
  /** An old transaction: the first block at or below `block` that has one (with logs for old-tx-logs), `pick` among them. */
  | { atMs: number; kind: OldTxKind; block: number; pick: number }
  | { atMs: number; kind: AddressKind; address: string; endBlock: number }
  | { atMs: number; kind: 'indexer-page'; indexer: number };

/** Per mille of requests, by kind. */
export const MIX: Readonly<Record<EventKind, number>> = {
  'tip-blocks': 50,
  'tip-main-page': 60,
  'tip-rpc-block-number': 50,
  'tip-legacy-block-number': 20,
  'new-block': 50,
  'new-block-txs': 30,
  'new-tx': 40,
  'old-block': 120,
  'old-block-txs': 30,
  'old-tx': 110,
  'old-tx-logs': 40,
  'address-txs': 50,
  address: 30,
  'token-balances': 30,
  'indexer-page': 100,
  'legacy-block-reward': 40,
  'legacy-txlist': 30,
  'rpc-block': 40,
  'rpc-tx': 30,
  'rpc-receipt': 30,
  'rpc-logs': 20,
};

export const EVENT_KINDS = Object.keys(MIX) as EventKind[];

/** Drawn events never exceed this many per expected one (a Poisson count is bounded in practice; this bounds it in code). */
const MAX_EVENTS_FACTOR = 2;

/** The replay's addresses: `count` addresses derived from the seed, after the `first` ones given (rank 1 first). */
export function addressPool(seed: number, count: number, first: readonly string[] = []): string[] {
  const pool = first.slice(0, count).map((a) => a.toLowerCase());
  for (let i = 0; pool.length < count; i++) {
    const rng = seeded(`replay:${seed}:address:${i}`);
    pool.push(`0x${Array.from({ length: 40 }, () => Math.floor(rng() * 16).toString(16)).join('')}`);
  }
  return pool;
}

/** The block of an old-history rank: a stable, seeded spot in the old span, the same in every run. */
export function oldBlockOf(seed: number, space: 'block' | 'tx', rank: number, startBlock: number): number {
  return startBlock - OLD_MIN_AGE - Math.floor(uniformOf(`replay:${seed}:${space}:${rank}`) * OLD_SPAN);
}

/** Picks a kind by MIX. */
function kindPicker(): (rng: Rng) => EventKind {
  const total = EVENT_KINDS.reduce((sum, k) => sum + MIX[k], 0);
  const bounds: number[] = [];
  let acc = 0;
  for (const k of EVENT_KINDS) bounds.push((acc += MIX[k] / total));
  return (rng) => {
    const u = rng();
    const i = bounds.findIndex((b) => u < b);
    return EVENT_KINDS[i < 0 ? EVENT_KINDS.length - 1 : i] ?? 'tip-blocks';
  };
}

export interface Workload {
  settings: WorkloadSettings;
  events: ReplayEvent[];
  addresses: readonly string[];
}

/**
 * The events of one replay, in time order. `firstAddresses` lead the address pool (the fixture's
 * seed accounts: their transactions are on its chain from the start).
 */
export function generateWorkload(settings: WorkloadSettings, firstAddresses: readonly string[] = []): Workload {
  const { durationS, rate, seed, startBlock } = settings;
  if (!(durationS > 0) || !(rate > 0)) throw new RangeError('generateWorkload: durationS and rate must be positive');
  const addresses = addressPool(seed, ADDRESSES, firstAddresses);
  const arrivals = seeded(`replay:${seed}:arrivals`);
  const kinds = seeded(`replay:${seed}:kinds`);
  const draws = seeded(`replay:${seed}:draws`);
  const pickKind = kindPicker();
  const blocks = new Zipf(OLD_BLOCKS, HISTORY_EXPONENT);
  const txs = new Zipf(OLD_TRANSACTIONS, HISTORY_EXPONENT);
  const people = new Zipf(ADDRESSES, ADDRESS_EXPONENT);
  const endMs = durationS * 1000;
  const maxEvents = Math.ceil(durationS * rate * MAX_EVENTS_FACTOR) + 10;
  const meanGapMs = 1000 / rate;
  const events: ReplayEvent[] = [];
  let indexer = 0;
  for (let at = exponential(arrivals, meanGapMs); at < endMs && events.length < maxEvents; at += exponential(arrivals, meanGapMs)) {
    const atMs = Math.round(at * 1000) / 1000;
    const kind = pickKind(kinds);
    switch (kind) {
      case 'tip-blocks':
      case 'tip-main-page':
      case 'tip-rpc-block-number':
      case 'tip-legacy-block-number':
        events.push({ atMs, kind });
        break;
      case 'new-block':
      case 'new-block-txs':
      case 'new-tx':
        events.push({ atMs, kind, back: Math.min(NEW_BLOCK_MAX, Math.floor(exponential(draws, NEW_BLOCK_MEAN))), pick: draws() });
        break;
      case 'old-block':
      case 'old-block-txs':
      case 'legacy-block-reward':
      case 'rpc-block':
      case 'rpc-logs':
        events.push({ atMs, kind, block: oldBlockOf(seed, 'block', blocks.draw(draws), startBlock) });
        break;
      case 'old-tx':
      case 'old-tx-logs':
      case 'rpc-tx':
      case 'rpc-receipt': {
        const rank = txs.draw(draws);
        // The pick belongs to the rank, so a popular transaction is the same one every time.
        events.push({ atMs, kind, block: oldBlockOf(seed, 'tx', rank, startBlock), pick: uniformOf(`replay:${seed}:pick:${rank}`) });
        break;
      }
      case 'address-txs':
      case 'address':
      case 'token-balances':
      case 'legacy-txlist': {
        const rank = people.draw(draws);
        // An old window of the address's history for txlist, fixed per address.
        const endBlock = startBlock - OLD_MIN_AGE - Math.floor(uniformOf(`replay:${seed}:window:${rank}`) * 100_000);
        events.push({ atMs, kind, address: addresses[rank - 1] ?? '', endBlock });
        break;
      }
      case 'indexer-page':
        // Round robin: each indexer gets every INDEXERS-th page event, so all of them keep paging.
        events.push({ atMs, kind, indexer: indexer++ % INDEXERS });
        break;
    }
  }
  return { settings, events, addresses };
}

/** Requests per kind, as a check of the mix (tests, and the report's breakdown). */
export function countByKind(events: readonly ReplayEvent[]): Record<EventKind, number> {
  const counts = Object.fromEntries(EVENT_KINDS.map((k) => [k, 0])) as Record<EventKind, number>;
  for (const e of events) counts[e.kind] += 1;
  return counts;
}
