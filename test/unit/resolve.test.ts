import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery, resolve, type Resolution, type Route } from '../../src/routes/resolve.js';
import { Resolver, SeenOnce } from '../../src/routes/resolver.js';
import { cacheSchema, costsSchema } from '../../src/config/schema.js';

const chains = new Set(['1', '100']);
const A = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
const a = A.toLowerCase();

function route(url: string): Route {
  const r: Resolution = resolve(url, chains);
  if (r.kind !== 'route') throw new Error(`expected a route, got ${r.code}`);
  return r;
}
const upstream = (url: string) => {
  const v = route(url).validation;
  if (!v.ok) throw new Error(`invalid: ${JSON.stringify(v)}`);
  return v.upstreamPath;
};
const issues = (url: string) => {
  const v = route(url).validation;
  if (v.ok || !('issues' in v)) throw new Error('expected v2 issues');
  return v.issues;
};
const legacyMessage = (url: string) => {
  const v = route(url).validation;
  if (v.ok || !('legacyMessage' in v)) throw new Error('expected a legacy message');
  return v.legacyMessage;
};

describe('route resolution', () => {
  it('finds the chain and the v2 routes', () => {
    expect(route(`/1/api/v2/addresses/${A}/token-balances`)).toMatchObject({ chainId: '1', route: 'token-balances', legacy: false });
    expect(route(`/100/api/v2/addresses/${A}/transactions`)).toMatchObject({ chainId: '100', route: 'transactions' });
  });

  it('refuses an unknown chain before anything else, in the shape of the interface asked for', () => {
    expect(resolve(`/5/api/v2/addresses/${A}/token-balances`, chains)).toEqual({ kind: 'refusal', code: 'UNKNOWN_CHAIN', legacy: false });
    expect(resolve('/5/api?module=token&action=getToken', chains)).toEqual({ kind: 'refusal', code: 'UNKNOWN_CHAIN', legacy: true });
  });

  it('refuses unknown routes under a known chain', () => {
    for (const url of [
      '/1/api/v2/no-such-route',
      `/1/api/v2/addresses/${A}/token-balances/more`,
      '/1',
      '/',
      '/1/',
      `/1/api/v2/addresses/${A}/../x/token-balances`,
    ]) {
      expect(resolve(url, chains), url).toMatchObject({ kind: 'refusal', code: 'UNKNOWN_ROUTE' });
    }
  });

  it('answers a path under /services/ that no service route serves as an unknown route, not as the chain "services"', () => {
    for (const url of [
      '/services/',
      '/services/bens/api/v2/domains/x.eth',
      '/services/stats-service/api/v1/lines/txns',
      '/services/api?module=account&action=balance',
      '/services/api/v2/stats',
      '/services/bens/api/v1/domains',
      '/services/nope/api/v1/protocols',
    ]) {
      expect(resolve(url, chains), url).toEqual({ kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false });
    }
    expect(resolve('/services/api/v2/stats', new Set(['services']))).toMatchObject({ code: 'UNKNOWN_ROUTE' });
    expect(resolve('/servicesx/api/v2/stats', chains)).toMatchObject({ code: 'UNKNOWN_CHAIN' });
  });

  it('routes the services: by the template after the chain or after /services/, to the path at the service', () => {
    expect(route('/services/bens/api/v1/domains/x.eth')).toMatchObject({
      chainId: 'services',
      route: 'bens/api/v1/domains/{name}',
      service: { name: 'bens', method: 'GET' },
      cacheScope: 'svc:bens',
      validation: { ok: true, upstreamPath: '/api/v1/domains/x.eth' },
    });
    expect(route('/services/bens/api/v1/1/addresses:lookup?only_active=true&address=0xab')).toMatchObject({
      route: 'bens/api/v1/{chain_id}/addresses:lookup',
      validation: { ok: true, upstreamPath: '/api/v1/1/addresses:lookup?address=0xab&only_active=true' },
    });
    expect(route('/1/stats-service/api/v1/lines/newTxns?resolution=DAY&from=2020-01-01')).toMatchObject({
      chainId: '1',
      route: 'stats-service/api/v1/lines/{name}',
      service: { name: 'stats' },
      cacheScope: 'stats:1',
      validation: { ok: true, upstreamPath: '/api/v1/lines/newTxns?from=2020-01-01&resolution=DAY' },
    });
    expect(route('/1/api/v1/search?q=usdt')).toMatchObject({
      route: 'api/v1/search',
      service: { name: 'explorer' },
      validation: { ok: true, upstreamPath: '/api/v1/search?q=usdt' },
    });
    expect(route('/1/api/legacy/block/get-block-number-by-time?timestamp=1700000000&closest=before')).toMatchObject({
      route: 'api/legacy/block/get-block-number-by-time',
      validation: { ok: true, upstreamPath: '/api/legacy/block/get-block-number-by-time?closest=before&timestamp=1700000000' },
    });
    expect(route('/services/metadata/api/v1/addresses:submit')).toMatchObject({ service: { name: 'metadata', method: 'POST' } });
  });

  it("refuses a Rust service's bad value with its message, drops the names it does not read, keeps a repeated field's values", () => {
    expect(route('/services/bens/api/v1/domains:lookup?page_size=ten').validation).toEqual({
      ok: false,
      serviceMessage: 'invalid page_size: expected an integer, got "ten"',
    });
    expect(route('/services/bens/api/v1/domains:lookup?order=UP').validation).toMatchObject({ ok: false });
    expect(route('/services/bens/api/v1/domains:lookup?only_active=yes').validation).toMatchObject({ ok: false });
    expect(route('/services/bens/api/v1/domains:lookup?name=a&_=123').validation).toEqual({
      ok: true,
      upstreamPath: '/api/v1/domains:lookup?name=a',
    });
    const search = route('/services/multichain/api/v1/clusters/demo/search/tokens?q=usd&chain_id=10&chain_id=1&page_size=5');
    expect(search.validation).toEqual({
      ok: true,
      upstreamPath: '/api/v1/clusters/demo/search/tokens?chain_id=1&chain_id=10&page_size=5&q=usd',
    });
    expect(search.service?.cluster).toEqual({ route: 'search/tokens', clusterId: 'demo', q: 'usd', chainIds: ['1', '10'], pageSize: 5 });
    // An explorer's own route outside v2 refuses an unknown field, as OpenApiSpex does.
    expect(route('/1/api/legacy/block/get-block-number-by-time?closest=soon').validation).toMatchObject({
      ok: false,
      issues: [{ name: 'closest', detail: 'Invalid value for enum' }],
    });
  });

  it('rebuilds the upstream path from validated parts, lower-casing the address', () => {
    expect(upstream(`/1/api/v2/addresses/${A}/token-balances`)).toBe(`/api/v2/addresses/${a}/token-balances`);
  });

  it('knows nothing of apikey: the pipeline takes it out before (a left-over one is just an unknown field)', () => {
    expect(route(`/1/api/v2/addresses/${A}/token-balances?apikey=k1`).validation).toEqual({
      ok: false,
      issues: [{ name: 'apikey', detail: 'Unexpected field: apikey' }],
    });
  });

  it('puts query parameters in canonical order and normalises integers', () => {
    const p = upstream(`/1/api/v2/addresses/${A}/transactions?order=desc&sort=value&filter=to&items_count=007&block_number=12&index=3`);
    expect(p).toBe(`/api/v2/addresses/${a}/transactions?block_number=12&filter=to&index=3&items_count=7&order=desc&sort=value`);
    expect(upstream(`/1/api/v2/addresses/${A}/transactions?sort=value&order=desc`)).toBe(
      upstream(`/1/api/v2/addresses/${A}/transactions?order=desc&sort=value`),
    );
  });

  it('normalises integers as text, exactly, whatever their size', () => {
    expect(upstream(`/1/api/v2/addresses/${A}/transactions?block_number=999999999999999999&index=-007`)).toBe(
      `/api/v2/addresses/${a}/transactions?block_number=999999999999999999&index=-7`,
    );
    expect(issues(`/1/api/v2/addresses/${A}/transactions?items_count=-99999999999999999999`)[0]?.detail).toMatch(
      /smaller than inclusive minimum 1/,
    );
  });

  it('passes the paging keys of next_page_params back', () => {
    const q = 'block_number=19&fee=123&hash=0x' + 'ab'.repeat(32) + '&index=2&inserted_at=2024-01-02T03:04:05.123456Z&value=0';
    // Values are re-encoded: ':' and a '+' offset must survive as %3A and %2B.
    expect(upstream(`/1/api/v2/addresses/${A}/transactions?${q}`)).toBe(`/api/v2/addresses/${a}/transactions?${q.replaceAll(':', '%3A')}`);
    expect(upstream(`/1/api/v2/addresses/${A}/transactions?inserted_at=2024-01-02T03:04:05%2B02:00`)).toContain(
      'inserted_at=2024-01-02T03%3A04%3A05%2B02%3A00',
    );
  });

  it("reports a malformed address with Blockscout's own text", () => {
    expect(issues('/1/api/v2/addresses/0x123/token-balances')).toEqual([
      { name: 'address_hash_param', detail: 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{40})$/' },
    ]);
  });

  it('reports an encoded path trick as a bad address, never as a path', () => {
    expect(issues('/1/api/v2/addresses/%2e%2e%2f%2e%2e%2fadmin/token-balances')[0]?.name).toBe('address_hash_param');
    expect(issues('/1/api/v2/addresses/%zz/token-balances')[0]?.name).toBe('address_hash_param');
  });

  it('reports one entry per bad parameter', () => {
    const got = issues(
      `/1/api/v2/addresses/${A}/transactions?filter=sideways&sort=age&order=up&items_count=0&index=x&hash=0x12&value=01&inserted_at=yesterday`,
    );
    expect(got).toEqual([
      { name: 'filter', detail: 'Invalid value for enum' },
      { name: 'sort', detail: 'Invalid value for enum' },
      { name: 'order', detail: 'Invalid value for enum' },
      { name: 'items_count', detail: '0 is smaller than inclusive minimum 1' },
      { name: 'index', detail: 'Invalid integer. Got: string' },
      { name: 'inserted_at', detail: 'Invalid format. Expected :"date-time"' },
      { name: 'hash', detail: 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{64})$/' },
      { name: 'value', detail: 'Invalid format. Expected ~r/^-?([1-9][0-9]*|0)$/' },
    ]);
  });

  it('rejects unexpected query parameters on v2 routes, as Blockscout does', () => {
    expect(issues(`/1/api/v2/addresses/${A}/token-balances?page=2`)).toEqual([{ name: 'page', detail: 'Unexpected field: page' }]);
    expect(issues(`/1/api/v2/addresses/${A}/transactions?chainid=1&x=`)).toEqual([
      { name: 'chainid', detail: 'Unexpected field: chainid' },
      { name: 'x', detail: 'Unexpected field: x' },
    ]);
  });

  it('requires sort and order together', () => {
    expect(issues(`/1/api/v2/addresses/${A}/transactions?sort=fee`)).toEqual([
      { name: 'order', detail: 'Missing field: order (sort and order go together)' },
    ]);
    expect(issues(`/1/api/v2/addresses/${A}/transactions?order=asc`)[0]?.name).toBe('sort');
  });
});

