// Parameter checks of the Rust services' routes (stats, BENS, metadata, multichain search: the
// blockscout-rs services, github.com/blockscout/blockscout-rs). Their HTTP side is actix-prost:
// a query is deserialised into the request's protobuf message with serde, so a value must parse
// as its field's type (a bool is `true` or `false`, an int64 an optional `-` and digits, an enum
// one of its names), a repeated field takes the name once per value, and a name the message does
// not have is ignored. A bad value is refused with google.rpc.Status code 3 (INVALID_ARGUMENT).
//
// What is forwarded is rebuilt from the checked values only, in canonical (sorted) order, so it is
// also the cache key; names the service would ignore are dropped, never forwarded.
import { DOT_SEGMENT_DETAIL, formDecode, isDotSegment, percentDecode } from '../http/url-decode.js';
import { ADDRESS_RE } from './params.js';
import type { ParamSchema } from './spec-types.js';
import type { ServiceRouteSpec } from './table.js';

export type ServiceCheckResult = { ok: true; path: string; query: [string, string][] } | { ok: false; message: string };

const INT64_RE = /^-?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** One value against its field's schema: the value to forward, or what is wrong with it. */
function checkValue(schema: ParamSchema, raw: string): { ok: true; value: string } | { ok: false; detail: string } {
  if (schema.enum !== undefined && schema.enum.length > 0) {
    return schema.enum.includes(raw) ? { ok: true, value: raw } : { ok: false, detail: `expected one of ${schema.enum.join(', ')}` };
  }
  if (schema.type === 'boolean') {
    return raw === 'true' || raw === 'false' ? { ok: true, value: raw } : { ok: false, detail: 'expected true or false' };
  }
  if (schema.type === 'integer' || schema.format === 'int64') {
    if (!INT64_RE.test(raw)) return { ok: false, detail: 'expected an integer' };
    const n = BigInt(raw);
    if (n < INT64_MIN || n > INT64_MAX) return { ok: false, detail: 'expected a 64-bit integer' };
    return { ok: true, value: n.toString() };
  }
  return { ok: true, value: raw };
}

/**
 * The metadata service's `addresses` (BatchGetMetadata, BatchGetReputation): a string in the
 * document, read by the service as a comma-separated list of addresses, each trimmed, empty items
 * skipped (fixture/services.ts `list`, as the service splits it). A bad address is refused here,
 * as the service would refuse it with its 400, so it is never forwarded nor billed.
 */
function checkAddressList(raw: string): { ok: true; value: string } | { ok: false; detail: string } {
  for (const item of raw.split(',')) {
    const address = item.trim();
    if (address !== '' && !ADDRESS_RE.test(address))
      return { ok: false, detail: 'expected comma-separated addresses (0x and 40 hex digits)' };
  }
  return { ok: true, value: raw };
}

/** Query fields whose string the service reads further than its type says, by name. */
const STRING_FORMATS: Readonly<Record<string, (raw: string) => { ok: true; value: string } | { ok: false; detail: string }>> = {
  addresses: checkAddressList,
};

/** `{"code":3,"message":...,"details":[]}`: google.rpc.Status as JSON, the document's `googlerpcStatus`. */
export function rpcStatusBody(code: number, message: string): string {
  return JSON.stringify({ code, message, details: [] });
}

/** The name-value pairs of a query, every value kept (a repeated field takes one per value). */
export function queryPairs(qs: string): { pairs: [string, string][]; malformed: string | undefined } {
  const pairs: [string, string][] = [];
  let malformed: string | undefined;
  if (qs === '') return { pairs, malformed };
  for (const pair of qs.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = formDecode(eq === -1 ? pair : pair.slice(0, eq));
    const value = formDecode(eq === -1 ? '' : pair.slice(eq + 1));
    if (name === undefined || value === undefined) malformed ??= eq === -1 ? pair : pair.slice(0, eq);
    else pairs.push([name, value]);
  }
  return { pairs, malformed };
}

const byName = ([a, x]: [string, string], [b, y]: [string, string]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0);

/**
 * A Rust service route's parameters: the raw (percent-encoded) path values in template order and
 * the query's pairs. The first problem is the answer, as serde stops at the first; on success,
 * the path at the service and the canonical query.
 */
export function checkService(spec: ServiceRouteSpec, rawPathValues: readonly string[], qs: string): ServiceCheckResult {
  const values: string[] = [];
  for (const [i, p] of spec.pathParams.entries()) {
    const decoded = percentDecode(rawPathValues[i] ?? '');
    if (decoded === undefined) return { ok: false, message: `invalid ${p.name}: invalid percent-encoding` };
    if (decoded === '') return { ok: false, message: `missing ${p.name}` };
    // Forwarded as is, `.` or `..` would be a dot-segment the service resolves (RFC 3986 section
    // 5.2.4): `domains/../events` is `/api/v1/events`, another route than the one checked and billed.
    if (isDotSegment(decoded)) return { ok: false, message: `invalid ${p.name}: ${DOT_SEGMENT_DETAIL}` };
    const r = checkValue(p.schema, decoded);
    if (!r.ok) return { ok: false, message: `invalid ${p.name}: ${r.detail}` };
    values.push(r.value);
  }
  const { pairs, malformed } = queryPairs(qs);
  if (malformed !== undefined) return { ok: false, message: `invalid query: bad percent-encoding in ${malformed}` };
  const out: [string, string][] = [];
  for (const p of spec.queryParams) {
    const given = pairs.filter(([name]) => name === p.name).map(([, value]) => value);
    if (given.length === 0) {
      if (p.required) return { ok: false, message: `missing ${p.name}` };
      continue;
    }
    // A repeated field keeps every value; any other keeps the last, as serde_urlencoded's map does.
    const kept = p.schema.type === 'array' ? given : given.slice(-1);
    const item = p.schema.type === 'array' ? (p.schema.items ?? {}) : p.schema;
    const format = item.type === 'string' && Object.hasOwn(STRING_FORMATS, p.name) ? STRING_FORMATS[p.name]! : undefined;
    for (const raw of kept) {
      const r = format !== undefined ? format(raw) : checkValue(item, raw);
      if (!r.ok) return { ok: false, message: `invalid ${p.name}: ${r.detail}, got ${JSON.stringify(raw.slice(0, 100))}` };
      out.push([p.name, r.value]);
    }
  }
  let i = 0;
  const path = spec.segments.map((s) => (typeof s === 'string' ? s : encodeURIComponent(values[i++] ?? ''))).join('/');
  return { ok: true, path: `/${path}`, query: out.sort(byName) };
}
