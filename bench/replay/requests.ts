// From a workload event to the HTTP request a client sends, at the moment it is sent: the k-th
// newest block is counted from the head of that moment, an indexer's next page from the
// next_page_params of its previous answer. Each request carries what the rest of the replay needs
// to know about it: the gateway's route name and that route's TTL under the bench's
// configuration (src/routes/settings.ts, the gateway's own table), the key an ideal cache would
// keep it under, the block whose finality makes its answer final (as issue "Cache what can no
// longer change" defines final answers), and where its answer shows the head.
import { blockTransactions, txHash, TRANSFER_TOPIC } from '../../fixture/chain.js';
import { checkCall, isRpcMethod, type RpcMethod } from '../../src/rpc/methods.js';
import { rpcTtlSeconds, ttlSecondsFor, type TtlSettings } from '../../src/routes/settings.js';
import { seeded, Zipf, type Rng } from './random.js';
import { ADDRESS_EXPONENT, LEGACY_WINDOW, LOGS_RANGE, type EventKind, type ReplayEvent } from './workload.js';

/** The chain the replay runs on: one chain, id 1, in the gateway's configuration. */
export const REPLAY_CHAIN = '1';
/** Page size the indexers ask for: more pages per address than Blockscout's default 50. */
export const INDEXER_PAGE_SIZE = 20;
/** How far down from a block a transaction (or one with logs) is looked for. */
const TX_SEARCH_BLOCKS = 64;

/**
 * Where an answer shows the chain's head (bench/replay/freshness.ts reads it):
 * - `tip-list`: a list of blocks, newest first (`height`);
 * - `result-number`: a JSON-RPC style `result` holding the head as a hex quantity;
 * - `confirmations`: every object with `block_number` and `confirmations`;
 * - `none`: nothing this bench checks.
 */
export type HeadShape = 'tip-list' | 'result-number' | 'confirmations' | 'none';

export interface ReplayRequest {
  kind: EventKind;
  /** The gateway's route name (src/routes/table.ts; `rpc.<method>` for JSON-RPC). */
  route: string;
  method: 'GET' | 'POST';
  /** The request target on the gateway, chain prefix included. */
  path: string;
  body: string | undefined;
  /** What an ideal cache keys the answer by: one key per distinct question. */
  key: string;
  /** The route's TTL under the bench's configuration, seconds. */
  ttlSeconds: number;
  /** The answer is final once this block is at or below head - depth; undefined: it never is (moving). */
  finalBlock: number | undefined;
  heads: HeadShape;
  /** The indexer that sent it (indexer-page only). */
  indexer?: number;
}

/** What the replay needs of the chain: a block's transactions, in order. */
export interface ChainView {
  transactions(block: number): readonly { hash: string; logs: number }[];
}

/** The fixture's chain (fixture/chain.ts): a block's contents never depend on the head. */
export function fixtureChain(): ChainView {
  const memo = new Map<number, readonly { hash: string; logs: number }[]>();
  return {
    transactions(block) {
      let txs = memo.get(block);
      if (txs === undefined) {
        txs = blockTransactions(block).map((tx) => ({ hash: txHash(tx), logs: tx.logs.length }));
        if (memo.size >= 20_000) memo.clear();
        memo.set(block, txs);
      }
      return txs;
    },
  };
}

/** One indexer's place in its walk: the address it pages and the cursor of its next page. */
export interface IndexerState {
  rng: Rng;
  address: string | undefined;
  next: Record<string, string> | undefined;
}

const hex = (n: number): string => `0x${n.toString(16)}`;
const V2 = `/${REPLAY_CHAIN}/api/v2`;

export class RequestMaker {
  private readonly addressZipf: Zipf;
  private readonly indexers = new Map<number, IndexerState>();

  constructor(
    private readonly chain: ChainView,
    private readonly cache: TtlSettings,
    private readonly addresses: readonly string[],
    private readonly seed: number,
  ) {
    this.addressZipf = new Zipf(Math.max(1, addresses.length), ADDRESS_EXPONENT);
  }

  private get(kind: EventKind, route: string, path: string, finalBlock: number | undefined, heads: HeadShape): ReplayRequest {
    return {
      kind,
      route,
      method: 'GET',
      path,
      body: undefined,
      key: `GET ${path}`,
      ttlSeconds: ttlSecondsFor(this.cache, route),
      finalBlock,
      heads,
    };
  }