describe('legacy route resolution', () => {
  const C = '0xB7D311E2EB55F2F68A9440DA38E7989210B9A05E';

  it('matches module and action case-insensitively and forwards the canonical spelling', () => {
    expect(route(`/1/api?MODULE=token`.replace('MODULE', 'module') + `&action=GETTOKEN&contractaddress=${C}`).route).toBe(
      'legacy.getToken',
    );
    expect(upstream(`/1/api?module=Token&action=gettoken&contractaddress=${C}`)).toBe(
      `/api?module=token&action=getToken&contractaddress=${C.toLowerCase()}`,
    );
  });

  it('drops parameters it does not know, as Etherscan-style clients add their own', () => {
    expect(upstream(`/1/api/?module=token&action=getTokenHolders&contractaddress=${C}&chainid=1&sort=asc&page=2&offset=10`)).toBe(
      `/api?module=token&action=getTokenHolders&contractaddress=${C.toLowerCase()}&offset=10&page=2`,
    );
  });

  it('forwards one request for values the controller ignores and for none: one cache key', () => {
    // etherscan-api 12's defaults for txlist: startblock=0, endblock=latest, page=1, offset=100, sort=asc.
    const sent = (q: string) => upstream(`/1/api?module=account&action=txlist&address=${A}${q}`);
    const canonical = `/api?module=account&action=txlist&address=${a}&offset=100&page=1&sort=asc&startblock=0`;
    expect(sent('&startblock=0&endblock=latest&page=1&offset=100&sort=asc&chainid=1')).toBe(canonical);
    expect(sent('&sort=asc&offset=0100&page=01&startblock=00')).toBe(canonical);
    expect(sent('&startblock=0&endblock=pending&page=1&offset=100&sort=asc&filterby=any')).toBe(canonical);
    expect(upstream(`/v2/api?chainid=1&module=account&action=tokennfttx&address=${A}&endblock=latest`)).toBe(
      `/api?module=account&action=tokennfttx&address=${a}`,
    );
  });

  it('forwards chainid of bridgedTokenList as the chain_ids the instance reads', () => {
    expect(upstream('/100/api?module=token&action=bridgedTokenList&chainid=1')).toBe(
      '/api?module=token&action=bridgedTokenList&chain_ids=1',
    );
  });

  it("answers parameter errors with Blockscout's texts", () => {
    expect(legacyMessage('/1/api?module=token&action=getToken')).toBe('Query parameter contract address is required');
    expect(legacyMessage('/1/api?module=token&action=getToken&contractaddress=badhash')).toBe('Invalid contract address hash');
    expect(legacyMessage(`/1/api?module=token&action=getTokenHolders&contractaddress=${C}&page=1`)).toMatch(/page.*offset/);
    expect(legacyMessage(`/1/api?module=token&action=getTokenHolders&contractaddress=${C}&page=-1&offset=2`)).toMatch(/Invalid page/);
    expect(legacyMessage('/1/api?module=token&action=bridgedTokenList&chainid=x')).toMatch(/Invalid chainid/);
  });

  it('refuses a missing or unknown module or action before the key step', () => {
    expect(resolve('/1/api?module=token', chains)).toEqual({ kind: 'refusal', code: 'LEGACY_NO_MODULE_ACTION', legacy: true });
    expect(resolve('/1/api?module=nosuchmodule&action=balance', chains)).toMatchObject({ code: 'LEGACY_UNKNOWN_MODULE' });
    expect(resolve('/1/api?module=token&action=tokentx', chains)).toMatchObject({ code: 'LEGACY_UNKNOWN_ACTION' });
  });
});

