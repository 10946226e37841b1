// Which block an answer is about, read from the request and, where needed, from the answer, so
// that an answer about data below a chain's finality line can be kept for a day instead of a
// route's TTL (cache.finalTtlSeconds). Also the head an answer shows (eth_blockNumber, the
// newest block of a list, a transaction's block + confirmations - 1). Pure: no clock, no I/O.
//
// Final candidates, as issue "Cache what can no longer change" lists them:
// - a block by number or hash, and what a block holds (its transactions, internal transactions,
//   withdrawals); a block Blockscout marks as reorged (`type` other than "block") or being
//   refetched (`is_pending_update`) never is;
// - a transaction, its logs, internal transactions and token transfers (by the block numbers
//   they carry; a pending transaction has none);
// - a page of a list whose cursor (`block_number` with `index` or `items_count`) lies below the
//   line, in the default order (block number descending), whose items all lie below it too;
// - legacy actions with an explicit block (`blockno`) or end of range (`endblock`, `toBlock`),
//   and `gettxinfo` by the block of its answer;
// - JSON-RPC calls with an explicit block number or range, and by-hash calls by the block of
//   their answer.
// Everything else (the tip, `latest`, first pages, balances, counters) is moving: its route's TTL.
import type { RpcMethod } from '../rpc/methods.js';

/** What was asked: a route's upstream path (v2 or legacy), or a JSON-RPC call. */
export type Asked =
  | { readonly kind: 'path'; readonly route: string; readonly upstreamPath: string }
  | { readonly kind: 'call'; readonly method: RpcMethod; readonly params: readonly unknown[] };

export interface Verdict {
  /**
   * The highest block the answer is about, when it can be final; undefined when it never can
   * (moving data, a reorged block, a pending transaction) or when it cannot be told.
   */
  block: number | undefined;
  /** The highest head the answer shows; undefined when it shows none. */
  head: number | undefined;
  /** The answer is the tip itself: eth_blockNumber, the newest blocks, the `latest` block. */
  tip: boolean;
  /**
   * The block each `confirmations` field of the answer counts from, in the order they appear in
   * its text (cache/confirmations.ts finds them there); undefined when one cannot be told.
   */
  confirmations: number[] | undefined;
}

const NONE: Verdict = { block: undefined, head: undefined, tip: false, confirmations: [] };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A block number from JSON: an integer, a decimal string (legacy) or a hex quantity (JSON-RPC). */
function blockNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  if (/^\d{1,15}$/.test(v)) return Number(v);
  if (/^0x[0-9a-fA-F]{1,13}$/.test(v)) return parseInt(v.slice(2), 16);
  return undefined;
}

/** The keys that hold a block number, in the v2, legacy and JSON-RPC spellings. */
const BLOCK_KEYS = ['block_number', 'blockNumber', 'height'] as const;

function ownBlock(o: Json): number | undefined {
  for (const k of BLOCK_KEYS) if (k in o) return blockNumber(o[k]);
  return undefined;
}

/**
 * Walks the answer in text order: every `confirmations` with the block its object names (a pending
 * one, 0, has none: the whole verdict is then not final), and the heads they imply.
 */
function walkConfirmations(value: unknown, out: { blocks: number[]; head: number | undefined; broken: boolean }): void {
  if (Array.isArray(value)) {
    for (const v of value) walkConfirmations(v, out);
    return;
  }
  if (!isObject(value)) return;
  for (const k in value) {
    const v = value[k];
    if (k === 'confirmations') {
      const block = ownBlock(value);
      const count = blockNumber(v);
      if (block === undefined || count === undefined || count < 1) {
        out.broken = true;
        continue;
      }
      out.blocks.push(block);
      const head = block + count - 1;
      if (out.head === undefined || head > out.head) out.head = head;
    } else if (v !== null && typeof v === 'object') walkConfirmations(v, out);
  }
}

/** The highest block of a list's items (undefined when an item names none, or there are none). */
function itemsBlock(items: unknown): number | undefined {
  if (!Array.isArray(items) || items.length === 0) return undefined;
  let max = -1;
  for (const item of items) {
    const b = isObject(item) ? ownBlock(item) : undefined;
    if (b === undefined) return undefined;
    if (b > max) max = b;
  }
  return max;
}