  private rpc(kind: EventKind, method: RpcMethod, params: unknown[], finalBlock: number | undefined, heads: HeadShape): ReplayRequest {
    const checked = checkCall(method, params);
    if ('invalid' in checked) throw new Error(`replay: ${method} ${JSON.stringify(params)}: ${checked.invalid}`);
    const route = `rpc.${method}`;
    return {
      kind,
      route,
      method: 'POST',
      path: `/${REPLAY_CHAIN}/json-rpc`,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      // The gateway keys a call by its canonical parameters (cache/policy.ts); these are written canonically already.
      key: `rpc ${method} ${JSON.stringify(checked.params)}`,
      ttlSeconds: rpcTtlSeconds(this.cache, method, checked.freshness),
      finalBlock,
      heads,
    };
  }

  /** The first transaction at or below `block` (with logs when asked), `pick` in [0, 1) choosing among the block's. */
  transactionNear(block: number, pick: number, withLogs: boolean): { hash: string; block: number } | undefined {
    for (let n = block; n > block - TX_SEARCH_BLOCKS && n >= 0; n--) {
      const eligible = this.chain.transactions(n).filter((t) => !withLogs || t.logs > 0);
      if (eligible.length === 0) continue;
      const tx = eligible[Math.min(eligible.length - 1, Math.floor(pick * eligible.length))];
      if (tx) return { hash: tx.hash, block: n };
    }
    return undefined;
  }

  indexer(id: number): IndexerState {
    let state = this.indexers.get(id);
    if (state === undefined) {
      state = { rng: seeded(`replay:${this.seed}:indexer:${id}`), address: undefined, next: undefined };
      this.indexers.set(id, state);
    }
    return state;
  }

  /** The request for `event` with the chain's head at `head`; undefined when there is nothing to ask (no transaction found). */
  make(event: ReplayEvent, head: number): ReplayRequest | undefined {
    switch (event.kind) {
      case 'tip-blocks':
        return this.get(event.kind, 'blocks', `${V2}/blocks`, undefined, 'tip-list');
      case 'tip-main-page':
        return this.get(event.kind, 'main-page/blocks', `${V2}/main-page/blocks`, undefined, 'tip-list');
      case 'tip-rpc-block-number':
        return this.rpc(event.kind, 'eth_blockNumber', [], undefined, 'result-number');
      case 'tip-legacy-block-number':
        return this.get(
          event.kind,
          'legacy.block.eth_block_number',
          `/${REPLAY_CHAIN}/api?module=block&action=eth_block_number`,
          undefined,
          'result-number',
        );
      case 'new-block': {
        const n = Math.max(0, head - event.back);
        return this.get(event.kind, 'blocks/{block_hash_or_number_param}', `${V2}/blocks/${n}`, n, 'none');
      }
      case 'new-block-txs': {
        const n = Math.max(0, head - event.back);
        return this.get(
          event.kind,
          'blocks/{block_hash_or_number_param}/transactions',
          `${V2}/blocks/${n}/transactions`,
          n,
          'confirmations',
        );
      }
      case 'new-tx': {
        const tx = this.transactionNear(Math.max(0, head - event.back), event.pick, false);
        return (
          tx && this.get(event.kind, 'transactions/{transaction_hash_param}', `${V2}/transactions/${tx.hash}`, tx.block, 'confirmations')
        );
      }
      case 'old-block':
        return this.get(event.kind, 'blocks/{block_hash_or_number_param}', `${V2}/blocks/${event.block}`, event.block, 'none');
      case 'old-block-txs':
        return this.get(
          event.kind,
          'blocks/{block_hash_or_number_param}/transactions',
          `${V2}/blocks/${event.block}/transactions`,
          event.block,
          'confirmations',
        );
      case 'legacy-block-reward':
        return this.get(
          event.kind,
          'legacy.block.getblockreward',
          `/${REPLAY_CHAIN}/api?module=block&action=getblockreward&blockno=${event.block}`,
          event.block,
          'none',
        );
      case 'rpc-block':
        return this.rpc(event.kind, 'eth_getBlockByNumber', [hex(event.block), false], event.block, 'none');
      case 'rpc-logs': {
        const filter = { fromBlock: hex(event.block - LOGS_RANGE + 1), toBlock: hex(event.block), topics: [TRANSFER_TOPIC] };
        return this.rpc(event.kind, 'eth_getLogs', [filter], event.block, 'none');
      }
      case 'old-tx': {
        const tx = this.transactionNear(event.block, event.pick, false);
        return (
          tx && this.get(event.kind, 'transactions/{transaction_hash_param}', `${V2}/transactions/${tx.hash}`, tx.block, 'confirmations')
        );
      }
      case 'old-tx-logs': {
        // Only transactions that log something: the logs of one that does not are an empty list, which tells no block.
        const tx = this.transactionNear(event.block, event.pick, true);
        return (
          tx && this.get(event.kind, 'transactions/{transaction_hash_param}/logs', `${V2}/transactions/${tx.hash}/logs`, tx.block, 'none')
        );
      }
      case 'rpc-tx':
      case 'rpc-receipt': {
        const tx = this.transactionNear(event.block, event.pick, false);
        const method = event.kind === 'rpc-tx' ? 'eth_getTransactionByHash' : 'eth_getTransactionReceipt';
        return tx && this.rpc(event.kind, method, [tx.hash], tx.block, 'none');
      }
      case 'address-txs':
        return this.get(event.kind, 'transactions', `${V2}/addresses/${event.address}/transactions`, undefined, 'confirmations');
      case 'address':
        return this.get(event.kind, 'addresses/{address_hash_param}', `${V2}/addresses/${event.address}`, undefined, 'none');
      case 'token-balances':
        return this.get(event.kind, 'token-balances', `${V2}/addresses/${event.address}/token-balances`, undefined, 'none');
      case 'legacy-txlist': {
        const q = `module=account&action=txlist&address=${event.address}&startblock=${event.endBlock - LEGACY_WINDOW + 1}&endblock=${event.endBlock}`;
        // The fixture's txlist results are sampled: their confirmations do not follow its head, so they are not checked.
        return this.get(event.kind, 'legacy.account.txlist', `/${REPLAY_CHAIN}/api?${q}`, event.endBlock, 'none');
      }
      case 'indexer-page':
        return this.indexerPage(event.indexer);
    }
  }