describe('parseQuery', () => {
  it('decodes form encoding and keeps the last of repeated names', () => {
    const q = parseQuery('a=1&b=x+y&a=2&c=%41&empty');
    expect(Object.fromEntries(q.params)).toEqual({ a: '2', b: 'x y', c: 'A', empty: '' });
  });

  it('reports malformed percent-encoding', () => {
    expect(parseQuery('a=%E0%A4%A').malformed).toEqual(['a']);
  });
});

describe('Resolver memo', () => {
  const config = { costs: costsSchema.parse({ routes: { 'token-balances': 7 } }), cache: cacheSchema.parse({}) };

  it('memoises a URL from its second request on, with the same answer as the first', () => {
    const r = new Resolver(chains, config);
    const url = `/1/api/v2/addresses/${A}/token-balances`;
    const first = r.resolve(url);
    const second = r.resolve(url);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect(r.resolve(url)).toBe(second);
    expect(second).toMatchObject({ cost: 7, ttlSeconds: 15, cacheKey: `1 /api/v2/addresses/${a}/token-balances ` });
    expect(r.resolve(`${url}?x=1`)).toMatchObject({ cost: 0, cacheKey: '' });
  });

  it('keeps nothing for URLs requested once (misses, each a new address)', () => {
    const url = (i: number) => `/1/api/v2/addresses/0x${i.toString(16).padStart(40, '0')}/token-balances`;
    const fresh = new Resolver(chains, config);
    // Memoised at the first request: only the doorkeeper's false positives (below 2 %).
    let kept = 0;
    for (let i = 0; i < 1000; i++) {
      const once = fresh.resolve(url(i));
      if (fresh.resolve(url(i)) === once) kept++;
    }
    expect(kept).toBeLessThan(20);
  });
});

