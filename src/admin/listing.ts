// Listing that scales (GET /keys, GET /accounts): a page at a time, searched by what an operator
// knows a customer by. Pure functions over items already in memory; no store, no HTTP.
//
// A page is cut by the sort key of its last item, not by an offset (keyset pagination: "seek"
// instead of OFFSET, https://use-the-index-luke.com/no-offset; Stripe's lists page the same way,
// `starting_after` an object id, https://docs.stripe.com/api/pagination). Items are sorted by id,
// and the next page starts after the last id given: an item added or removed between two pages
// never shifts the others, so each item that stays is listed exactly once, in id order (one added
// behind the cursor is seen by the next listing from the start).
//
// The cursor is that id as base64url (RFC 4648, section 5, https://www.rfc-editor.org/rfc/rfc4648#section-5):
// opaque to clients, safe in a query string, and valid however many processes serve the API.
import { z } from 'zod';
import { AdminError } from './errors.js';

/** Items a page holds when the query does not say. */
export const DEFAULT_LIMIT = 100;
/** The most a page holds: one answer stays small, and so does the work of one call. */
export const MAX_LIMIT = 1000;
/** No sort key (an id) is longer; a longer cursor is not one this API gave. */
const MAX_CURSOR_CHARS = 512;

export interface PageQuery {
  /** `nextCursor` of the page before; undefined: the first page. */
  cursor?: string | undefined;
  /** 1 to MAX_LIMIT; undefined: DEFAULT_LIMIT. */
  limit?: number | undefined;
}

export interface Page<T> {
  items: T[];
  /** The cursor of the next page; null when this one is the last. */
  nextCursor: string | null;
}

/** The cursor that starts after the item of this sort key. */
export function encodeCursor(sortKey: string): string {
  return Buffer.from(sortKey, 'utf8').toString('base64url');
}

/** The sort key a cursor holds, or undefined when it is not a cursor encodeCursor made. */
export function decodeCursor(cursor: string): string | undefined {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  // Node decodes any base64url leniently (and bytes that are not UTF-8 to U+FFFD): only a
  // cursor that encodes back to itself is one encodeCursor made, and a sort key has no controls.
  // eslint-disable-next-line no-control-regex
  if (key === '' || encodeCursor(key) !== cursor || /[\u0000-\u001f\u007f]/.test(key)) return undefined;
  return key;
}

const badQuery = (field: string, message: string) =>
  new AdminError('INVALID_QUERY', `invalid query: ${field}: ${message}`, { errors: [{ field, message }] });

const CURSOR_MESSAGE = 'expected the nextCursor of an earlier page';
const LIMIT_MESSAGE = `expected an integer from 1 to ${MAX_LIMIT}`;
const META_MESSAGE = 'expected field:value (a top-level field of meta and its string or number)';

/** Code unit order: the same in every process and locale, unlike localeCompare. */
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The page of `items` the query asks for: sorted by `sortKey` (the id by default), those after
 * the cursor's key, at most `limit` of them. A bad cursor or limit is a 400 naming the field.
 */
export function page<T extends { readonly id?: unknown }>(
  items: readonly T[],
  query: PageQuery,
  sortKey: (item: T) => string = (item) => String(item.id),
): Page<T> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw badQuery('limit', LIMIT_MESSAGE);
  let after: string | undefined;
  if (query.cursor !== undefined) {
    after = decodeCursor(query.cursor);
    if (after === undefined) throw badQuery('cursor', CURSOR_MESSAGE);
  }
  const keyed = items.map((item) => ({ key: sortKey(item), item })).sort((a, b) => byKey(a.key, b.key));
  const rest = after === undefined ? keyed : keyed.filter((k) => k.key > after);
  const taken = rest.slice(0, limit);
  return {
    items: taken.map((k) => k.item),
    nextCursor: rest.length > limit ? encodeCursor(taken.at(-1)!.key) : null,
  };
}

// --- search ---

export interface SearchQuery {
  /** A part of the name, any case. */
  name?: string | undefined;
  /** The start of the shown secret prefix (`egw_AbC`). */
  prefix?: string | undefined;
  /** The owner, exactly. */
  owner?: string | undefined;
  /** `field:value`: a top-level field of `meta` whose string or number is `value` (metaFilter). */
  meta?: string | undefined;
}

/** What a search looks at; a field of another type than these never matches. */
export interface Searchable {
  readonly name?: unknown;
  readonly prefix?: unknown;
  readonly owner?: unknown;
  readonly meta?: unknown;
}

/** `field:value` split at its first colon (a field has none, a value may), or undefined. */
export function metaFilter(s: string): { field: string; value: string } | undefined {
  const at = s.indexOf(':');
  return at <= 0 ? undefined : { field: s.slice(0, at), value: s.slice(at + 1) };
}

function metaMatches(meta: unknown, filter: { field: string; value: string }): boolean {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta) || !Object.hasOwn(meta, filter.field)) return false;
  const v = (meta as Record<string, unknown>)[filter.field];
  return (typeof v === 'string' && v === filter.value) || (typeof v === 'number' && String(v) === filter.value);
}

/** Whether an item has every field the query searches for (an absent field searches nothing). */
export function matchesSearch(item: Searchable, q: SearchQuery): boolean {
  if (q.name !== undefined && !(typeof item.name === 'string' && item.name.toLowerCase().includes(q.name.toLowerCase()))) return false;
  if (q.prefix !== undefined && !(typeof item.prefix === 'string' && item.prefix.startsWith(q.prefix))) return false;
  if (q.owner !== undefined && item.owner !== q.owner) return false;
  if (q.meta !== undefined) {
    const filter = metaFilter(q.meta);
    if (filter === undefined) throw badQuery('meta', META_MESSAGE);
    if (!metaMatches(item.meta, filter)) return false;
  }
  return true;
}

// --- query parameters: spread into a list call's query schema (schemas.ts) ---

const optionalText = (description: string) => z.string().optional().meta({ description });

export const pageParams = {
  cursor: z
    .string()
    .refine((s) => decodeCursor(s) !== undefined, { error: CURSOR_MESSAGE })
    .optional()
    .meta({ description: '`nextCursor` of the page before; absent: the first page' }),
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(MAX_LIMIT, { error: LIMIT_MESSAGE })
    .optional()
    .meta({ description: `at most this many items (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})` }),
};

export const searchParams = {
  name: optionalText('only those whose name contains this, in any case'),
  meta: z
    .string()
    .refine((s) => metaFilter(s) !== undefined, { error: META_MESSAGE })
    .optional()
    .meta({ description: '`field:value`: only those whose `meta` has this top-level field with this string or number value' }),
};

export const prefixParam = optionalText('only the keys whose shown secret prefix starts with this (`egw_AbC`)');