const max = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** A block Blockscout shows as part of the chain, not reorged away, not being refetched. */
const consensusBlock = (o: Json): boolean => (o.type === undefined || o.type === 'block') && o.is_pending_update !== true;

function judgeV2(route: string, segments: string[], query: URLSearchParams, body: Json): number | undefined {
  if (route === 'blocks/{block_hash_or_number_param}') return consensusBlock(body) ? ownBlock(body) : undefined;
  if (route.startsWith('blocks/{block_hash_or_number_param}/')) {
    const asked = /^\d{1,15}$/.test(segments[1] ?? '') ? Number(segments[1]) : undefined;
    const items = itemsBlock(body.items);
    if (asked !== undefined) return items === undefined || items <= asked ? asked : undefined;
    return items;
  }
  if (route === 'transactions/{transaction_hash_param}') return body.is_pending_update === true ? undefined : ownBlock(body);
  if (/^transactions\/\{transaction_hash_param\}\/(logs|token-transfers|internal-transactions)$/.test(route)) return itemsBlock(body.items);
  // A later page of a list, in the default order: everything on it lies at or below its cursor.
  const cursor = query.get('block_number');
  if (cursor === null || !/^\d{1,15}$/.test(cursor) || (!query.has('index') && !query.has('items_count'))) return undefined;
  const sort = query.get('sort');
  if ((sort !== null && sort !== 'block_number') || query.get('order') === 'asc') return undefined;
  const items = Array.isArray(body.items) && body.items.length === 0 ? Number(cursor) : itemsBlock(body.items);
  return items !== undefined && items <= Number(cursor) ? Number(cursor) : undefined;
}

/** The legacy actions with an explicit block or end of range, and gettxinfo. */
function judgeLegacy(route: string, query: URLSearchParams, body: Json): number | undefined {
  if (body.status !== '1') return undefined;
  const explicit = (name: string) => blockNumber(query.get(name) ?? undefined);
  if (route === 'legacy.block.getblockreward') return explicit('blockno');
  if (/^legacy\.account\.(txlist|txlistinternal|tokentx|tokennfttx|token1155tx|token404tx)$/.test(route)) return explicit('endblock');
  if (route === 'legacy.logs.getLogs') return explicit('toBlock');
  if (route === 'legacy.transaction.gettxinfo') return isObject(body.result) ? ownBlock(body.result) : undefined;
  return undefined;
}

/** A JSON-RPC block parameter: a hex number, or EIP-1898's {blockNumber}. */
function explicitBlock(v: unknown): number | undefined {
  if (isObject(v)) return blockNumber(v.blockNumber);
  return typeof v === 'string' && v.startsWith('0x') ? blockNumber(v) : undefined;
}

function judgeCall(method: RpcMethod, params: readonly unknown[], result: unknown): number | undefined {
  switch (method) {
    case 'eth_getBlockByNumber':
      return explicitBlock(params[0]);
    case 'eth_getBlockByHash':
    case 'eth_getTransactionByHash':
    case 'eth_getTransactionReceipt':
      return isObject(result) ? blockNumber(result.blockNumber ?? result.number) : undefined;
    case 'eth_getLogs': {
      const filter = params[0];
      if (!isObject(filter)) return undefined;
      if (filter.blockHash !== undefined) return itemsBlock(result);
      return explicitBlock(filter.toBlock);
    }
    case 'eth_getBalance':
    case 'eth_getCode':
    case 'eth_getTransactionCount':
    case 'eth_call':
      return explicitBlock(params[1]);
    case 'eth_getStorageAt':
      return explicitBlock(params[2]);
    default:
      return undefined;
  }
}

/** The head a JSON-RPC answer shows: eth_blockNumber's result, or the block eth_getBlockByNumber("latest") returned. */
function callHead(method: RpcMethod, params: readonly unknown[], result: unknown): number | undefined {
  if (method === 'eth_blockNumber') return blockNumber(result);
  if (method === 'eth_getBlockByNumber' && params[0] === 'latest' && isObject(result)) return blockNumber(result.number);
  return undefined;
}

