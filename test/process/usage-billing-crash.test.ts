// Usage equals billing after a crash (docs/operator-guide.md, "Usage equals billing"): a real gateway without
// Redis, its records and ledgers in one store (SQLite, or PostgreSQL through storage.url), or
// with Redis (its records in Redis, or in PostgreSQL), is killed with SIGKILL under concurrent
// load and started again on the same stores, three times; the
// run-time key's usage credits (GET /admin/v1/usage) then equal the credits it was charged (its
// starting balance minus `remaining` of GET /admin/v1/keys/ID), to the credit. The load mixes a
// cached route, an uncached one, JSON-RPC batches, and 502s from the explorer now and then
// (refunded: usage takes them off as the ledger gives them back). quota/memory.ts and
// usage/recorder.ts say how without Redis, quota/usage-credits.ts with it; scripts/chaos.ts
// (kill9-sqlite, kill9-redis) measures the same at a larger scale.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, closedPort } from '../support/gateway.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const CACHED = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const UNCACHED = `/1/api/v2/addresses/${ADDRESS}/transactions?items_count=5`;
const KILLS = 3;
/** Concurrent request loops of the load. */
const LOOPS = 12;
const BALANCE = 500_000_000;

let explorer: FixtureExplorer;
const dirs: string[] = [];
const schemas = testSchemas('usage_crash');
const redis = connect();
const prefixes: string[] = [];
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  await schemas.dropAll();
  for (const prefix of prefixes) await deletePrefix(redis, prefix);
  redis.disconnect();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Setup {
  cfg: Record<string, unknown>;
  api: ReturnType<typeof adminClient>;
}

async function setup(storage: Record<string, unknown>, redisSection: Record<string, unknown> = {}): Promise<Setup> {
  const adminPort = await closedPort();
  const cfg = {
    chains: { '1': { name: 'Ethereum', upstreams: [explorer.url], timeoutMs: 5_000 } },
    // Monthly, rps far above the load: no 429 and no period end mid-run.
    plans: { big: { rps: 1_000_000, credits: BALANCE, period: 'monthly' } },
    costs: { default: 20, routes: { 'token-balances': 20, transactions: 30, 'rpc.eth_blockNumber': 7, 'rpc.eth_chainId': 3 } },
    cache: { ttlSeconds: { 'token-balances': 15, transactions: 0, 'rpc.eth_blockNumber': 0, 'rpc.eth_chainId': 0 } },
    admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
    storage,
    ...redisSection,
    log: { level: 'warn', requests: false },
  };
  return { cfg, api: adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`) };
}

const rpcBody = JSON.stringify([
  { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
  { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] },
]);

/** Closed loops of requests with `secret` until `stop.done` or the gateway dies; how many were answered. */
async function load(g: GatewayProcess, secret: string, stop: { done: boolean }): Promise<number> {
  let answered = 0;
  const loop = async (n: number) => {
    for (let i = n; !stop.done; i++) {
      const which = i % 3;
      try {
        const res =
          which === 2
            ? await fetch(`${g.url}/1/json-rpc`, {
                method: 'POST',
                headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
                body: rpcBody,
              })
            : await fetch(g.url + (which === 0 ? CACHED : UNCACHED), { headers: { authorization: `Bearer ${secret}` } });
        await res.arrayBuffer();
        answered++;
      } catch {
        return; // the gateway was killed
      }
    }
  };
  await Promise.all(Array.from({ length: LOOPS }, (_, n) => loop(n)));
  return answered;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function billedAndUsage(s: Setup, id: string): Promise<{ billed: number; usage: number; requests: number; errors: number }> {
  const key = await s.api.get<{ credits: { remaining: number } }>(`/keys/${id}`);
  expect(key.status).toBe(200);
  const rows = (await s.api.get<{ items: { credits: number; requests: number; errors: number }[] }>(`/usage?key=${id}`)).body.items;
  return {
    billed: BALANCE - key.body.credits.remaining,
    usage: rows.reduce((n, r) => n + r.credits, 0),
    requests: rows.reduce((n, r) => n + r.requests, 0),
    errors: rows.reduce((n, r) => n + r.errors, 0),
  };
}

async function crashRuns(s: Setup): Promise<void> {
  let g = await startGatewayProcess(s.cfg);
  try {
    const created = await s.api.post<{ id: string; key: string }>('/keys', { name: 'crash', plan: 'big' });
    expect(created.status).toBe(201);
    const { id, key } = created.body;
    let answered = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const stop = { done: false };
      const running = load(g, key, stop);
      // 502s for a while in the middle of each run: those requests are refunded.
      await sleep(300);
      explorer.set({ failStatus: 502 });
      await sleep(150);
      explorer.reset();
      // The kill falls at a different point of the one-second write cycle each time.
      await sleep(700 + kill * 330);
      await g.stop('SIGKILL');
      stop.done = true;
      answered += await running;
      g = await startGatewayProcess(s.cfg);
    }
    expect(answered).toBeGreaterThan(100);
    // With Redis, a lease the restarted process took on its way up (none: no load) or settles
    // late would move both: read once the two stay put.
    let after = await billedAndUsage(s, id);
    await until(async () => {
      const next = await billedAndUsage(s, id);
      const same = next.billed === after.billed && next.usage === after.usage;
      after = next;
      return same;
    }, 'billing and usage to stay put');
    expect(after.billed).toBeGreaterThan(0);
    expect(after.errors).toBeGreaterThan(0);
    expect(after.usage).toBe(after.billed);
    expect(await g.stop()).toBe(0);
  } finally {
    if (g.child.exitCode === null) await g.stop('SIGKILL');
    explorer.reset();
  }
}

describe('usage equals billing after kill -9, without Redis', () => {
  it(`SQLite: ${KILLS} kills under load; the key's usage credits equal the credits it was charged`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-usage-crash-'));
    dirs.push(dir);
    await crashRuns(await setup({ path: join(dir, 'gateway.db') }));
  }, 120_000);

  it(`PostgreSQL (storage.url): ${KILLS} kills under load; the key's usage credits equal the credits it was charged`, async () => {
    await crashRuns(await setup({ url: POSTGRES_URL, schema: schemas.fresh() }));
  }, 120_000);
});

describe('usage equals billing after kill -9, with Redis', () => {
  const withRedis = (suite: string) => {
    const keyPrefix = testPrefix(suite);
    prefixes.push(keyPrefix);
    return { redis: { url: REDIS_URL, keyPrefix } };
  };

  it(`records in Redis: ${KILLS} kills under load; the key's usage credits equal the credits it was charged`, async () => {
    await crashRuns(await setup({}, withRedis('usage-crash')));
  }, 120_000);

  it(`records in PostgreSQL: ${KILLS} kills under load; the key's usage credits equal the credits it was charged`, async () => {
    await crashRuns(await setup({ url: POSTGRES_URL, schema: schemas.fresh() }, withRedis('usage-crash-pg')));
  }, 120_000);
});
