// From the raw request target to a route: chain, route name, the key the query carried, and
// the upstream path rebuilt from validated parts only. Pure: no I/O, no fastify.
//
// The upstream path is never derived from the client's path text: it is built from the route's
// template and values that passed validation, so an encoded `../`, a doubled slash or any other
// path trick cannot reach an upstream. Query parameters are re-encoded in canonical (sorted)
// order, which also makes them usable as a cache key.
import { ERRORS, type ErrorCode, type ValidationIssue } from '../http/errors.js';
import type { RouteName } from '../config/schema.js';
import {
  ADDRESS_DETAIL,
  ADDRESS_RE,
  LEGACY_ACTIONS,
  legacyQuery,
  toIssues,
  tokenBalancesQuery,
  transactionsQuery,
  type LegacyAction,
} from './params.js';

export type Validation =
  | { ok: true; upstreamPath: string }
  | { ok: false; issues: ValidationIssue[] } // v2: 422 JsonErrorResponse
  | { ok: false; legacyMessage: string }; // legacy: 200 envelope with status "0"

export interface Route {
  kind: 'route';
  chainId: string;
  route: RouteName;
  legacy: boolean;
  /** Every `apikey` value the query carried (they are never forwarded). */
  apikeys: string[];
  validation: Validation;
}

export interface Refusal {
  kind: 'refusal';
  code: ErrorCode;
  legacy: boolean;
}

export type Resolution = Route | Refusal;

interface Query {
  params: Map<string, string>;
  apikeys: string[];
  malformed: string[];
}

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s.includes('+') ? s.replaceAll('+', ' ') : s);
  } catch {
    return undefined;
  }
}

/** application/x-www-form-urlencoded; the last value of a repeated name wins, as in Phoenix. */
export function parseQuery(qs: string): Query {
  const params = new Map<string, string>();
  const apikeys: string[] = [];
  const malformed: string[] = [];
  if (qs === '') return { params, apikeys, malformed };
  for (const pair of qs.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decode(rawName);
    const value = decode(eq === -1 ? '' : pair.slice(eq + 1));
    if (name === undefined || value === undefined) {
      malformed.push(name ?? rawName);
      continue;
    }
    if (name === 'apikey') apikeys.push(value);
    else params.set(name, value);
  }
  return { params, apikeys, malformed };
}

export function encodeQuery(entries: Iterable<[string, string]>): string {
  const parts: string[] = [];
  for (const [k, v] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  }
  return parts.join('&');
}

const V2_ROUTE = /^\/api\/v2\/addresses\/([^/]*)\/(token-balances|transactions)$/;

export function resolve(rawUrl: string, chains: { has(id: string): boolean }): Resolution {
  const q = rawUrl.indexOf('?');
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const qs = q === -1 ? '' : rawUrl.slice(q + 1).split('#', 1)[0] ?? '';

  // "/{chain_id}/rest"
  const slash = path.indexOf('/', 1);
  if (path[0] !== '/' || slash === -1) return { kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false };
  const chainId = path.slice(1, slash);
  const rest = path.slice(slash);
  const legacy = rest === '/api' || rest === '/api/';
  if (!chains.has(chainId)) return { kind: 'refusal', code: 'UNKNOWN_CHAIN', legacy };

  if (legacy) return resolveLegacy(chainId, parseQuery(qs));

  const m = V2_ROUTE.exec(rest);
  if (!m) return { kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false };
  const route = m[2] as 'token-balances' | 'transactions';
  const query = parseQuery(qs);
  const issues: ValidationIssue[] = [];

  const address = decode(m[1] ?? '');
  if (address === undefined || !ADDRESS_RE.test(address)) issues.push({ name: 'address_hash_param', detail: ADDRESS_DETAIL });
  for (const name of query.malformed) issues.push({ name, detail: 'Invalid percent-encoding' });

  const schema = route === 'transactions' ? transactionsQuery : tokenBalancesQuery;
  const parsed = schema.safeParse(Object.fromEntries(query.params));
  if (!parsed.success) issues.push(...toIssues(parsed.error));

  const base = { kind: 'route', chainId, route, legacy: false, apikeys: query.apikeys } as const;
  if (issues.length > 0 || !parsed.success || address === undefined) {
    return { ...base, validation: { ok: false, issues } };
  }
  const qstring = encodeQuery(Object.entries(parsed.data as Record<string, string | undefined>).filter((e): e is [string, string] => e[1] !== undefined));
  const upstreamPath = `/api/v2/addresses/${address.toLowerCase()}/${route}${qstring ? `?${qstring}` : ''}`;
  return { ...base, validation: { ok: true, upstreamPath } };
}

function resolveLegacy(chainId: string, query: Query): Resolution {
  const module = query.params.get('module');
  const actionIn = query.params.get('action');
  if (!module || !actionIn) return { kind: 'refusal', code: 'LEGACY_NO_MODULE_ACTION', legacy: true };
  if (module.toLowerCase() !== 'token') return { kind: 'refusal', code: 'LEGACY_UNKNOWN_MODULE', legacy: true };
  const action = LEGACY_ACTIONS.find((a) => a.toLowerCase() === actionIn.toLowerCase());
  if (!action) return { kind: 'refusal', code: 'LEGACY_UNKNOWN_ACTION', legacy: true };

  const base = { kind: 'route', chainId, route: `legacy.${action}`, legacy: true, apikeys: query.apikeys } as const;
  const parsed = legacyQuery[action].safeParse(Object.fromEntries(query.params));
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { ...base, validation: { ok: false, legacyMessage: first?.message ?? ERRORS.INTERNAL.message } };
  }
  return { ...base, validation: { ok: true, upstreamPath: legacyUpstreamPath(action, parsed.data) } };
}

function legacyUpstreamPath(action: LegacyAction, data: Record<string, string | undefined>): string {
  const entries: [string, string][] = [];
  for (const [k, v] of Object.entries(data)) {
    if (v === undefined) continue;
    // Instances read `chain_ids` (a comma list), not the documented `chainid` (blockscout.md).
    entries.push([k === 'chainid' ? 'chain_ids' : k, v]);
  }
  const rest = encodeQuery(entries);
  return `/api?module=token&action=${action}${rest ? `&${rest}` : ''}`;
}