/** The head a v2 or legacy answer shows besides confirmations: the newest block of a block list, eth_block_number. */
function pathHead(route: string, body: Json): number | undefined {
  if (route === 'blocks' || route === 'main-page/blocks') {
    const items = Array.isArray(body) ? body : body.items;
    if (!Array.isArray(items)) return undefined;
    let head: number | undefined;
    for (const item of items) if (isObject(item) && consensusBlock(item)) head = max(head, blockNumber(item.height));
    return head;
  }
  if (route === 'legacy.block.eth_block_number') return blockNumber(body.result);
  return undefined;
}

/** Answers the verdict reads are JSON; anything else is judged moving. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The v2 routes whose answers can be final or show the head (besides later pages of a list, told by their cursor). */
const V2_JUDGED = new Set([
  'blocks',
  'main-page/blocks',
  'main-page/transactions',
  // An address's transactions (the contract's name for the route): their confirmations move.
  'transactions',
  'api/v2/transactions',
  'blocks/{block_hash_or_number_param}',
  'blocks/{block_hash_or_number_param}/transactions',
  'blocks/{block_hash_or_number_param}/internal-transactions',
  'blocks/{block_hash_or_number_param}/withdrawals',
  'transactions/{transaction_hash_param}',
  'transactions/{transaction_hash_param}/logs',
  'transactions/{transaction_hash_param}/token-transfers',
  'transactions/{transaction_hash_param}/internal-transactions',
]);
const LEGACY_JUDGED =
  /^legacy\.(block\.(getblockreward|eth_block_number)|account\.(txlist|txlistinternal|tokentx|tokennfttx|token1155tx|token404tx)|logs\.getLogs|transaction\.gettxinfo)$/;

/** Larger answers are not parsed (a raw trace, a huge log range): they keep their route's TTL. */
export const MAX_JUDGED_BYTES = 1024 * 1024;

/** Whether an answer to this request may be about a final block or show the head: only those are parsed. */
export function mayJudge(asked: Asked): boolean {
  if (asked.kind === 'call') return true;
  const r = asked.route;
  if (r.startsWith('legacy.')) return LEGACY_JUDGED.test(r);
  return V2_JUDGED.has(r) || /[?&]block_number=/.test(asked.upstreamPath);
}

/**
 * The verdict on a 200 answer. `body` is what the cache keeps: for a JSON-RPC call, its member
 * (`"result":...`, request/forward.ts forwardCall).
 */
export function judge(asked: Asked, body: Buffer): Verdict {
  if (!mayJudge(asked) || body.length > MAX_JUDGED_BYTES) return NONE;
  if (asked.kind === 'call') {
    const parsed = parse(`{${body.toString('utf8')}}`);
    if (!isObject(parsed) || !('result' in parsed) || parsed.result === null) return NONE;
    const result = parsed.result;
    const head = callHead(asked.method, asked.params, result);
    return { block: judgeCall(asked.method, asked.params, result), head, tip: head !== undefined, confirmations: [] };
  }
  const parsed = parse(body.toString('utf8'));
  if (!isObject(parsed) && !Array.isArray(parsed)) return NONE;
  const walked = { blocks: [] as number[], head: undefined as number | undefined, broken: false };
  walkConfirmations(parsed, walked);
  const q = asked.upstreamPath.indexOf('?');
  const path = q < 0 ? asked.upstreamPath : asked.upstreamPath.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : asked.upstreamPath.slice(q + 1));
  const legacy = asked.route.startsWith('legacy.');
  const object = isObject(parsed) ? parsed : {};
  let block = legacy ? judgeLegacy(asked.route, query, object) : judgeV2(asked.route, path.split('/').slice(3), query, object);
  // A pending item (confirmations 0, or none with a block) anywhere in the answer: not final.
  if (walked.broken) block = undefined;
  const tip = pathHead(asked.route, isObject(parsed) ? parsed : { items: parsed });
  return {
    block,
    head: max(walked.head, tip),
    tip: tip !== undefined,
    confirmations: walked.broken ? undefined : walked.blocks,
  };
}