describe('SeenOnce (the memo doorkeeper)', () => {
  it('says no the first time and yes the second, for any string', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 60 }), { maxLength: 200 }), (strings) => {
        const d = new SeenOnce();
        for (const s of strings) d.seen(s);
        expect(strings.every((s) => d.seen(s))).toBe(true);
      }),
    );
  });

  it('keeps false positives below 2 % up to its clearing, and forgets after it', () => {
    const d = new SeenOnce(12); // 4,096 bits, cleared after 256 additions
    let falsePositives = 0;
    for (let i = 0; i < 256; i++) if (d.seen(`/1/api/v2/blocks/${i}`)) falsePositives++;
    expect(falsePositives).toBeLessThanOrEqual(5);
    const probes = 10_000;
    let yes = 0;
    for (let i = 0; i < probes; i++) if (d.seen(`/other/${i}`)) yes++;
    // Strings never added: yes only by a false positive (the bits are cleared every 256 additions).
    expect(yes / probes).toBeLessThan(0.02);
    expect(d.seen('/1/api/v2/blocks/0')).toBe(false);
  });
});

describe('inserted_at (a transactions paging key)', () => {
  const issue = (value: string) => {
    const r = resolve(`/1/api/v2/addresses/${A}/transactions?inserted_at=${encodeURIComponent(value)}`, chains);
    return r.kind === 'route' && !r.validation.ok && 'issues' in r.validation ? r.validation.issues : [];
  };
  it('takes a real instant, and refuses a day, an hour or a date that does not exist', () => {
    expect(upstream(`/1/api/v2/addresses/${A}/transactions?inserted_at=2024-02-29T12:00:00.000000Z`)).toContain('inserted_at=');
    for (const bad of [
      '2024-02-30T12:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-05-01T25:00:00Z',
      '0000-00-00T00:00:00Z',
      '2024-13-01T00:00:00Z',
    ]) {
      expect(issue(bad), bad).toEqual([{ name: 'inserted_at', detail: 'Invalid format. Expected :"date-time"' }]);
    }
  });
});
