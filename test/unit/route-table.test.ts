import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { LEGACY_FILE, ROOT, SERVICE_FILE, V2_FILE, writeRouteFiles } from '../../scripts/generate-routes.js';
import {
  closestRouteNames,
  routeByName,
  ROUTE_NAMES,
  ROUTE_TABLE,
  ttlFamilyOf,
  type LegacyRouteSpec,
  type RouteSpec,
  type ServiceRouteSpec,
  type V2RouteSpec,
} from '../../src/routes/table.js';
import { costsSchema } from '../../src/config/schema.js';
import { costOf } from '../../src/routes/settings.js';

type Doc = { paths: Record<string, Record<string, { operationId?: string }>> };
const pro = JSON.parse(await readFile(path.join(ROOT, 'spec/pro-api-0.5.0.json'), 'utf8')) as Doc;
const rpc = parseYaml(await readFile(path.join(ROOT, 'spec/blockscout-rpc-api-1.0.0.yaml'), 'utf8')) as Doc;

const v2 = ROUTE_TABLE.filter((r): r is V2RouteSpec => r.kind === 'v2');
const legacy = ROUTE_TABLE.filter((r): r is LegacyRouteSpec => r.kind === 'legacy');
const named = (name: string): RouteSpec => {
  const r = routeByName(name);
  if (!r) throw new Error(`no route ${name}`);
  return r;
};

