// server.workers: several worker processes on one port, sharing one Redis. Credits stay exact
// across workers, /metrics answers for the whole gateway, SIGHUP reloads every worker, a worker
// that dies is replaced (and logged), SIGTERM drains them all.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, closedPort } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const redis = connect();
const prefix = testPrefix('workers');
let explorer: FixtureExplorer;
let gw: GatewayProcess;
let opsPort: number;

const config = (rps: number) => ({
  server: { workers: 2 },
  redis: { url: REDIS_URL, keyPrefix: prefix },
  chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
  plans: { plenty: { rps, credits: 100_000_000 }, tight: { rps: 100_000, credits: 1_000 } },
  keys: [
    { name: 'plenty', key: 'workers-plenty-key', plan: 'plenty' },
    { name: 'tight', key: 'workers-tight-key', plan: 'tight' },
  ],
  metrics: { host: '127.0.0.1', port: opsPort },
  log: { level: 'info', requests: false },
  cache: { ttlSeconds: { 'token-balances': 60 } },
});

/** One request on a connection of its own (no keep-alive), so the primary hands each to a worker in turn. */
function get(
  key: string,
  path = BALANCES,
  port = gw.port,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${key}`, connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
/** The request-id prefix is random per process: which worker answered. */
const worker = (headers: Record<string, string | string[] | undefined>) => String(headers['x-request-id']).split('-')[0];
const workerPids = () => [...gw.output().matchAll(/"pid":(\d+),[^\n]*"msg":"listening"/g)].map((m) => Number(m[1]));

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  opsPort = await closedPort();
  gw = await startGatewayProcess(config(1_000_000), 30_000);
  await until(() => workerPids().length === 2, 'both workers to listen');
}, 40_000);
afterAll(async () => {
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('two workers on one port', () => {
  it('share the connections', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => get('workers-plenty-key')));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => worker(a.headers))).size).toBe(2);
  });

  it('spend exactly the balance together, under hundreds of concurrent requests', async () => {
    const statuses = await Promise.all(Array.from({ length: 300 }, () => get('workers-tight-key').then((a) => a.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(50); // 1,000 credits / 20
    expect(statuses.filter((s) => s === 402)).toHaveLength(250);
  });

  it('answer /metrics for the whole gateway, whichever worker is asked', async () => {
    // The workers share the operations port as they share the public one.
    const scrape = () => get('x', '/metrics', opsPort);
    const before = await scrape();
    expect(before.status).toBe(200);
    const count = (text: string) => valueOf(parsePrometheus(text), 'egw_requests_total', { route: 'token-balances' });
    const start = count(before.body);
    await Promise.all(Array.from({ length: 30 }, () => get('workers-plenty-key')));
    const after = await Promise.all(Array.from({ length: 4 }, scrape));
    // Four scrapes, whichever worker answers: each sees all 30, the two workers' counts summed.
    for (const a of after) expect(count(a.body) - start).toBe(30);
  });

  it('reload every worker on SIGHUP', async () => {
    gw.writeConfig(config(777_777));
    gw.child.kill('SIGHUP');
    await until(async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, () => get('workers-plenty-key')));
      return answers.every((a) => a.headers['x-ratelimit-limit'] === '777777');
    }, 'every worker to take the new plan');
  });

  it('replace a worker that dies, and say so', async () => {
    const victim = workerPids()[0] ?? 0;
    expect(victim).toBeGreaterThan(0);
    process.kill(victim, 'SIGKILL');
    await until(() => gw.output().includes('worker died; starting another'), 'the primary to log the death');
    await until(() => workerPids().length === 3, 'a new worker to listen');
    const answers = await Promise.all(Array.from({ length: 10 }, () => get('workers-plenty-key')));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => worker(a.headers))).size).toBe(2);
  });

  it('drain every worker on SIGTERM and exit 0', async () => {
    expect(await gw.stop('SIGTERM')).toBe(0);
    expect(gw.output()).toContain('shutting down: every worker finishes its requests in flight');
  });
});
