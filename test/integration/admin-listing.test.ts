// Listing that scales (issue 25, item 3), end to end through the real gateway and its admin API,
// on the embedded store (SQLite), Redis and PostgreSQL: GET /admin/v1/keys a page at a time (cursor,
// limit) in id order, each key once however keys come and go between pages; searched by name,
// secret prefix, owner and meta field; each key with the balance GET /keys/{id} shows; revoked
// keys listed with status=revoked; a bad cursor or limit refused with a 400 naming the field.
import { storeWorlds } from '../support/store-worlds.js';
import { describe, expect, it } from 'vitest';
import { ADDRESS, DEMO_KEY } from '../support/gateway.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;

const worlds = storeWorlds('listing');

interface Credits {
  remaining: number;
  spent: number;
  topup: number;
  resetsAt: string;
}
interface Listed {
  id: string;
  name: string;
  owner: string | null;
  plan: string;
  status: string;
  prefix: string | null;
  source: string;
  meta: Record<string, unknown> | null;
  credits: Credits | null;
}
interface Created extends Listed {
  key: string;
}
interface Page {
  items: Listed[];
  nextCursor: string | null;
}
interface Refusal {
  message: string;
  errors?: { field: string; message: string }[];
}

describe.each(['sqlite', 'redis', 'postgres'] as const)('listing keys (%s store)', (kind) => {
  const w = worlds.world(kind, {
    plans: { small: { rps: 50, credits: 1_000, period: 'daily' }, big: { rps: 50, credits: 5_000, period: 'monthly' } },
    keys: [{ name: 'yaml-key', key: DEMO_KEY, plan: 'small' }],
  });
  const { admin } = w;
  let serial = 0;

  const create = async (body: Record<string, unknown> = {}) => {
    const res = await admin.post<Created>('/keys', { name: `list-${kind}-${serial++}`, plan: 'small', ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const list = async (query: string) => {
    const res = await admin.get<Page>(`/keys${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const revoke = async (id: string) => expect((await admin.delete(`/keys/${id}`)).status).toBe(200);
  /** Every page of a query, `limit` at a time; `between` runs after each page but the last. */
  const allPages = async (query: string, limit: number, between?: (n: number) => Promise<void>) => {
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const p = await list(
        `?${query}${query === '' ? '' : '&'}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      pages.push(p);
      cursor = p.nextCursor;
      if (cursor !== null) await between?.(pages.length);
      expect(pages.length).toBeLessThan(100);
    } while (cursor !== null);
    return pages;
  };
  const sorted = (ids: string[]) => [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  it('pages through 25 keys 7 at a time: each once, in id order, and nextCursor null at the end', async () => {
    const owner = `pager-${kind}`;
    const made: string[] = [];
    for (let i = 0; i < 25; i++) made.push((await create({ owner })).id);

    const pages = await allPages(`owner=${owner}`, 7);
    expect(pages.map((p) => p.items.length)).toEqual([7, 7, 7, 4]);
    expect(pages.map((p) => p.nextCursor === null)).toEqual([false, false, false, true]);
    const ids = pages.flatMap((p) => p.items.map((k) => k.id));
    expect(ids).toEqual(sorted(made));

    // Without a filter: every key of the gateway, the configured one included, each once, in order.
    const everything = (await allPages('', 7)).flatMap((p) => p.items);
    const all = everything.map((k) => k.id);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual(sorted(all));
    expect(all).toEqual(expect.arrayContaining(made));
    expect(everything.find((k) => k.name === 'yaml-key')).toMatchObject({ source: 'config', prefix: null });

    // No limit: 100 at most, and all 25 here in one page.
    const one = await list(`?owner=${owner}`);
    expect(one.items).toHaveLength(25);
    expect(one.nextCursor).toBeNull();
  });

  it('keys created and revoked between pages cause no duplicate and skip no other key', async () => {
    const owner = `churn-${kind}`;
    const made: string[] = [];
    for (let i = 0; i < 15; i++) made.push((await create({ owner })).id);
    const ordered = sorted(made);
    // Revoked during the walk: one already listed, and one not listed yet (never listed, then).
    const gone = new Set<string>();
    const added: string[] = [];
    const seen: string[] = [];
    let cursor: string | null = null;
    let n = 0;
    do {
      const p: Page = await list(`?owner=${owner}&limit=4${cursor === null ? '' : `&cursor=${cursor}`}`);
      seen.push(...p.items.map((k) => k.id));
      cursor = p.nextCursor;
      n++;
      if (cursor !== null && n <= 2) {
        const listed = seen.filter((id) => made.includes(id) && !gone.has(id)).at(-1)!;
        const ahead = ordered.find((id) => !seen.includes(id) && !gone.has(id) && id !== ordered.at(-1))!;
        await revoke(listed);
        await revoke(ahead);
        gone.add(listed).add(ahead);
        for (let i = 0; i < 3; i++) added.push((await create({ owner })).id);
      }
    } while (cursor !== null);

    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(sorted(seen));
    // Every key that was there from the start to the end: listed exactly once.
    const stayed = made.filter((id) => !gone.has(id));
    for (const id of stayed)
      expect(
        seen.filter((s) => s === id),
        id,
      ).toHaveLength(1);
    // A key revoked before its page came is not listed.
    expect(seen.filter((id) => gone.has(id))).toHaveLength(2);
    // Keys added behind the cursor wait for the next walk; the first page of a new walk has every key.
    const now = await list(`?owner=${owner}`);
    expect(now.items.map((k) => k.id)).toEqual(sorted([...stayed, ...added]));
  });

  it('searches by name (a part, any case), secret prefix, owner and meta field, each alone and together', async () => {
    const a = await create({ name: `Acme-Production-${kind}`, owner: `acme-${kind}`, meta: { customer: `cus_42_${kind}`, seats: 3 } });
    const b = await create({ name: `acme-staging-${kind}`, owner: `acme-${kind}`, meta: { customer: `cus_43_${kind}`, seats: 3 } });
    const c = await create({ name: `globex-${kind}`, owner: `globex-${kind}`, meta: { customer: `cus_42_${kind}` } });
    const names = async (query: string) => (await list(`?${query}`)).items.map((k) => k.name).sort();

    expect(await names(`name=ACME-`)).toEqual([a.name, b.name].sort());
    expect(await names(`name=production-${kind}`)).toEqual([a.name]);
    expect(await names(`name=no-such-name`)).toEqual([]);

    const shown = b.prefix!.replace(/\u2026$/, '');
    expect(b.key.startsWith(shown)).toBe(true);
    expect(await names(`prefix=${shown}`)).toEqual([b.name]);
    expect(await names(`prefix=${encodeURIComponent(b.prefix!)}`)).toEqual([b.name]);
    expect(await names(`prefix=${shown.toLowerCase() === shown ? 'egw_~' : shown.toLowerCase()}`)).toEqual([]);

    expect(await names(`owner=acme-${kind}`)).toEqual([a.name, b.name].sort());
    expect(await names(`owner=acme`)).toEqual([]);

    expect(await names(`meta=customer:cus_42_${kind}`)).toEqual([a.name, c.name].sort());
    expect(await names(`meta=customer:cus_42`)).toEqual([]);
    expect(await names(`meta=seats:3&owner=acme-${kind}`)).toEqual([a.name, b.name].sort());
    expect(await names(`meta=${encodeURIComponent(`customer:cus_42_${kind}`)}&name=acme`)).toEqual([a.name]);
    expect(await names(`meta=customer:cus_43_${kind}&owner=globex-${kind}`)).toEqual([]);
  });

  it('lists each key with the balance GET /keys/{id} shows, for the keys of the page', async () => {
    const owner = `balances-${kind}`;
    const spender = await create({ owner });
    const buyer = await create({ owner, plan: 'big' });
    const idle = await create({ owner });
    for (let i = 0; i < 3; i++)
      expect((await w.gw().get(BALANCES, { key: null, headers: { authorization: `Bearer ${spender.key}` } })).status).toBe(200);
    expect((await admin.post(`/keys/${buyer.id}/credits`, { amount: 250 })).status).toBe(200);

    const listed = (await list(`?owner=${owner}`)).items;
    expect(listed.map((k) => k.id)).toEqual(sorted([spender.id, buyer.id, idle.id]));
    for (const k of listed) {
      const shown = await admin.get<Listed>(`/keys/${k.id}`);
      expect(k.credits, k.name).toEqual(shown.body.credits);
      expect(k).toEqual(shown.body);
    }
    const byId = new Map(listed.map((k) => [k.id, k.credits!]));
    expect(byId.get(spender.id)!.spent).toBeGreaterThan(0);
    expect(byId.get(spender.id)!.remaining).toBe(1_000 - byId.get(spender.id)!.spent);
    expect(byId.get(buyer.id)).toMatchObject({ spent: 0, topup: 250, remaining: 5_250 });
    expect(byId.get(idle.id)).toMatchObject({ spent: 0, topup: 0, remaining: 1_000 });

    // Paged too: the configured key's balance, as GET /keys/{id} shows it.
    const yaml = (await allPages('', 5)).flatMap((p) => p.items).find((k) => k.name === 'yaml-key')!;
    expect(yaml.credits).toEqual((await admin.get<Listed>(`/keys/${yaml.id}`)).body.credits);
  });

  it('status=revoked lists revoked keys as they were, without a balance, and only those', async () => {
    const owner = `revoked-${kind}`;
    const kept = await create({ owner, meta: { customer: `cus_r_${kind}` } });
    const r1 = await create({ owner, meta: { customer: `cus_r_${kind}` } });
    const r2 = await create({ owner });
    const r3 = await create({ owner, plan: 'big' });
    for (const k of [r1, r2, r3]) await revoke(k.id);

    const active = await list(`?owner=${owner}`);
    expect(active.items.map((k) => k.id)).toEqual([kept.id]);

    const revoked = await list(`?owner=${owner}&status=revoked`);
    expect(revoked.items.map((k) => k.id)).toEqual(sorted([r1.id, r2.id, r3.id]));
    expect(revoked.nextCursor).toBeNull();
    const one = revoked.items.find((k) => k.id === r1.id)!;
    const { key: _secret, ...wasShown } = r1;
    expect(one).toEqual({ ...wasShown, status: 'revoked', credits: null });
    expect(JSON.stringify(revoked)).not.toContain(r1.key);

    // The filters and pages apply to them too.
    expect((await list(`?status=revoked&meta=customer:cus_r_${kind}`)).items.map((k) => k.id)).toEqual([r1.id]);
    expect((await list(`?status=revoked&owner=${owner}&plan=big`)).items.map((k) => k.id)).toEqual([r3.id]);
    const paged = await allPages(`owner=${owner}&status=revoked`, 2);
    expect(paged.map((p) => p.items.length)).toEqual([2, 1]);
    expect(paged.flatMap((p) => p.items.map((k) => k.id))).toEqual(sorted([r1.id, r2.id, r3.id]));
    // A revoked key is in no other status's list.
    expect((await list(`?owner=${owner}&status=active`)).items.map((k) => k.id)).toEqual([kept.id]);
  });

  it('refuses a bad cursor, limit, meta or status with a 400 naming the field, and an unknown parameter', async () => {
    const refused = async (query: string, field: string) => {
      const res = await admin.get<Refusal>(`/keys?${query}`);
      expect(res.status, query).toBe(400);
      expect(
        res.body.errors?.map((e) => e.field),
        query,
      ).toEqual([field]);
      expect(res.body.message, query).toContain(field);
    };
    await refused('cursor=not-a-cursor!', 'cursor');
    await refused('cursor=AA', 'cursor');
    await refused('cursor=', 'cursor');
    await refused('limit=0', 'limit');
    await refused('limit=1001', 'limit');
    await refused('limit=abc', 'limit');
    await refused('limit=2.5', 'limit');
    await refused('meta=customer', 'meta');
    await refused('status=deleted', 'status');
    await refused('page=2', 'page');
    // The largest limit is served.
    expect((await admin.get('/keys?limit=1000')).status).toBe(200);
  });
});