describe('the route table, against the documents themselves', () => {
  it('has every GET operation under /{chain_id}/api/v2/ of the PRO API document, and nothing else', () => {
    const expected = Object.entries(pro.paths)
      .filter(([p, item]) => p.startsWith('/{chain_id}/api/v2/') && item.get)
      .map(([p, item]) => [p.slice('/{chain_id}'.length), item.get?.operationId]);
    expect(expected).toHaveLength(153);
    expect(v2.map((r) => [r.template, r.operationId]).sort()).toEqual(expected.sort());
  });

  it('has every GET action of the RPC document but the contract verification flow, and nothing else', () => {
    const verification = [
      'verify',
      'verifysourcecode',
      'verify_via_sourcify',
      'verify_vyper_contract',
      'verifyproxycontract',
      'checkverifystatus',
      'checkproxyverification',
    ];
    const actions = Object.entries(rpc.paths)
      .filter(([, item]) => item.get)
      .map(([p]) => new URLSearchParams(p.slice(2)))
      .map((q) => `${q.get('module')}.${q.get('action')}`);
    expect(actions).toHaveLength(42);
    const reads = actions.filter((a) => !verification.includes(a.split('.')[1] ?? ''));
    expect(reads).toHaveLength(35);
    expect(legacy.map((r) => `${r.module}.${r.action}`).sort()).toEqual(reads.sort());
    expect(Object.keys(rpc.paths)).toContain('/eth-rpc');
    // The verification flow is served as routes of its own: five writes, two status reads.
    const verify = ROUTE_TABLE.filter((r) => r.kind === 'verify');
    expect(verify.map((r) => r.action).sort()).toEqual([...verification].sort());
    expect(verify.filter((r) => !r.write).map((r) => r.action)).toEqual(['checkverifystatus', 'checkproxyverification']);
  });

  it('keeps chain_id, module and action out of the parameters, and resolves every $ref', () => {
    for (const r of v2) expect(r.pathParams.map((p) => p.name)).not.toContain('chain_id');
    for (const r of legacy) expect(r.params.map((p) => p.name)).not.toContain('module');
    for (const r of legacy) expect(r.params.map((p) => p.name)).not.toContain('action');
    expect(named('legacy.account.getminedblocks')).toMatchObject({ params: [{ name: 'address' }, { name: 'page' }, { name: 'offset' }] });
    expect(JSON.stringify(ROUTE_TABLE)).not.toContain('$ref');
    expect(named('blocks/{block_hash_or_number_param}')).toMatchObject({
      segments: ['api', 'v2', 'blocks', { param: 'block_hash_or_number_param' }],
      pathParams: [
        {
          name: 'block_hash_or_number_param',
          required: true,
          schema: {
            anyOf: [
              { type: 'integer', minimum: '0' },
              { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' },
            ],
          },
        },
      ],
    });
  });

  it("keeps int64's maximum exact where the document printed a rounded double", () => {
    const index = (named('beacon/deposits') as V2RouteSpec).queryParams.find((p) => p.name === 'index');
    expect(index?.schema).toEqual({ type: 'integer', minimum: '0', maximum: '9223372036854775807' });
  });

  it('puts path parameters in template order', () => {
    const celestia = named('arbitrum/batches/da/celestia/{height}/{transaction_commitment}') as V2RouteSpec;
    expect(celestia.pathParams.map((p) => p.name)).toEqual(['height', 'transaction_commitment']);
    const instance = named('tokens/{address_hash_param}/instances/{token_id_param}/holders') as V2RouteSpec;
    expect(instance.pathParams.map((p) => p.name)).toEqual(['address_hash_param', 'token_id_param']);
  });
});

describe('the service routes, against the document', () => {
  const services = ROUTE_TABLE.filter((r): r is ServiceRouteSpec => r.kind === 'service');

  it('has every operation of the PRO API outside /{chain_id}/api/v2/, and nothing else', () => {
    const expected = Object.entries(pro.paths)
      .filter(([p]) => !p.startsWith('/{chain_id}/api/v2/'))
      .flatMap(([p, item]) => Object.entries(item).map(([m, op]) => [m.toUpperCase(), p, op.operationId]));
    expect(expected).toHaveLength(40);
    expect(services.map((r) => [r.method, r.documentPath, r.operationId]).sort()).toEqual(expected.sort());
  });

  it('names each by its template after the chain or after /services/, and says where it goes', () => {
    expect(named('stats-service/api/v1/lines/{name}')).toMatchObject({
      service: 'stats',
      documentPath: '/{chain_id}/stats-service/api/v1/lines/{name}',
    });
    expect(named('bens/api/v1/domains/{name}')).toMatchObject({ service: 'bens', method: 'GET' });
    expect(named('bens/api/v1/{chain_id}/addresses:batch-resolve-names')).toMatchObject({ service: 'bens', method: 'POST' });
    expect(named('metadata/api/v1/addresses:submit')).toMatchObject({ service: 'metadata', method: 'POST', defaultTtlSeconds: 0 });
    expect(named('multichain/api/v1/clusters/{cluster_id}/search/tokens')).toMatchObject({ service: 'multichain' });
    expect(named('api/v1/search')).toMatchObject({ service: 'explorer' });
    expect(named('api/legacy/block/get-block-number-by-time')).toMatchObject({ service: 'explorer' });
    for (const r of services) {
      const prefix = r.documentPath.startsWith('/{chain_id}/') ? '/{chain_id}/' : '/services/';
      expect(`${prefix}${r.name}`).toBe(r.documentPath);
    }
  });

  it('gives each GET a TTL family that fits it, and never keeps a POST', () => {
    expect(ttlFamilyOf('stats-service/api/v1/lines/{name}')).toBe('stats-lines');
    expect(named('stats-service/api/v1/lines/{name}')).toMatchObject({ defaultTtlSeconds: 300 });
    expect(ttlFamilyOf('bens/api/v1/protocols')).toBe('service-catalogue');
    expect(named('bens/api/v1/protocols')).toMatchObject({ defaultTtlSeconds: 3600 });
    expect(ttlFamilyOf('stats-service/api/v1/counters')).toBe('stats-counters');
    expect(ttlFamilyOf('api/v1/search')).toBe('explorer-search');
    expect(ttlFamilyOf('multichain/api/v1/search:quick')).toBe('cluster-search');
    for (const r of services) {
      if (r.method === 'POST') expect(r.defaultTtlSeconds, r.name).toBe(0);
      else expect(r.defaultTtlSeconds, r.name).toBeGreaterThan(0);
    }
  });
});

describe('route names', () => {
  it('are unique', () => {
    expect(new Set(ROUTE_NAMES).size).toBe(ROUTE_NAMES.length);
    // v2 GETs, legacy reads, the 16 JSON-RPC methods, 16 proxy actions, 7 verification actions,
    // the 40 operations outside v2.
    expect(ROUTE_NAMES).toHaveLength(153 + 35 + 16 + 16 + 7 + 40);
    expect(ROUTE_NAMES).toContain('rpc.eth_getLogs');
    expect(ROUTE_NAMES).toContain('legacy.proxy.eth_call');
    expect(ROUTE_NAMES).toContain('legacy.contract.verifysourcecode');
  });

  it('are the template after /api/v2/ with a trailing slash dropped', () => {
    expect(named('transactions/{transaction_hash_param}/logs')).toMatchObject({
      template: '/api/v2/transactions/{transaction_hash_param}/logs',
    });
    expect(named('tokens')).toMatchObject({ template: '/api/v2/tokens/' });
    expect(named('smart-contracts')).toMatchObject({ template: '/api/v2/smart-contracts/' });
    for (const name of ROUTE_NAMES) expect(name).not.toMatch(/^\/|\/$/);
  });

  it("keep today's names for the two address routes; the global transaction list keeps its api/v2/ prefix", () => {
    expect(named('token-balances')).toMatchObject({ template: '/api/v2/addresses/{address_hash_param}/token-balances' });
    expect(named('transactions')).toMatchObject({ template: '/api/v2/addresses/{address_hash_param}/transactions' });
    expect(named('api/v2/transactions')).toMatchObject({ template: '/api/v2/transactions' });
    expect(routeByName('addresses/{address_hash_param}/token-balances')).toBeUndefined();
  });

  it("are legacy.<module>.<action>, but today's three token actions keep theirs", () => {
    expect(named('legacy.getToken')).toMatchObject({ module: 'token', action: 'getToken' });
    expect(named('legacy.getTokenHolders')).toMatchObject({ module: 'token', action: 'getTokenHolders' });
    expect(named('legacy.bridgedTokenList')).toMatchObject({ module: 'token', action: 'bridgedTokenList' });
    expect(named('legacy.logs.getLogs')).toMatchObject({ module: 'logs', action: 'getLogs' });
    expect(named('legacy.account.eth_get_balance')).toMatchObject({ module: 'account', action: 'eth_get_balance' });
    expect(routeByName('legacy.token.getToken')).toBeUndefined();
  });

  it('suggest the closest names for a misspelt one', () => {
    expect(closestRouteNames('tokens/{address}/holder')[0]).toBe('tokens/{address_hash_param}/holders');
    expect(closestRouteNames('transaction/{hash}/log', 1)).toEqual(['transactions/{transaction_hash_param}/logs']);
    expect(closestRouteNames('legacy.gettoken', 2)).toEqual(['legacy.getToken', 'legacy.getTokenHolders']);
    expect(closestRouteNames('token-balance')).toHaveLength(3);
  });
});

describe('the generated files', () => {
  it('are what the generator writes from the documents today', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'egw-routes-'));
    try {
      await writeRouteFiles(dir);
      for (const file of [V2_FILE, LEGACY_FILE, SERVICE_FILE]) {
        const fresh = await readFile(path.join(dir, file), 'utf8');
        const checkedIn = await readFile(path.join(ROOT, 'src/routes/generated', file), 'utf8');
        expect(checkedIn, `${file} is out of date: npm run generate:routes`).toBe(fresh);
        expect(fresh).toMatch(
          /^\/\/ Generated: do not edit\. `npm run generate:routes` \(scripts\/generate-routes\.ts\) writes it from\n\/\/ spec\//,
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('default costs', () => {
  it("are the PRO API's published table, 20 for everything else", () => {
    const cost = (name: string) => costOf(costsSchema.parse({}), name);
    const notDefault = Object.fromEntries(ROUTE_TABLE.filter((r) => cost(r.name) !== 20).map((r) => [r.name, cost(r.name)]));
    expect(notDefault).toEqual({
      'search/quick': 25,
      'transactions/{transaction_hash_param}/logs': 30,
      'transactions/{transaction_hash_param}/token-transfers': 30,
      'transactions/{transaction_hash_param}/state-changes': 30,
      tokens: 30,
      'tokens/{address_hash_param}/transfers': 30,
      'addresses/{address_hash_param}/token-transfers': 30,
      'addresses/{address_hash_param}/logs': 30,
      'transactions/{transaction_hash_param}/internal-transactions': 40,
      'addresses/{address_hash_param}/internal-transactions': 40,
      'transactions/{transaction_hash_param}/summary': 50,
      'transactions/{transaction_hash_param}/raw-trace': 50,
      'addresses/{address_hash_param}/coin-balance-history': 50,
    });
    expect(cost('legacy.account.txlist')).toBe(20);
    // A configured default applies to every route the table does not price.
    expect(costOf(costsSchema.parse({ default: 7 }), 'legacy.account.txlist')).toBe(7);
    expect(costOf(costsSchema.parse({ default: 7 }), 'tokens')).toBe(30);
  });
});

describe('default TTLs', () => {
  const ttl = (name: string) => {
    const spec = named(name);
    return 'defaultTtlSeconds' in spec ? spec.defaultTtlSeconds : undefined;
  };

  it('stream CSV exports and never cache them', () => {
    const streamed = ROUTE_TABLE.filter((r) => r.stream).map((r) => r.name);
    expect(streamed.sort()).toEqual(
      [
        'addresses/{address_hash_param}/celo/election-rewards/csv',
        'addresses/{address_hash_param}/internal-transactions/csv',
        'addresses/{address_hash_param}/logs/csv',
        'addresses/{address_hash_param}/token-transfers/csv',
        'addresses/{address_hash_param}/transactions/csv',
        'advanced-filters/csv',
        'tokens/{address_hash_param}/holders/csv',
        'tokens/{address_hash_param}/transfers/csv',
      ].sort(),
    );
    for (const name of streamed) expect(ttl(name)).toBe(0);
    expect(ttl('csv-exports/{uuid_param}')).toBe(0);
    expect(routeByName('csv-exports/{uuid_param}')?.stream).toBe(false);
  });

  it('give 5 s to what changes with every block', () => {
    for (const name of [
      'main-page/blocks',
      'main-page/indexing-status',
      'stats',
      'stats/charts/transactions',
      'transactions/stats',
      'blocks',
      'api/v2/transactions',
      'token-transfers',
      'internal-transactions',
      'withdrawals',
      'optimism/deposits/count',
      'arbitrum/messages/{direction}/count',
      'withdrawals/counters',
      'addresses/{address_hash_param}/counters',
      'addresses/{address_hash_param}/tabs-counters',
      'tokens/{address_hash_param}/instances/{token_id_param}/transfers-count',
      'search',
      'search/quick',
      'validators/stability',
      'validators/zilliqa/{bls_public_key}',
      'transactions',
      'addresses/{address_hash_param}',
      'addresses/{address_hash_param}/internal-transactions',
      'addresses/{address_hash_param}/logs',
      'addresses/{address_hash_param}/token-transfers',
      'tokens/{address_hash_param}/transfers',
      'blocks/{block_number_param}/countdown',
    ]) {
      expect([name, ttl(name), ttlFamilyOf(name)]).toEqual([name, 5, 'every-block']);
    }
  });

  it("keep token-balances at today's 15 s, and never share a watch list", () => {
    expect(ttl('token-balances')).toBe(15);
    expect(ttl('transactions/watchlist')).toBe(0);
    expect(ttl('main-page/transactions/watchlist')).toBe(0);
  });

  it('give 30 s to what a hash or a number addresses, 60 s to token metadata, 300 s to contract source', () => {
    for (const name of [
      'transactions/{transaction_hash_param}',
      'transactions/{transaction_hash_param}/logs',
      'transactions/{transaction_hash_param}/raw-trace',
      'blocks/{block_hash_or_number_param}',
      'blocks/{block_hash_or_number_param}/transactions',
      'blocks/optimism-batch/{batch_number_param}',
      'transactions/zksync-batch/{batch_number_param}',
      'arbitrum/batches/{batch_number}',
      'optimism/batches/{number}',
      'zksync/batches/{batch_number_param}',
    ]) {
      expect([name, ttl(name), ttlFamilyOf(name)]).toEqual([name, 30, 'by-hash-or-number']);
    }
    for (const name of [
      'tokens/{address_hash_param}',
      'tokens/{address_hash_param}/holders',
      'tokens/{address_hash_param}/instances',
      'tokens/{address_hash_param}/instances/{token_id_param}',
      'tokens/{address_hash_param}/instances/{token_id_param}/holders',
    ]) {
      expect([name, ttl(name)]).toEqual([name, 60]);
    }
    expect(ttl('smart-contracts/{address_hash_param}')).toBe(300);
    expect(ttl('smart-contracts/{address_hash_param}/audit-reports')).toBe(300);
  });

  it('give 30 s to everything else, legacy actions included', () => {
    for (const name of [
      'addresses',
      'tokens',
      'smart-contracts',
      'optimism/batches',
      'celo/epochs/{number}',
      'proxy/account-abstraction/status',
    ]) {
      expect([name, ttl(name), ttlFamilyOf(name)]).toEqual([name, 30, 'default']);
    }
    for (const r of legacy) expect(r.defaultTtlSeconds).toBe(30);
  });
});
