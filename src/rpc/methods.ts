// The Ethereum JSON-RPC methods a Blockscout instance serves at `/api/eth-rpc` (the 16 its RPC
// document lists: spec/blockscout-rpc-api-1.0.0.yaml, `/eth-rpc`), their parameters checked and
// made canonical, and how long an answer stays true. Pure: no I/O, no clock.
//
// Canonical parameters are what is sent upstream and what the cache is keyed by: addresses and
// hashes in lower case, quantities without leading zeros, the block tag a node assumes when it is
// left out ("latest") written out; the key writes them with object keys sorted (cache/policy.ts
// cacheKey). Two clients asking the same thing in two spellings then share one cache entry, and
// the explorer gets one spelling.
//
// Blockscout answers eight of the methods itself and passes eight to its node with a fixed arity
// (Explorer.EthRPC's @methods and @proxy_methods, apps/explorer/lib/explorer/eth_rpc.ex): the
// gateway fills in an omitted block tag, as nodes do (ethers and viem leave it out of
// eth_estimateGas), so those calls reach the explorer in the form it accepts.

/** The methods, in the document's order. */
export const RPC_METHODS = [
  'eth_blockNumber',
  'eth_getBalance',
  'eth_getLogs',
  'eth_gasPrice',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_chainId',
  'eth_maxPriorityFeePerGas',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_estimateGas',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_sendRawTransaction',
  'eth_call',
] as const;

export type RpcMethod = (typeof RPC_METHODS)[number];

const KNOWN: ReadonlySet<string> = new Set(RPC_METHODS);

export function isRpcMethod(method: string): method is RpcMethod {
  return KNOWN.has(method);
}

const ROUTE_NAMES: ReadonlyMap<RpcMethod, string> = new Map(RPC_METHODS.map((m) => [m, `rpc.${m}`]));

/** A method's route name (`costs.routes`, `cache.ttlSeconds`, usage rows, metrics); one string per method. */
export const rpcRouteName = (method: RpcMethod): string => ROUTE_NAMES.get(method)!;

/**
 * How long an answer stays what the chain says:
 * - `never`: not kept at all (a write, or an estimate against state that is about to change);
 * - `head`: moves with the chain's head (the tip, `latest`, `pending`, gas prices);
 * - `block`: about a block number or a transaction: changes only by a reorganisation, or a
 *   pending transaction being mined;
 * - `pinned`: about a block hash: the same answer for as long as the block exists;
 * - `static`: the chain id.
 */
export type Freshness = 'never' | 'head' | 'block' | 'pinned' | 'static';

/** Default TTL per freshness, seconds; `cache.ttlSeconds['rpc.<method>']` replaces all but `never`. */
export const RPC_TTL_SECONDS: Readonly<Record<Freshness, number>> = {
  never: 0,
  // A few seconds: blocks come every 2 to 12 s on the chains Blockscout indexes.
  head: 2,
  // The v2 API's by-hash-or-number family (routes/table.ts TTL_RULES).
  block: 30,
  pinned: 3_600,
  static: 3_600,
};

/** A call whose parameters passed: what is sent upstream and how long its answer is kept. */
export interface CheckedCall {
  method: RpcMethod;
  /** Canonical parameters, as sent upstream and keyed. */
  params: unknown[];
  freshness: Freshness;
}

/** EIP-1474's "Invalid params" (-32602), with a message that names what is wrong. */
export interface ParamsProblem {
  invalid: string;
}

export type CallCheck = CheckedCall | ParamsProblem;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const TAGS: ReadonlySet<string> = new Set(['latest', 'pending', 'safe', 'finalized', 'earliest']);
const TAG_LIST = [...TAGS].join(', ');

/** What a value is, for a message: `the number 5`, `a list`, `true`. */
function describe(v: unknown): string {
  if (typeof v === 'number') return `the number ${v}`;
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'boolean') return String(v);
  return typeof v === 'string' ? `"${v.slice(0, 70)}"` : typeof v;
}

class Invalid extends Error {}
const invalid = (message: string): never => {
  throw new Invalid(message);
};

const address = (v: unknown, what: string): string =>
  typeof v === 'string' && ADDRESS.test(v) ? v.toLowerCase() : invalid(`${what}: expected a 20-byte address (0x + 40 hex digits)`);
const hash = (v: unknown, what: string): string =>
  typeof v === 'string' && HASH.test(v) ? v.toLowerCase() : invalid(`${what}: expected a 32-byte hash (0x + 64 hex digits)`);
