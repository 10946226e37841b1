// The page_token of the gateway's own multichain search (cluster-search.ts): opaque to clients,
// base64url (RFC 4648 section 5, no padding) of a compact JSON text that says, per chain of the
// paging session, where its next item is. Pure: no I/O.
//
// Wire form: {"v":1,"r":route,"q":query,"c":[[chainId,null] | [chainId,params,offset,served], ...]}
// - params: the explorer's next_page_params that select the explorer page holding the chain's
//   next item, flattened to query pairs (null: its first page);
// - offset: index into that explorer page's `items` of the first item not yet looked at;
// - served: how many items the chain has contributed so far (its rank in the interleaving);
// - null in place of the position: the chain is exhausted.

/** Query parameters as name/value pairs, in the order they are kept (names may repeat). */
export type ParamPairs = readonly (readonly [string, string])[];

export interface ChainPosition {
  /** The explorer page to read, as the explorer's flattened next_page_params; null: its first page. */
  readonly params: ParamPairs | null;
  /** Index into that page's `items` of the first item not yet looked at. */
  readonly offset: number;
  /** Items this chain has contributed so far in this paging session. */
  readonly served: number;
}

export interface SearchCursor {
  /** The route the token was issued for, e.g. `search/tokens`. */
  readonly route: string;
  /** The search text the token was issued for. */
  readonly q: string;
  /** Every chain of the paging session in cluster order; `at` null: exhausted. */
  readonly chains: readonly { readonly id: string; readonly at: ChainPosition | null }[];
}

const VERSION = 1;
/** Longer tokens are refused unread (a cluster of dozens of chains stays far below). */
export const MAX_TOKEN_LENGTH = 32_768;

type WireChain = [string, null] | [string, [string, string][] | null, number, number];

export function encodeCursor(cursor: SearchCursor): string {
  const c: WireChain[] = cursor.chains.map(({ id, at }) =>
    at === null ? [id, null] : [id, at.params === null ? null : at.params.map(([k, v]) => [k, v]), at.offset, at.served],
  );
  return Buffer.from(JSON.stringify({ v: VERSION, r: cursor.route, q: cursor.q, c }), 'utf8').toString('base64url');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isPair = (v: unknown): v is [string, string] =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string';

/** The cursor a token stands for, or undefined when it is not one this module issued (in any version it reads). */
export function decodeCursor(token: string): SearchCursor | undefined {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  // Node's decoder skips what it cannot read; only the canonical spelling of some bytes is taken.
  if (bytes.toString('base64url') !== token) return undefined;
  let wire: unknown;
  try {
    wire = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(wire) || wire.v !== VERSION || typeof wire.r !== 'string' || typeof wire.q !== 'string') return undefined;
  if (!Array.isArray(wire.c)) return undefined;
  const chains: { id: string; at: ChainPosition | null }[] = [];
  const ids = new Set<string>();
  for (const entry of wire.c as unknown[]) {
    if (!Array.isArray(entry)) return undefined;
    const [id, params, offset, served] = entry as unknown[];
    if (typeof id !== 'string' || id.length === 0 || ids.has(id)) return undefined;
    ids.add(id);
    if (entry.length === 2 && params === null) {
      chains.push({ id, at: null });
      continue;
    }
    if (entry.length !== 4 || !isCount(offset) || !isCount(served)) return undefined;
    if (params === null) {
      chains.push({ id, at: { params: null, offset, served } });
      continue;
    }
    if (!Array.isArray(params)) return undefined;
    const pairs: [string, string][] = [];
    for (const p of params as unknown[]) {
      if (!isPair(p)) return undefined;
      pairs.push([p[0], p[1]]);
    }
    chains.push({ id, at: { params: pairs, offset, served } });
  }
  return { route: wire.r, q: wire.q, chains };
}
