import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../src/config/load.js';
import { hashKey } from '../../src/auth/digest.js';

const MINIMAL = `
chains:
  "1": { name: Ethereum, upstreams: [http://127.0.0.1:1] }
plans:
  free: { rps: 5, credits: 100 }
keys:
  - { name: demo, key: secret, plan: free }
`;

function problems(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(text, 'test.yaml', env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('configuration', () => {
  it('fills in every default the contract names', () => {
    const c = parseConfig(MINIMAL, 'test.yaml', {});
    expect(c.server).toEqual({
      host: '0.0.0.0',
      port: 8080,
      watchConfig: false,
      shutdownTimeoutMs: 10_000,
      workers: 1,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      cors: { origins: ['*'], maxAgeSeconds: 600 },
      trustProxy: false,
    });
    expect(c.metrics).toEqual({ enabled: true, host: '127.0.0.1', perKey: false });
    expect(c.health).toEqual({ probeIntervalMs: 10_000, probeTimeoutMs: 2_000 });
    expect(c.redis).toBeUndefined();
    expect(c.chains['1']).toEqual({
      name: 'Ethereum',
      upstreams: ['http://127.0.0.1:1'],
      timeoutMs: 10_000,
      maxResponseBytes: 8 * 1024 * 1024,
      head: { pollSeconds: 5 },
      finality: {},
      // Contract section 10: failover on by default.
      failover: { hedgeAfterMs: 'auto', hedgeMaxPercent: 10, eject: { failures: 5, seconds: 30 } },
    });
    expect(c.plans.free).toEqual({ rps: 5, credits: 100, period: 'daily' });
    expect(c.keys[0]).toMatchObject({ status: 'active' });
    expect(c.costs).toEqual({ default: 20, routes: {} });
    expect(c.log).toEqual({ level: 'info', requests: true });
    // No TTL listed: every route has its family's default (routes/table.ts, test/unit/cache.test.ts).
    expect(c.cache).toEqual({ maxBytes: 134_217_728, ttlSeconds: {}, staleSeconds: 60, finalTtlSeconds: 86_400 });
  });

  it('fills in redis defaults', () => {
    const c = parseConfig(`${MINIMAL}\nredis: { url: "redis://127.0.0.1:6379/0" }\n`, 't', {});
    expect(c.redis).toMatchObject({ keyPrefix: 'egw:', onError: 'open' });
  });

  it('substitutes the environment before parsing', () => {
    const c = parseConfig(MINIMAL.replace('secret', '${K}').replace('rps: 5', 'rps: ${RPS:-7}'), 't', { K: 'from-env' });
    expect(c.keys[0]?.key).toBe('from-env');
    expect(c.plans.free?.rps).toBe(7);
  });

  it('names the file, the line and the key path of each problem', () => {
    expect(problems(MINIMAL.replace('rps: 5', 'rps: 0'))).toEqual(['test.yaml:5: plans.free.rps: expected a positive integer']);
  });

  it('metrics.perKey: off unless set, a boolean (issue 25, item 10)', () => {
    expect(parseConfig(`${MINIMAL}\nmetrics: { port: 9090 }\n`, 't', {}).metrics.perKey).toBe(false);
    expect(parseConfig(`${MINIMAL}\nmetrics: { perKey: true }\n`, 't', {}).metrics.perKey).toBe(true);
    expect(problems(`${MINIMAL}\nmetrics: { perKey: yes please }\n`)).toEqual(['test.yaml:9: metrics.perKey: expected true or false']);
  });

  it('usage.hourlyRetentionDays: 35 days unless set, a positive integer (issue 25, item 5)', () => {
    expect(parseConfig(MINIMAL, 't', {}).usage).toEqual({ enabled: true, retentionDays: 400, hourlyRetentionDays: 35 });
    expect(parseConfig(`${MINIMAL}\nusage: { retentionDays: 30 }\n`, 't', {}).usage.hourlyRetentionDays).toBe(35);
    expect(parseConfig(`${MINIMAL}\nusage: { hourlyRetentionDays: 7 }\n`, 't', {}).usage).toMatchObject({
      retentionDays: 400,
      hourlyRetentionDays: 7,
    });
    expect(problems(`${MINIMAL}\nusage: { hourlyRetentionDays: 0 }\n`)).toEqual([
      expect.stringMatching(/^test\.yaml:9: usage\.hourlyRetentionDays: /),
    ]);
  });

  it('rejects unknown keys anywhere', () => {
    expect(problems(`${MINIMAL}\nlog: { level: info, colour: true }\n`)).toEqual(['test.yaml:9: log.colour: unknown key']);
  });

  it('lists every problem at once, cross-references included', () => {
    const text = `
server: { port: 70000 }
chains:
  "1": { name: Eth, upstreams: [] }
plans:
  free: { rps: 1, credits: -1, period: weekly }
keys:
  - { name: a, key: k, sha256: ${'a'.repeat(64)}, plan: free }
  - { name: a, key: j, plan: gold, chains: ["2"] }
`;
    const p = problems(text);
    expect(p).toEqual(
      expect.arrayContaining([
        expect.stringContaining('server.port: expected a port number'),
        expect.stringContaining('chains.1.upstreams: expected at least one URL'),
        expect.stringContaining('plans.free.credits: expected a non-negative integer'),
        expect.stringContaining('plans.free.period: expected daily or monthly'),
        expect.stringContaining('keys[0]: expected exactly one of key or sha256'),
        expect.stringContaining('keys[1].plan: unknown plan "gold"'),
        expect.stringContaining('keys[1].name: duplicate key name "a"'),
        expect.stringContaining('keys[1].chains[0]: unknown chain "2"'),
      ]),
    );
    expect(p).toHaveLength(8);
  });

  it('takes credentials in an upstream URL, refuses a query or fragment, and says why', () => {
    const chain = (url: string) => `chains:\n  "1": { name: X, upstreams: ["${url}"] }\nplans: { free: { rps: 1, credits: 1 } }\n`;
    expect(parseConfig(chain('https://reader:s%40cret@explorer.example.org/eth'), 'test.yaml', {}).chains['1']?.upstreams).toHaveLength(1);
    expect(problems(chain('https://explorer.example.org/?apikey=abc'))).toEqual([
      'test.yaml:2: chains.1.upstreams[0]: expected a base URL without ?query or #fragment (the upstream key goes in upstreamApiKey)',
    ]);
    expect(problems(chain('https://explorer.example.org/#x'))).toHaveLength(1);
    expect(problems(chain('https://re%zzader:x@explorer.example.org/'))).toEqual([
      'test.yaml:2: chains.1.upstreams[0]: expected user:password@ to be percent-encoded',
    ]);
  });

  it('takes server.trustProxy as true, false or a list of proxy addresses, CIDR ranges and proxy-addr names, and says what is wrong', () => {
    const server = (v: string) => `${MINIMAL}server: { trustProxy: ${v} }\n`;
    expect(parseConfig(server('true'), 't', {}).server.trustProxy).toBe(true);
    expect(parseConfig(server('[10.0.0.0/8, "fd00::/8", 127.0.0.1, loopback]'), 't', {}).server.trustProxy).toHaveLength(4);
    for (const bad of ['[proxy.example.org]', '[10.0.0.0/33]', '[10.0.0.1/8/1]', '[]', '2']) expect(problems(server(bad))).toHaveLength(1);
    expect(problems(server('[10.0.0.0/33]'))[0]).toContain('expected an IP address, a CIDR range, loopback, linklocal or uniquelocal');
  });

  it('says what is wrong with a chain id or plan name', () => {
    const text = 'chains:\n  "bad id!": { name: X, upstreams: [http://a] }\nplans: { "free plan": { rps: 1, credits: 1 } }\n';
    expect(problems(text)).toEqual([
      'test.yaml:2: chains.bad id!: invalid name: expected a chain id of letters, digits, _ or -',
      'test.yaml:3: plans.free plan: invalid name: expected a plan name of letters, digits, _ . or -',
    ]);
    expect(problems('chains: {}\nplans: {}\n')).toEqual(['test.yaml:1: chains: expected at least one chain']);
  });

  it('takes any route of the table by name in costs.routes and cache.ttlSeconds, and `legacy` for TTLs', () => {
    const text = `${MINIMAL}
costs: { routes: { "transactions/{transaction_hash_param}/logs": 35, api/v2/transactions: 5, legacy.account.balance: 2 } }
cache: { ttlSeconds: { legacy: 10, legacy.getToken: 60, "blocks/{block_hash_or_number_param}": 12 } }
`;
    const c = parseConfig(text, 't', {});
    expect(c.costs.routes).toEqual({
      'transactions/{transaction_hash_param}/logs': 35,
      'api/v2/transactions': 5,
      'legacy.account.balance': 2,
    });
    expect(c.cache.ttlSeconds).toEqual({ legacy: 10, 'legacy.getToken': 60, 'blocks/{block_hash_or_number_param}': 12 });
  });

  it('refuses an unknown route name, naming the closest ones', () => {
    const text = `${MINIMAL}\ncosts: { routes: { "tokens/{address}/holder": 5 } }\ncache: { ttlSeconds: { legacy.getTokn: 1, legacy: 3 } }\n`;
    expect(problems(text)).toEqual([
      'test.yaml:9: costs.routes.tokens/{address}/holder: unknown route "tokens/{address}/holder"; did you mean "tokens/{address_hash_param}/holders", "tokens/{address_hash_param}/counters", "tokens/{address_hash_param}/holders/csv"?',
      'test.yaml:10: cache.ttlSeconds.legacy.getTokn: unknown route "legacy.getTokn"; did you mean "legacy.getToken", "legacy.getTokenHolders", "legacy.logs.getLogs"?',
    ]);
  });

  it('refuses more than one worker without redis, saying why', () => {
    for (const workers of ['2', 'auto']) {
      expect(problems(`${MINIMAL}\nserver: { workers: ${workers} }\n`)).toEqual([
        'test.yaml:9: server.workers: more than one worker needs redis: balances, rate windows and run-time keys kept in one process cannot be shared with the others',
      ]);
    }
    expect(parseConfig(`${MINIMAL}\nserver: { workers: 2 }\nredis: { url: "redis://127.0.0.1:6379" }\n`, 't', {}).server.workers).toBe(2);
    expect(problems(`${MINIMAL}\nserver: { workers: 0 }\n`)[0]).toMatch(/server\.workers: expected a positive integer or auto/);
  });

  it('refuses the chain ids the Etherscan-style paths use', () => {
    expect(problems(MINIMAL.replace('"1":', 'api:'))[0]).toMatch(/chains\.api: invalid name: expected a chain id other than api or v2/);
  });

  it('refuses a variable that is not set and has no default', () => {
    expect(problems(MINIMAL.replace('secret', '${DEMO_API_KEY}'))[0]).toMatch(
      /^test\.yaml:7: environment variable DEMO_API_KEY is not set/,
    );
  });

  it('refuses the same key listed twice, in clear and as a digest', () => {
    const text = `${MINIMAL}  - { name: other, sha256: ${hashKey('secret')}, plan: free }\n`;
    expect(problems(text)).toEqual(['test.yaml:8: keys[1]: the same key as "demo"']);
  });

  it('reports YAML syntax errors with their line', () => {
    expect(problems('chains: [\n')[0]).toMatch(/^test\.yaml:\d+: YAML: /);
  });

  it('reports a file that cannot be read', () => {
    expect(() => loadConfig('/nonexistent/gateway.yaml')).toThrow(ConfigError);
  });

  it('treats an empty upstreamApiKey as not set', () => {
    const c = parseConfig(MINIMAL.replace('upstreams:', 'upstreamApiKey: ${UK:-}, upstreams:'), 't', {});
    expect(c.chains['1']?.upstreamApiKey).toBeUndefined();
  });

  it('accepts every YAML file the repository ships', () => {
    const dir = join(import.meta.dirname, '../../config');
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(() => loadConfig(join(dir, f), {}), f).not.toThrow();
  });
});

describe('services and clusters (contract section 9)', () => {
  const WITH_SERVICES = `
chains:
  "1": { name: Ethereum, upstreams: [http://127.0.0.1:1], stats: { upstreams: [http://127.0.0.1:2] } }
  "10": { name: Optimism, upstreams: [http://127.0.0.1:3] }
plans:
  free: { rps: 5, credits: 100 }
services:
  bens: { upstreams: [http://127.0.0.1:4], timeoutMs: 2000 }
  metadata: { upstreams: [http://127.0.0.1:5] }
clusters:
  demo: { chains: ["1", "10"] }
`;

  it('reads a chain stats service, the shared services and the clusters, with the upstream defaults', () => {
    const c = parseConfig(WITH_SERVICES, 'test.yaml', {});
    expect(c.chains['1']?.stats).toEqual({
      upstreams: ['http://127.0.0.1:2'],
      timeoutMs: 10_000,
      maxResponseBytes: 8 * 1024 * 1024,
      failover: { hedgeAfterMs: 'auto', hedgeMaxPercent: 10, eject: { failures: 5, seconds: 30 } },
    });
    expect(c.chains['10']?.stats).toBeUndefined();
    expect(c.services.bens).toMatchObject({ upstreams: ['http://127.0.0.1:4'], timeoutMs: 2000 });
    expect(c.services.multichain).toBeUndefined();
    expect(c.clusters).toEqual({ demo: { chains: ['1', '10'], timeoutMs: 3000 } });
    expect(parseConfig(MINIMAL, 'test.yaml', {})).toMatchObject({ services: {}, clusters: {} });
  });

  it('refuses a cluster of unknown or repeated chains, an empty one, and a service without upstreams', () => {
    expect(problems(`${MINIMAL}clusters:\n  c: { chains: ["1", "2", "1"] }\n`)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('clusters.c.chains[1]: unknown chain "2"'),
        expect.stringContaining('clusters.c.chains[2]: chain "1" is listed twice'),
      ]),
    );
    expect(problems(`${MINIMAL}clusters:\n  c: { chains: [] }\n`)).toEqual([expect.stringContaining('expected at least one chain')]);
    expect(problems(`${MINIMAL}services:\n  bens: { upstreams: [] }\n`)).toEqual([expect.stringContaining('services.bens.upstreams')]);
    expect(problems(`${MINIMAL}services:\n  ens: { upstreams: [http://127.0.0.1:4] }\n`)).toEqual([expect.stringContaining('ens')]);
  });
});