/** A quantity without leading zeros (`0x0` for zero), as EIP-1474 writes them. */
const quantity = (v: unknown, what: string): string =>
  typeof v === 'string' && QUANTITY.test(v) ? `0x${BigInt(v).toString(16)}` : invalid(`${what}: expected a hex quantity (0x...)`);
const data = (v: unknown, what: string): string =>
  typeof v === 'string' && DATA.test(v) ? v.toLowerCase() : invalid(`${what}: expected hex data (0x + an even number of hex digits)`);
const bool = (v: unknown, what: string): boolean => (typeof v === 'boolean' ? v : invalid(`${what}: expected true or false`));
const object = (v: unknown, what: string): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : invalid(`${what}: expected an object`);

interface Block {
  value: unknown;
  freshness: Freshness;
}

/**
 * A block parameter: a tag, a quantity, or EIP-1898's `{blockNumber}` / `{blockHash,
 * requireCanonical}`. Omitted means `latest`, as nodes read it.
 */
function block(v: unknown, what: string): Block {
  if (v === undefined || v === null) return { value: 'latest', freshness: 'head' };
  if (typeof v === 'string') {
    if (TAGS.has(v)) return { value: v, freshness: v === 'earliest' ? 'block' : 'head' };
    if (!QUANTITY.test(v)) invalid(`${what}: expected a block tag (${TAG_LIST}) or a hex block number (0x...), got "${v.slice(0, 70)}"`);
    return { value: quantity(v, what), freshness: 'block' };
  }
  if (typeof v !== 'object' || Array.isArray(v)) {
    invalid(`${what}: expected a block tag (${TAG_LIST}) or a hex block number (0x...), got ${describe(v)}`);
  }
  const o = object(v, what);
  if (o.blockHash !== undefined) {
    const out: Record<string, unknown> = { blockHash: hash(o.blockHash, `${what}.blockHash`) };
    if (o.requireCanonical !== undefined) out.requireCanonical = bool(o.requireCanonical, `${what}.requireCanonical`);
    return { value: out, freshness: 'pinned' };
  }
  if (o.blockNumber !== undefined) return { value: { blockNumber: quantity(o.blockNumber, `${what}.blockNumber`) }, freshness: 'block' };
  return invalid(`${what}: expected a block tag, a hex block number, {blockNumber} or {blockHash}`);
}

const QUANTITY_FIELDS: ReadonlySet<string> = new Set([
  'gas',
  'gasPrice',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'maxFeePerBlobGas',
  'value',
  'nonce',
  'type',
  'chainId',
]);
const ADDRESS_FIELDS: ReadonlySet<string> = new Set(['from', 'to']);
const DATA_FIELDS: ReadonlySet<string> = new Set(['data', 'input']);

/** A transaction call object (eth_call, eth_estimateGas): known fields checked, keys sorted. */
function callObject(v: unknown, what: string): Record<string, unknown> {
  const o = object(v, what);
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(o).sort()) {
    const field = o[name];
    if (field === undefined || field === null) continue;
    const at = `${what}.${name}`;
    if (QUANTITY_FIELDS.has(name)) out[name] = quantity(field, at);
    else if (ADDRESS_FIELDS.has(name)) out[name] = address(field, at);
    else if (DATA_FIELDS.has(name)) out[name] = data(field, at);
    else out[name] = field; // accessList, blobVersionedHashes, ...: the node's to judge
  }
  return out;
}

/**
 * A bound of eth_getLogs' range as Blockscout reads it besides tags and hex (eth_rpc.ex
 * to_block_number/2, `when is_integer(integer)`): a JSON integer is a block number, written
 * here as the hex quantity the explorer also reads, so both spellings are one cache entry.
 */
const logsBlock = (v: unknown): unknown => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? `0x${v.toString(16)}` : v);

