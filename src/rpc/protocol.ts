// JSON-RPC 2.0 (https://www.jsonrpc.org/specification) as the gateway speaks it: a body read
// into single calls or a batch, each call checked (methods.ts), and answers written as text with
// the client's id kept. Error codes are EIP-1474's (https://eips.ethereum.org/EIPS/eip-1474).
// Pure: no I/O.
import { checkCall, isRpcMethod, type CheckedCall } from './methods.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** EIP-1474: "Limit exceeded" (the rate limit, or credits). */
export const LIMIT_EXCEEDED = -32005;
/** EIP-1474's "Invalid input", the code nodes answer their own failures with. */
export const SERVER_ERROR = -32000;

export interface RpcError {
  code: number;
  message: string;
}

export interface ParsedCall {
  /** The client's id as JSON text (`null` when it sent none or an unusable one). */
  idJson: string;
  /** The method named, when it is a string (for usage rows and logs of refused calls). */
  method: string | undefined;
  outcome: CheckedCall | RpcError;
}

export type ParsedBody =
  | { kind: 'single' | 'batch'; calls: ParsedCall[] }
  /** The body as a whole is refused: one error answer with id null. */
  | { kind: 'refused'; error: RpcError };

const isError = (o: CheckedCall | RpcError): o is RpcError => 'code' in o;
export { isError as isRpcError };

function idOf(call: Record<string, unknown>): string | undefined {
  const id = call.id;
  // JSON-RPC 2.0 section 4: a String, Number or Null; absent is a notification, answered here
  // with id null like any call (Blockscout itself requires the id).
  if (id === undefined || id === null) return 'null';
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return JSON.stringify(id);
  return undefined;
}

function parseCall(raw: unknown): ParsedCall {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { idJson: 'null', method: undefined, outcome: { code: INVALID_REQUEST, message: 'Invalid request: expected a request object' } };
  }
  const call = raw as Record<string, unknown>;
  const idJson = idOf(call);
  const method = typeof call.method === 'string' ? call.method : undefined;
  if (idJson === undefined)
    return {
      idJson: 'null',
      method,
      outcome: { code: INVALID_REQUEST, message: 'Invalid request: id must be a string, a number or null' },
    };
  if (call.jsonrpc !== '2.0')
    return { idJson, method, outcome: { code: INVALID_REQUEST, message: 'Invalid request: jsonrpc must be "2.0"' } };
  if (method === undefined)
    return { idJson, method, outcome: { code: INVALID_REQUEST, message: 'Invalid request: method must be a string' } };
  if (!isRpcMethod(method))
    return { idJson, method, outcome: { code: METHOD_NOT_FOUND, message: `Method not found: ${method.slice(0, 64)}` } };
  const checked = checkCall(method, call.params);
  if ('invalid' in checked) return { idJson, method, outcome: { code: INVALID_PARAMS, message: `Invalid params: ${checked.invalid}` } };
  return { idJson, method, outcome: checked };
}

/** A request body: one call, a batch of at most `maxBatch`, or a refusal of the whole body. */
export function parseBody(text: string, maxBatch: number): ParsedBody | { kind: 'too-many'; count: number } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'refused', error: { code: PARSE_ERROR, message: 'Parse error: the body is not JSON' } };
  }
  if (!Array.isArray(body)) return { kind: 'single', calls: [parseCall(body)] };
  // Section 6: an empty array is an invalid request, answered with one error, not an empty array.
  if (body.length === 0) return { kind: 'refused', error: { code: INVALID_REQUEST, message: 'Invalid request: empty batch' } };
  if (body.length > maxBatch) return { kind: 'too-many', count: body.length };
  return { kind: 'batch', calls: body.map(parseCall) };
}

/** `"error":{...}`, the member an answer carries instead of a result. */
export function errorMember(error: RpcError & { data?: unknown }): string {
  return `"error":${JSON.stringify(error)}`;
}

/** One answer: `{"jsonrpc":"2.0","id":ID,MEMBER}`, MEMBER being `"result":...` or `"error":{...}`. */
export function answer(idJson: string, member: string): string {
  return `{"jsonrpc":"2.0","id":${idJson},${member}}`;
}

/**
 * What an explorer answered one call with, as the member to pass on, and whether it may be kept:
 * a result other than null (null is "not found yet": a transaction not mined, a block not made).
 * Blockscout writes its own errors as a bare string (eth_rpc.ex format_error/2); clients expect
 * EIP-1474's object, so a string becomes `{"code":-32000,"message":...}`. undefined when the
 * body is no JSON-RPC answer at all.
 */
export function upstreamMember(body: Buffer): { member: string; storable: boolean } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const o = parsed as Record<string, unknown>;
  if (o.error !== undefined && o.error !== null) {
    const error =
      typeof o.error === 'string'
        ? { code: SERVER_ERROR, message: o.error }
        : typeof o.error === 'object' && typeof (o.error as RpcError).code === 'number' && typeof (o.error as RpcError).message === 'string'
          ? o.error
          : { code: SERVER_ERROR, message: JSON.stringify(o.error) };
    return { member: `"error":${JSON.stringify(error)}`, storable: false };
  }
  if (!('result' in o)) return undefined;
  return { member: `"result":${JSON.stringify(o.result)}`, storable: o.result !== null };
}

/** The body an explorer is sent for one call (one id for all: the answer is re-addressed). */
export function upstreamBody(call: CheckedCall): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params });
}
