// The routes clients bring beyond the documents' GET surface (issue 21): the JSON-RPC methods
// (`rpc.<method>`), Etherscan's proxy module translated into them (`legacy.proxy.<action>`), and
// the legacy API's contract verification (`legacy.contract.<action>`). Pure data, joined into the
// route table by table.ts.
import { RPC_METHODS, rpcRouteName, type RpcMethod } from '../rpc/methods.js';

export interface RpcRouteSpec {
  readonly name: string;
  readonly kind: 'rpc';
  readonly method: RpcMethod;
  readonly stream: false;
}

/** An action of Etherscan's proxy module (https://docs.etherscan.io/api-reference/endpoint/ethblocknumber and the pages after it). */
export interface ProxyRouteSpec {
  readonly name: string;
  readonly kind: 'proxy';
  readonly module: 'proxy';
  readonly action: string;
  /** The JSON-RPC method it becomes; undefined for an action the explorer's JSON-RPC cannot answer. */
  readonly method: RpcMethod | undefined;
  readonly stream: false;
}

/** Contract verification: five writes (POST, forwarded once, never kept) and two status reads (never kept). */
export interface VerifyRouteSpec {
  readonly name: string;
  readonly kind: 'verify';
  readonly module: 'contract';
  readonly action: string;
  readonly write: boolean;
  readonly stream: false;
}

export const RPC_ROUTES: readonly RpcRouteSpec[] = RPC_METHODS.map((method) => ({
  name: rpcRouteName(method),
  kind: 'rpc',
  method,
  stream: false,
}));

/** Etherscan's proxy actions, with the method each becomes (undefined: not one of the explorer's 16). */
const PROXY_ACTIONS: readonly [string, RpcMethod | undefined][] = [
  ['eth_blockNumber', 'eth_blockNumber'],
  ['eth_getBlockByNumber', 'eth_getBlockByNumber'],
  ['eth_getUncleByBlockNumberAndIndex', undefined],
  // Answered from the block (rpc/proxy.ts derivedCall): the explorer has no such method.
  ['eth_getBlockTransactionCountByNumber', 'eth_getBlockByNumber'],
  ['eth_getTransactionByHash', 'eth_getTransactionByHash'],
  ['eth_getTransactionByBlockNumberAndIndex', 'eth_getBlockByNumber'],
  ['eth_getTransactionCount', 'eth_getTransactionCount'],
  ['eth_sendRawTransaction', 'eth_sendRawTransaction'],
  ['eth_getTransactionReceipt', 'eth_getTransactionReceipt'],
  ['eth_call', 'eth_call'],
  ['eth_getCode', 'eth_getCode'],
  ['eth_getStorageAt', 'eth_getStorageAt'],
  ['eth_gasPrice', 'eth_gasPrice'],
  ['eth_estimateGas', 'eth_estimateGas'],
  // Not in Etherscan's list, but the explorer answers them and clients ask.
  ['eth_chainId', 'eth_chainId'],
  ['eth_maxPriorityFeePerGas', 'eth_maxPriorityFeePerGas'],
];

export const PROXY_ROUTES: readonly ProxyRouteSpec[] = PROXY_ACTIONS.map(([action, method]) => ({
  name: `legacy.proxy.${action}`,
  kind: 'proxy',
  module: 'proxy',
  action,
  method,
  stream: false,
}));

/** spec/blockscout-rpc-api-1.0.0.yaml's contract verification actions (lines 1045-1402). */
const VERIFY_ACTIONS: readonly [string, boolean][] = [
  ['verify', true],
  ['verifysourcecode', true],
  ['verify_via_sourcify', true],
  ['verify_vyper_contract', true],
  ['verifyproxycontract', true],
  ['checkverifystatus', false],
  ['checkproxyverification', false],
];

export const VERIFY_ROUTES: readonly VerifyRouteSpec[] = VERIFY_ACTIONS.map(([action, write]) => ({
  name: `legacy.contract.${action}`,
  kind: 'verify',
  module: 'contract',
  action,
  write,
  stream: false,
}));