/** eth_getLogs' filter: the block range (or a block hash), addresses and topics. */
function logFilter(v: unknown): { filter: Record<string, unknown>; freshness: Freshness } {
  const o = object(v, 'filter');
  const out: Record<string, unknown> = {};
  let freshness: Freshness;
  if (o.blockHash !== undefined && o.blockHash !== null) {
    if (o.fromBlock != null || o.toBlock != null) invalid('filter: blockHash cannot be given with fromBlock or toBlock');
    out.blockHash = hash(o.blockHash, 'filter.blockHash');
    freshness = 'pinned';
  } else {
    const from = block(logsBlock(o.fromBlock), 'filter.fromBlock');
    const to = block(logsBlock(o.toBlock), 'filter.toBlock');
    if (typeof from.value !== 'string' || typeof to.value !== 'string') invalid('filter: fromBlock and toBlock take a tag or a hex number');
    out.fromBlock = from.value;
    out.toBlock = to.value;
    freshness = from.freshness === 'head' || to.freshness === 'head' ? 'head' : 'block';
  }
  if (o.address !== undefined && o.address !== null) {
    out.address = Array.isArray(o.address)
      ? o.address.map((a, i) => address(a, `filter.address[${i}]`))
      : address(o.address, 'filter.address');
  }
  // An empty list filters nothing (viem sends one); Blockscout fails on it (eth_rpc.ex
  // validate_topics/1), so it is left out, as no topics at all.
  if (o.topics !== undefined && o.topics !== null && !(Array.isArray(o.topics) && o.topics.length === 0)) {
    if (!Array.isArray(o.topics) || o.topics.length > 4) invalid('filter.topics: expected a list of at most 4 topics');
    out.topics = (o.topics as unknown[]).map((t, i) => {
      if (t === null) return null;
      if (Array.isArray(t)) return t.map((x, j) => hash(x, `filter.topics[${i}][${j}]`));
      return hash(t, `filter.topics[${i}]`);
    });
  }
  // Blockscout's own paging extension (eth_rpc.ex paging_options/1), passed on as given.
  if (o.paging_options !== undefined) out.paging_options = object(o.paging_options, 'filter.paging_options');
  for (const name of Object.keys(o)) {
    if (!['blockHash', 'fromBlock', 'toBlock', 'address', 'topics', 'paging_options'].includes(name))
      invalid(`filter.${name}: unknown field`);
  }
  return { filter: out, freshness };
}

function arity(params: unknown[], min: number, max: number): void {
  if (params.length < min || params.length > max) {
    invalid(
      min === max
        ? `expected ${min} parameter${min === 1 ? '' : 's'}, got ${params.length}`
        : `expected ${min} to ${max} parameters, got ${params.length}`,
    );
  }
}

const head = (method: RpcMethod, params: unknown[]): CheckedCall => {
  arity(params, 0, 0);
  return { method, params: [], freshness: method === 'eth_chainId' ? 'static' : 'head' };
};

/** `[address, block]`: eth_getBalance, eth_getTransactionCount, eth_getCode. */
function addressAtBlock(method: RpcMethod, params: unknown[]): CheckedCall {
  arity(params, 1, 2);
  const at = block(params[1], 'block');
  let value = at.value;
  if (method === 'eth_getBalance') {
    // Blockscout answers eth_getBalance itself and reads a block number in decimal, a tag, or
    // nothing else (eth_rpc.ex block_param/1): the hex number a client sends is written in
    // decimal for it. EIP-1898 objects it cannot read at all.
    if (typeof value !== 'string') invalid('block: this explorer takes a tag or a block number for eth_getBalance, not an object');
    if ((value as string).startsWith('0x')) value = BigInt(value as string).toString(10);
  }
  return { method, params: [address(params[0], 'address'), value], freshness: at.freshness };
}

/**
 * The parameters of `method`, checked and canonical, or what is wrong with them. `params` is
 * the call's `params` member as sent (undefined when absent, which JSON-RPC 2.0 allows).
 */
