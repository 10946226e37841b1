import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../src/config/load.js';
import { hashKey } from '../../src/auth/keys.js';

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
    expect(c.server).toEqual({ host: '0.0.0.0', port: 8080, watchConfig: false, shutdownTimeoutMs: 10_000 });
    expect(c.metrics).toEqual({ enabled: true, host: '127.0.0.1' });
    expect(c.health).toEqual({ probeIntervalMs: 10_000, probeTimeoutMs: 2_000 });
    expect(c.redis).toBeUndefined();
    expect(c.chains['1']).toEqual({ name: 'Ethereum', upstreams: ['http://127.0.0.1:1'], timeoutMs: 10_000 });
    expect(c.plans.free).toEqual({ rps: 5, credits: 100, period: 'daily' });
    expect(c.keys[0]).toMatchObject({ status: 'active' });
    expect(c.costs).toEqual({ default: 20, routes: {} });
    expect(c.log).toEqual({ level: 'info', requests: true });
    expect(c.cache).toEqual({
      maxBytes: 134_217_728,
      ttlSeconds: { 'token-balances': 15, transactions: 5, legacy: 30 },
      staleSeconds: 60,
    });
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

  it('says what is wrong with a chain id or plan name', () => {
    const text = 'chains:\n  "bad id!": { name: X, upstreams: [http://a] }\nplans: { "free plan": { rps: 1, credits: 1 } }\n';
    expect(problems(text)).toEqual([
      'test.yaml:2: chains.bad id!: invalid name: expected a chain id of letters, digits, _ or -',
      'test.yaml:3: plans.free plan: invalid name: expected a plan name of letters, digits, _ . or -',
    ]);
    expect(problems('chains: {}\nplans: {}\n')).toEqual(['test.yaml:1: chains: expected at least one chain']);
  });

  it('keeps the default TTL of routes that cache.ttlSeconds does not list', () => {
    const c = parseConfig(`${MINIMAL}\ncache: { ttlSeconds: { legacy: 10, legacy.getToken: 60 } }\n`, 't', {});
    expect(c.cache.ttlSeconds).toEqual({ 'token-balances': 15, transactions: 5, legacy: 10, 'legacy.getToken': 60 });
  });

  it('refuses a variable that is not set and has no default', () => {
    expect(problems(MINIMAL.replace('secret', '${DEMO_API_KEY}'))[0]).toMatch(/^test\.yaml:7: environment variable DEMO_API_KEY is not set/);
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
