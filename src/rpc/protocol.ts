// JSON-RPC 2.0 (https://www.jsonrpc.org/specification) as the gateway speaks it: a body read
// into single calls or a batch, each call checked (methods.ts), and answers written as text with
// the client's id kept. Error codes are EIP-1474's (https://eips.ethereum.org/EIPS/eip-1474).
// Pure: no I/O.
//
// Ids are echoed as sent (section 5: the response's id "MUST be the same as the value of the id
// member in the Request Object"): a numeric id that JSON.parse cannot hold exactly (an integer
// beyond 2^53, a fraction) is read again with lossless-json, which hands over each number's text,
// and that text is what the answer carries. Only such bodies pay for the second, slower parse.
import { parse as parseLossless } from 'lossless-json';
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
/** EIP-1474: "Resource not found" (an unknown chain). */
export const RESOURCE_NOT_FOUND = -32001;
/** EIP-1474: "Resource unavailable" (the key may not have it: 401, 403). */
export const RESOURCE_UNAVAILABLE = -32002;

/**
 * The JSON-RPC error code of a refusal the gateway answers with an HTTP status of its own (the
 * status is kept: http/errors.ts): 401 and 403 -32002, 404 -32001, 402 and 429 -32005, another
 * 4xx -32600, a 5xx -32603. Those answers carry id null: they are made before the body is read.
 */
export function codeForStatus(status: number): number {
  if (status === 401 || status === 403) return RESOURCE_UNAVAILABLE;
  if (status === 404) return RESOURCE_NOT_FOUND;
  if (status === 402 || status === 429) return LIMIT_EXCEEDED;
  return status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
}

export interface RpcError {
  code: number;
  message: string;
}

export interface ParsedCall {
  /** The client's id as JSON text, as sent (`null` when it sent an unusable one). */
  idJson: string;
  /**
   * A notification (section 4.1: a request object without an `id` member): carried out, and
   * never answered, alone or in a batch.
   */
  notification: boolean;
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

/** A number whose text is kept: what lossless-json gives for every number (rawIds). */
class NumberText {
  constructor(readonly text: string) {}
}

/**
 * The text of each numeric id of a body (the one call's, or each call's of a batch, by position),
 * or undefined when lossless-json refuses the body (it refuses duplicate keys with different
 * values, which JSON.parse allows: the last one wins, and the id is then echoed as JSON.parse read it).
 */
function rawIds(text: string): (string | undefined)[] | undefined {
  let body: unknown;
  try {
    body = parseLossless(text, null, (t) => new NumberText(t));
  } catch {
    return undefined;
  }
  const idText = (call: unknown): string | undefined => {
    const id = call !== null && typeof call === 'object' ? (call as Record<string, unknown>).id : undefined;
    return id instanceof NumberText ? id.text : undefined;
  };
  return Array.isArray(body) ? body.map(idText) : [idText(body)];
}

/** Whether a numeric id would not come back as sent from JSON.parse's number (JSON.stringify of it). */
const lossy = (call: unknown): boolean => {
  const id = call !== null && typeof call === 'object' ? (call as Record<string, unknown>).id : undefined;
  return typeof id === 'number' && !Number.isSafeInteger(id);
};

/**
 * The id's JSON text; undefined for an id that is no id. Section 4: a String, a Number or Null
 * (Blockscout itself requires one). `rawId`: a numeric id's text as sent, when it was read again.
 */
function idOf(id: unknown, rawId: string | undefined): string | undefined {
  if (id === null) return 'null';
  if (typeof id === 'string') return JSON.stringify(id);
  if (typeof id === 'number' && Number.isFinite(id)) return rawId ?? JSON.stringify(id);
  return undefined;
}

function parseCall(raw: unknown, rawId: string | undefined): ParsedCall {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      idJson: 'null',
      notification: false,
      method: undefined,
      outcome: { code: INVALID_REQUEST, message: 'Invalid request: expected a request object' },
    };
  }
  const call = raw as Record<string, unknown>;
  const method = typeof call.method === 'string' ? call.method : undefined;
  // Section 4.1: a Request object without an id is a notification. One that is no valid request
  // object ({"foo":"boo"}, no jsonrpc) is answered Invalid Request with id null, as section 7's
  // examples are.
  const hasId = Object.prototype.hasOwnProperty.call(call, 'id');
  const idJson = hasId ? idOf(call.id, rawId) : 'null';
  const notification = !hasId && call.jsonrpc === '2.0' && method !== undefined;
  if (idJson === undefined)
    return {
      idJson: 'null',
      notification,
      method,
      outcome: { code: INVALID_REQUEST, message: 'Invalid request: id must be a string, a number or null' },
    };
  const at = { idJson, notification, method };
  if (call.jsonrpc !== '2.0') return { ...at, outcome: { code: INVALID_REQUEST, message: 'Invalid request: jsonrpc must be "2.0"' } };
  if (method === undefined) return { ...at, outcome: { code: INVALID_REQUEST, message: 'Invalid request: method must be a string' } };
  if (!isRpcMethod(method)) return { ...at, outcome: { code: METHOD_NOT_FOUND, message: `Method not found: ${method.slice(0, 64)}` } };
  const checked = checkCall(method, call.params);
  if ('invalid' in checked) return { ...at, outcome: { code: INVALID_PARAMS, message: `Invalid params: ${checked.invalid}` } };
  return { ...at, outcome: checked };
}

/** A request body: one call, a batch of at most `maxBatch`, or a refusal of the whole body. */
export function parseBody(text: string, maxBatch: number): ParsedBody | { kind: 'too-many'; count: number } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'refused', error: { code: PARSE_ERROR, message: 'Parse error: the body is not JSON' } };
  }
  if (!Array.isArray(body)) return { kind: 'single', calls: [parseCall(body, lossy(body) ? rawIds(text)?.[0] : undefined)] };
  // Section 6: an empty array is an invalid request, answered with one error, not an empty array.
  if (body.length === 0) return { kind: 'refused', error: { code: INVALID_REQUEST, message: 'Invalid request: empty batch' } };
  if (body.length > maxBatch) return { kind: 'too-many', count: body.length };
  const ids = body.some(lossy) ? rawIds(text) : undefined;
  return { kind: 'batch', calls: body.map((call, i) => parseCall(call, ids?.[i])) };
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