export function checkCall(method: RpcMethod, raw: unknown): CallCheck {
  if (raw !== undefined && !Array.isArray(raw)) return { invalid: 'params: expected a list (by-position parameters)' };
  const params = (raw ?? []) as unknown[];
  try {
    switch (method) {
      case 'eth_blockNumber':
      case 'eth_gasPrice':
      case 'eth_chainId':
      case 'eth_maxPriorityFeePerGas':
        return head(method, params);
      case 'eth_getBalance':
      case 'eth_getTransactionCount':
      case 'eth_getCode':
        return addressAtBlock(method, params);
      case 'eth_getStorageAt': {
        arity(params, 2, 3);
        const at = block(params[2], 'block');
        return { method, params: [address(params[0], 'address'), quantity(params[1], 'position'), at.value], freshness: at.freshness };
      }
      case 'eth_getLogs': {
        arity(params, 1, 1);
        const { filter, freshness } = logFilter(params[0]);
        return { method, params: [filter], freshness };
      }
      case 'eth_getTransactionByHash':
      case 'eth_getTransactionReceipt':
        arity(params, 1, 1);
        return { method, params: [hash(params[0], 'transaction hash')], freshness: 'block' };
      case 'eth_getBlockByNumber': {
        arity(params, 1, 2);
        const at = block(params[0], 'block');
        if (typeof at.value !== 'string') invalid('block: expected a tag or a hex block number');
        return {
          method,
          params: [at.value, params[1] === undefined ? false : bool(params[1], 'full transactions')],
          freshness: at.freshness,
        };
      }
      case 'eth_getBlockByHash':
        arity(params, 1, 2);
        return {
          method,
          params: [hash(params[0], 'block hash'), params[1] === undefined ? false : bool(params[1], 'full transactions')],
          freshness: 'pinned',
        };
      case 'eth_sendRawTransaction':
        arity(params, 1, 1);
        return { method, params: [data(params[0], 'signed transaction')], freshness: 'never' };
      case 'eth_call':
      case 'eth_estimateGas': {
        arity(params, 1, 3);
        const at = block(params[1], 'block');
        // A third parameter (state overrides) is passed on; such a call is never kept.
        const overrides = params[2] === undefined ? [] : [object(params[2], 'state overrides')];
        const freshness = method === 'eth_estimateGas' || overrides.length > 0 ? 'never' : at.freshness;
        return { method, params: [callObject(params[0], 'transaction'), at.value, ...overrides], freshness };
      }
    }
  } catch (err) {
    if (err instanceof Invalid) return { invalid: err.message };
    throw err;
  }
}

/**
 * The tags Blockscout refuses: its validator of the proxied methods' block takes `latest`,
 * `earliest`, `pending` and hex numbers only (eth_rpc_helper.ex block_validator/1, "Invalid block
 * number"), eth_getBalance `latest`, `earliest`, `pending` and decimal numbers (eth_rpc.ex
 * block_param/1), eth_getLogs tags, hex and integers (to_block_number/2): `safe` and `finalized`
 * fail everywhere. The gateway answers them from the chain's head it tracks (finality/head.ts).
 */
const FINALITY_TAGS: ReadonlySet<string> = new Set(['safe', 'finalized']);
const isFinalityTag = (v: unknown): boolean => typeof v === 'string' && FINALITY_TAGS.has(v);

/** Where each method's block parameter is, among its canonical params (eth_getLogs aside). */
const BLOCK_PARAM: Partial<Readonly<Record<RpcMethod, number>>> = {
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getCode: 1,
  eth_getStorageAt: 2,
  eth_getBlockByNumber: 0,
  eth_call: 1,
  eth_estimateGas: 1,
};

/**
 * The call with `finalized` and `safe` written as the block number `finalLine` (the head the
 * gateway tracks less the chain's `finality.depth`: finality/head.ts finalLine), which the explorer
 * reads; the call itself when it names neither; undefined when it names one and the line is not
 * known (no head yet, or a stale one). `safe` gets the same block as `finalized`: a node's safe
 * block is at least as new, so the final block is safe too, and the gateway knows no newer line.
 */
export function pinFinality(call: CheckedCall, finalLine: number | undefined): CheckedCall | undefined {
  const line = finalLine === undefined ? undefined : Math.max(finalLine, 0);
  if (call.method === 'eth_getLogs') {
    const filter = call.params[0] as Record<string, unknown>;
    if (!isFinalityTag(filter.fromBlock) && !isFinalityTag(filter.toBlock)) return call;
    if (line === undefined) return undefined;
    const pinned = { ...filter };
    if (isFinalityTag(pinned.fromBlock)) pinned.fromBlock = `0x${line.toString(16)}`;
    if (isFinalityTag(pinned.toBlock)) pinned.toBlock = `0x${line.toString(16)}`;
    const moving = (v: unknown): boolean => v === 'latest' || v === 'pending';
    return { ...call, params: [pinned], freshness: moving(pinned.fromBlock) || moving(pinned.toBlock) ? 'head' : 'block' };
  }
  const at = BLOCK_PARAM[call.method];
  if (at === undefined || !isFinalityTag(call.params[at])) return call;
  if (line === undefined) return undefined;
  const params = [...call.params];
  // eth_getBalance's block goes to the explorer in decimal (addressAtBlock).
  params[at] = call.method === 'eth_getBalance' ? String(line) : `0x${line.toString(16)}`;
  return { ...call, params, freshness: call.freshness === 'never' ? 'never' : 'block' };
}