  /** The indexer's next page: the first page of a new address when it has none to continue. */
  private indexerPage(id: number): ReplayRequest {
    const state = this.indexer(id);
    if (state.address === undefined || state.next === undefined) {
      state.address = this.addresses[this.addressZipf.draw(state.rng) - 1] ?? this.addresses[0] ?? '';
      state.next = undefined;
      const path = `${V2}/addresses/${state.address}/transactions?items_count=${INDEXER_PAGE_SIZE}`;
      return { ...this.get('indexer-page', 'transactions', path, undefined, 'confirmations'), indexer: id };
    }
    const query = new URLSearchParams(state.next).toString();
    const cursor = Number(state.next.block_number);
    const path = `${V2}/addresses/${state.address}/transactions?${query}`;
    // A later page in the default order: everything on it lies at or below its cursor's block.
    return {
      ...this.get('indexer-page', 'transactions', path, Number.isSafeInteger(cursor) ? cursor : undefined, 'confirmations'),
      indexer: id,
    };
  }

  /** What an indexer learns from its page's answer: the next cursor, or that this address is done. */
  indexerAnswered(id: number, status: number, body: string): void {
    const state = this.indexer(id);
    state.next = status === 200 ? nextPageParams(body) : undefined;
    if (state.next === undefined) state.address = undefined;
  }
}

/** `next_page_params` of a v2 page as query values; undefined on the last page or an unreadable answer. */
export function nextPageParams(body: string): Record<string, string> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const next = (parsed as { next_page_params?: unknown }).next_page_params;
  if (next === null || typeof next !== 'object' || Array.isArray(next)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(next)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The JSON-RPC method of an upstream request body, for the per-route count of upstream calls. */
export function rpcMethodOf(body: string | undefined): string {
  if (body === undefined) return 'rpc.unknown';
  try {
    const parsed = JSON.parse(body) as unknown;
    if (Array.isArray(parsed)) return 'rpc.batch';
    const method = (parsed as { method?: unknown } | null)?.method;
    return typeof method === 'string' && isRpcMethod(method) ? `rpc.${method}` : 'rpc.unknown';
  } catch {
    return 'rpc.unknown';
  }
}
