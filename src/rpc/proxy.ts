// Etherscan's proxy module (`module=proxy&action=eth_...`), which Blockscout does not have, turned
// into the JSON-RPC call the explorer does answer, and answered in Etherscan's shape. Etherscan's
// parameter names per action are those of its documentation (https://docs.etherscan.io, "Geth/
// Parity Proxy") and of ethers v6's EtherscanProvider (providers/provider-etherscan.ts, which
// posts eth_call and eth_estimateGas with the transaction's own field names). Pure.
import { checkCall, type CallCheck, type RpcMethod } from './methods.js';
import { errorMember, INVALID_PARAMS } from './protocol.js';

/** ethers' field names where they differ from JSON-RPC's (EtherscanProvider._getTransactionPostData). */
const TX_FIELD_ALIASES: Readonly<Record<string, string>> = { gasLimit: 'gas' };
const TX_FIELDS = [
  'from',
  'to',
  'data',
  'input',
  'value',
  'gas',
  'gasLimit',
  'gasPrice',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'nonce',
  'type',
  'chainId',
];

function transaction(params: ReadonlyMap<string, string>): Record<string, string> {
  const tx: Record<string, string> = {};
  for (const name of TX_FIELDS) {
    const value = params.get(name);
    if (value !== undefined && value !== '') tx[TX_FIELD_ALIASES[name] ?? name] = value;
  }
  return tx;
}

/**
 * A storage position as the JSON-RPC call wants it (a hex quantity), from what Etherscan-style
 * clients send: `0x`-prefixed hex stays as it is (checked as a quantity afterwards); digits
 * alone are a decimal slot, which is what ethers v6's EtherscanProvider sends (`position:
 * req.position`, a bigint written out in decimal, providers/provider-etherscan.ts), so that
 * `getStorage(proxy, BigInt(EIP1967_SLOT))` and `getStorage(a, 10n)` read the slots meant (issue
 * 41); other unprefixed hex (`ff`, which no decimal reading could mean) is hex, as geth's
 * decodeHash reads a key without its prefix. Etherscan documents the parameter as "Storage
 * position in hex" (docs.etherscan.io, eth_getStorageAt) and says nothing of decimal text;
 * docs/clients.md says what the gateway does. A decimal slot past 2^256 - 1 is no storage key.
 */
const DECIMAL = /^[0-9]{1,78}$/;
const UNPREFIXED_HEX = /^[0-9a-fA-F]{1,64}$/;
const MAX_SLOT = (1n << 256n) - 1n;
export const POSITION_TOO_LARGE = 'position: expected a storage slot: 0x and up to 64 hex digits, or a decimal integer below 2^256';

function storageKey(position: string | undefined): string | undefined {
  if (position === undefined) return undefined;
  if (DECIMAL.test(position)) {
    const slot = BigInt(position);
    return slot <= MAX_SLOT ? `0x${slot.toString(16)}` : POSITION_TOO_LARGE;
  }
  return UNPREFIXED_HEX.test(position) ? `0x${position}` : position;
}

/** The JSON-RPC parameters an action's query parameters give, before they are checked. */
function paramsOf(method: RpcMethod, q: ReadonlyMap<string, string>): unknown[] {
  const tag = q.get('tag') || undefined;
  switch (method) {
    case 'eth_blockNumber':
    case 'eth_gasPrice':
    case 'eth_chainId':
    case 'eth_maxPriorityFeePerGas':
      return [];
    case 'eth_getBlockByNumber': {
      const full = q.get('boolean');
      return [tag, full === undefined ? false : full === 'true' ? true : full === 'false' ? false : full];
    }
    case 'eth_getTransactionByHash':
    case 'eth_getTransactionReceipt':
      return [q.get('txhash')];
    case 'eth_getBlockByHash':
      return [q.get('blockhash'), q.get('boolean') === 'true'];
    case 'eth_getTransactionCount':
    case 'eth_getCode':
    case 'eth_getBalance':
      return [q.get('address'), tag];
    case 'eth_getStorageAt':
      return [q.get('address'), storageKey(q.get('position')), tag];
    case 'eth_sendRawTransaction':
      return [q.get('hex')];
    case 'eth_call':
    case 'eth_estimateGas':
      return [transaction(q), tag];
    case 'eth_getLogs':
      return [Object.fromEntries(q)];
  }
}

