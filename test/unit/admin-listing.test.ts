// The listing helpers of the admin API (src/admin/listing.ts): pages cut at an opaque cursor, in
// id order, that neither repeat nor skip an item when others are added or removed between two
// pages; limits and cursors checked as a 400 naming the field; the search fields.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AdminError } from '../../src/admin/errors.js';
import {
  decodeCursor,
  DEFAULT_LIMIT,
  encodeCursor,
  matchesSearch,
  MAX_LIMIT,
  metaFilter,
  page,
  pageParams,
  searchParams,
} from '../../src/admin/listing.js';

const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: `key_${String(from + i).padStart(4, '0')}` }));
/** Every page of `items`, `limit` at a time, following nextCursor. */
function pages<T extends { id: string }>(items: () => readonly T[], limit: number, between?: (n: number, last: string) => void): T[][] {
  const out: T[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const p = page(items(), { cursor, limit });
    out.push(p.items);
    if (p.nextCursor === null) return out;
    cursor = p.nextCursor;
    between?.(out.length, p.items.at(-1)!.id);
  }
}

/** The AdminError `fn` throws. */
function refusal(fn: () => unknown): AdminError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AdminError) return err;
    throw err;
  }
  throw new Error('no refusal');
}

describe('page', () => {
  it('gives every item once, sorted by id, limit at a time, and nextCursor null on the last page', () => {
    const items = ids(25).reverse();
    const got = pages(() => items, 7);
    expect(got.map((p) => p.length)).toEqual([7, 7, 7, 4]);
    expect(got.flat().map((i) => i.id)).toEqual(ids(25).map((i) => i.id));
  });

  it('ends with nextCursor null when the last page is exactly full, and for no items at all', () => {
    const p = page(ids(7), { limit: 7 });
    expect(p.items).toHaveLength(7);
    expect(p.nextCursor).toBeNull();
    expect(page([], {})).toEqual({ items: [], nextCursor: null });
  });

  it(`takes ${DEFAULT_LIMIT} items when no limit is given, and at most ${MAX_LIMIT}`, () => {
    const many = ids(MAX_LIMIT + 5);
    const first = page(many, {});
    expect(first.items).toHaveLength(DEFAULT_LIMIT);
    expect(first.nextCursor).not.toBeNull();
    expect(page(many, { limit: MAX_LIMIT }).items).toHaveLength(MAX_LIMIT);
  });

  it('neither repeats nor skips an item that stays while others are added and removed between pages', () => {
    let items = ids(30, 100);
    const stays = new Set(items.filter((_, i) => i % 3 !== 0).map((i) => i.id));
    const got = pages(
      () => items,
      4,
      (n, last) => {
        // Remove an item already listed and the next one not yet listed (neither of those that stay),
        // and add some before the cursor and some after it.
        const removable = items.filter((i) => i.id < 'key_0500' && !stays.has(i.id));
        const listed = removable.filter((i) => i.id <= last).at(-1);
        const next = removable.filter((i) => i.id > last).sort((a, b) => (a.id < b.id ? -1 : 1))[0];
        items = items.filter((i) => i !== listed && i !== next);
        items = [...items, ...ids(2, n * 10), ...ids(1, 500 + n)];
      },
    );
    const seen = got.flat().map((i) => i.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort());
    for (const id of stays) expect(seen).toContain(id);
    // Those added after the cursor are listed too; those added before it wait for the next listing.
    expect(seen).toContain('key_0501');
    expect(seen).not.toContain('key_0010');
  });

  it('continues after a cursor whose item is gone', () => {
    const items = ids(10);
    const first = page(items, { limit: 3 });
    const after = page(
      items.filter((i) => i.id !== 'key_0002'),
      { cursor: first.nextCursor!, limit: 3 },
    );
    expect(after.items.map((i) => i.id)).toEqual(['key_0003', 'key_0004', 'key_0005']);
  });

  it('sorts in code unit order, whatever the locale, with a sort key of its own when given', () => {
    const items = [{ id: 'b' }, { id: 'B' }, { id: 'a' }, { id: 'cfg_1' }, { id: 'key_1' }];
    expect(page(items, {}).items.map((i) => i.id)).toEqual(['B', 'a', 'b', 'cfg_1', 'key_1']);
    const named = [
      { id: '1', name: 'z' },
      { id: '2', name: 'y' },
    ];
    expect(page(named, {}, (i) => i.name).items.map((i) => i.id)).toEqual(['2', '1']);
  });

  it.each([0, -1, 1.5, MAX_LIMIT + 1, Number.NaN])('refuses limit %s with a 400 naming limit', (limit) => {
    const err = refusal(() => page(ids(3), { limit }));
    expect(err).toMatchObject({ code: 'INVALID_QUERY', status: 400, extra: { errors: [{ field: 'limit' }] } });
    expect(err.message).toContain('limit');
  });

  it.each(['', 'not a cursor', '!!!', 'a'.repeat(600), 'AA', '_w'])('refuses cursor %j with a 400 naming cursor', (cursor) => {
    const err = refusal(() => page(ids(3), { cursor }));
    expect(err).toMatchObject({ code: 'INVALID_QUERY', status: 400, extra: { errors: [{ field: 'cursor' }] } });
  });
});