/** An action's call, checked and canonical like the JSON-RPC form (one cache entry for both), or what is wrong. */
export function proxyCall(method: RpcMethod, query: ReadonlyMap<string, string>): CallCheck {
  const params = paramsOf(method, query);
  if (method === 'eth_getStorageAt' && params[1] === POSITION_TOO_LARGE) return { invalid: POSITION_TOO_LARGE };
  // An absent optional parameter is absent, not a JSON null.
  while (params.length > 0 && params[params.length - 1] === undefined) params.pop();
  return checkCall(method, params);
}

/** How an action the explorer has no method for is read off the block it does give. */
export type Derivation = { kind: 'count' } | { kind: 'index'; index: number };

const DERIVED: Readonly<Record<string, (q: ReadonlyMap<string, string>) => { params: unknown[]; derivation: Derivation } | string>> = {
  eth_getBlockTransactionCountByNumber: (q) => ({ params: [q.get('tag') || undefined, false], derivation: { kind: 'count' } }),
  eth_getTransactionByBlockNumberAndIndex: (q) => {
    const index = q.get('index');
    if (index === undefined || !/^0x[0-9a-fA-F]{1,8}$/.test(index)) return 'index: expected a hex quantity (0x...)';
    return { params: [q.get('tag') || undefined, true], derivation: { kind: 'index', index: Number(index) } };
  },
};

/**
 * The proxy actions Blockscout's JSON-RPC has no method for but answers through
 * eth_getBlockByNumber: the number of a block's transactions, and its transaction at an index.
 * undefined for any other action.
 */
export function derivedCall(action: string, query: ReadonlyMap<string, string>): { call: CallCheck; derivation: Derivation } | undefined {
  const make = DERIVED[action];
  if (make === undefined) return undefined;
  const made = make(query);
  if (typeof made === 'string') return { call: { invalid: made }, derivation: { kind: 'count' } };
  const params = made.params;
  if (params[0] === undefined) return { call: { invalid: 'tag: expected a block number or tag' }, derivation: made.derivation };
  return { call: checkCall('eth_getBlockByNumber', params), derivation: made.derivation };
}

/** The member a derived action answers, from the block's member (an error or a null block passes as it is). */
export function derive(member: string, derivation: Derivation): string {
  if (!member.startsWith('"result":{')) return member;
  const block = (JSON.parse(`{${member}}`) as { result: { transactions?: unknown[] } }).result;
  const txs = Array.isArray(block.transactions) ? block.transactions : [];
  if (derivation.kind === 'count') return `"result":"0x${txs.length.toString(16)}"`;
  return `"result":${JSON.stringify(txs[derivation.index] ?? null)}`;
}

/** The `id` an Etherscan proxy answer carries: the client's `id` when it is an integer, else 1. */
export function proxyId(query: ReadonlyMap<string, string>): string {
  const id = query.get('id');
  return id !== undefined && /^\d{1,15}$/.test(id) ? String(Number(id)) : '1';
}

/** A proxy answer: `{"jsonrpc":"2.0","id":N,"result":...}` (or `"error":{...}`), as Etherscan gives it. */
export function proxyAnswer(idJson: string, member: string): string {
  return `{"jsonrpc":"2.0","id":${idJson},${member}}`;
}

/** Bad parameters: Etherscan answers its node's JSON-RPC error, -32602. */
export function proxyInvalid(idJson: string, message: string): string {
  return proxyAnswer(idJson, errorMember({ code: INVALID_PARAMS, message }));
}

/** An action the explorer's JSON-RPC cannot answer: Etherscan's NOTOK envelope naming it. */
export function proxyUnsupported(action: string): string {
  return JSON.stringify({ status: '0', message: 'NOTOK', result: `Error! The proxy action ${action} is not supported by this explorer` });
}