describe('cursor', () => {
  it('is base64url of the sort key, opaque and safe in a query string, and decodes back', () => {
    for (const key of ['key_abcdefghijklmnop', 'cfg_0123456789abcdef', 'acct_ü/+?&=']) {
      const c = encodeCursor(key);
      expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(encodeURIComponent(c)).toBe(c);
      expect(decodeCursor(c)).toBe(key);
    }
  });

  it('is refused when it is not one encodeCursor made', () => {
    // 'AA' is a NUL byte; '_w' a byte that is not UTF-8; a non-canonical tail; padding; standard base64.
    for (const bad of ['', 'AA', '_w', 'a2V5X2F', 'a2V5X2E=', 'a2V5+2E/', 'x'.repeat(513)]) expect(decodeCursor(bad), bad).toBeUndefined();
  });
});

describe('search', () => {
  const key = { name: 'Acme Production', prefix: 'egw_AbCdEfGh…', owner: 'acme', meta: { customer: 'cus_42', seats: 3, nested: { a: 1 } } };

  it('name: a part of it, in any case', () => {
    expect(matchesSearch(key, { name: 'PRODUC' })).toBe(true);
    expect(matchesSearch(key, { name: 'acme p' })).toBe(true);
    expect(matchesSearch(key, { name: 'staging' })).toBe(false);
  });

  it('prefix: the start of the shown prefix, in its case; a key without one never matches', () => {
    expect(matchesSearch(key, { prefix: 'egw_AbC' })).toBe(true);
    expect(matchesSearch(key, { prefix: 'egw_abc' })).toBe(false);
    expect(matchesSearch(key, { prefix: 'AbC' })).toBe(false);
    expect(matchesSearch({ ...key, prefix: null }, { prefix: 'egw_' })).toBe(false);
  });

  it('owner: exactly', () => {
    expect(matchesSearch(key, { owner: 'acme' })).toBe(true);
    expect(matchesSearch(key, { owner: 'acm' })).toBe(false);
    expect(matchesSearch({ ...key, owner: null }, { owner: 'acme' })).toBe(false);
  });

  it("meta: field:value, exactly, on a top-level field's string or number", () => {
    expect(matchesSearch(key, { meta: 'customer:cus_42' })).toBe(true);
    expect(matchesSearch(key, { meta: 'customer:cus_4' })).toBe(false);
    expect(matchesSearch(key, { meta: 'seats:3' })).toBe(true);
    expect(matchesSearch(key, { meta: 'seats:4' })).toBe(false);
    expect(matchesSearch(key, { meta: 'nested:[object Object]' })).toBe(false);
    expect(matchesSearch(key, { meta: 'toString:x' })).toBe(false);
    expect(matchesSearch({ ...key, meta: null }, { meta: 'customer:cus_42' })).toBe(false);
    // A value may hold colons; the field is up to the first one.
    expect(matchesSearch({ meta: { url: 'https://a.example' } }, { meta: 'url:https://a.example' })).toBe(true);
    expect(metaFilter('a:b:c')).toEqual({ field: 'a', value: 'b:c' });
    expect(metaFilter(':b')).toBeUndefined();
    expect(metaFilter('ab')).toBeUndefined();
    expect(refusal(() => matchesSearch(key, { meta: 'nocolon' }))).toMatchObject({ extra: { errors: [{ field: 'meta' }] } });
  });

  it('every field given must match; none given matches all', () => {
    expect(matchesSearch(key, {})).toBe(true);
    expect(matchesSearch(key, { name: 'acme', owner: 'acme', prefix: 'egw_', meta: 'seats:3' })).toBe(true);
    expect(matchesSearch(key, { name: 'acme', owner: 'other' })).toBe(false);
  });
});

describe('query parameters', () => {
  const query = z.strictObject({ ...pageParams, ...searchParams });

  it('takes a limit as the query string has it, and names a bad one', () => {
    expect(query.parse({ limit: '7' })).toEqual({ limit: 7 });
    for (const limit of ['0', '1001', 'abc', '1.5', '']) {
      const r = query.safeParse({ limit });
      expect(r.success, limit).toBe(false);
      expect(
        r.error!.issues.map((i) => i.path.join('.')),
        limit,
      ).toEqual(['limit']);
    }
  });

  it('takes a cursor a page gave, refuses any other, and a meta search only as field:value', () => {
    const cursor = page(ids(5), { limit: 2 }).nextCursor!;
    expect(query.parse({ cursor })).toEqual({ cursor });
    expect(query.safeParse({ cursor: 'nope!' }).error!.issues[0]!.path).toEqual(['cursor']);
    expect(query.parse({ meta: 'customer:cus_42' })).toEqual({ meta: 'customer:cus_42' });
    expect(query.safeParse({ meta: 'customer' }).error!.issues[0]!.path).toEqual(['meta']);
  });
});
