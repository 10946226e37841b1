// A log that cannot be written does not stop the gateway (issue 42, item 2; docs/operator-guide.md,
// "Logs on a full disk"). The real CLI runs in a child process with stdout appended to a file
// (`npm start >> gateway.log`, as the operator guide runs it) under `prlimit --fsize`: the file
// is already at the limit (sparse: no disk is used), so every write of the log fails with EFBIG
// as it would with ENOSPC on a full disk (Node ignores SIGXFSZ). The records' SQLite file stays far
// below the limit. Requests are still answered and billed, /healthz answers, the process stops
// cleanly on SIGTERM and its usage is in the store after a restart; once the log file has room
// again (truncated), lines are written again and say how many were dropped meanwhile.
// Then stdout as a pipe whose reader stopped (the child's end is non-blocking: its writes get
// EAGAIN once the socket's buffers are full): the same, and SIGTERM ends the process at once.
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, closedPort } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { until } from '../support/wait.js';

const CACHED = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const BALANCE = 1_000_000;
const COST = 20;
const REQUESTS = 200;
/** RLIMIT_FSIZE of the child: the log file starts at it. */
const LIMIT = 64 * 1024 * 1024;

let explorer: FixtureExplorer;
const dirs: string[] = [];
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

/** SIGTERM, and the exit code, or 'hung' when the process has not exited within `ms` (then the finally kills it). */
async function stopWithin(g: GatewayProcess, ms: number): Promise<number | null | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), ms)));
  try {
    return await Promise.race([g.stop(), hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a log on a full disk', () => {
  it('loses log lines, never answers, billing or usage; the process stays up, stops cleanly and recovers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-log-full-'));
    dirs.push(dir);
    const log = join(dir, 'gateway.log');
    writeFileSync(log, '');
    truncateSync(log, LIMIT);
    const adminPort = await closedPort();
    const opsPort = await closedPort();
    const cfg = {
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
      plans: { big: { rps: 1_000_000, credits: BALANCE, period: 'monthly' } },
      costs: { default: COST, routes: { 'token-balances': COST } },
      cache: { ttlSeconds: { 'token-balances': 15 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
      metrics: { port: opsPort },
      storage: { path: join(dir, 'gateway.db') },
      // Every request writes a line: the log is written all the time.
      log: { level: 'info', requests: true },
    };
    // stdout appended to the log file, under the size limit (the shell only redirects).
    const wrap = ['prlimit', `--fsize=${LIMIT}`, '--', 'sh', '-c', `exec "$@" >> '${log}'`, 'sh'];
    const api = adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`);
    let g: GatewayProcess = await startGatewayProcess(cfg, 20_000, wrap);
    try {
      const created = await api.post<{ id: string; key: string }>('/keys', { name: 'disk', plan: 'big' });
      expect(created.status).toBe(201);
      const { id, key } = created.body;
      // The first writes have failed (the start's lines).
      await until(async () => (await metric(opsPort, 'egw_log_write_failures_total')) > 0, 'a failed log write');

      const statuses: number[] = [];
      let sent = 0;
      const loop = async () => {
        while (sent < REQUESTS) {
          sent++;
          const res = await fetch(g.url + CACHED, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
      };
      await Promise.all(Array.from({ length: 8 }, loop));
      expect(statuses.filter((s) => s === 200)).toHaveLength(REQUESTS);
      const health = await fetch(`${g.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect(health.status).toBe(200);
      // Retried a second later, from a timer: still failing, still up.
      const failures = await metric(opsPort, 'egw_log_write_failures_total');
      await until(async () => (await metric(opsPort, 'egw_log_write_failures_total')) > failures, 'the log write tried again');
      expect(g.child.exitCode).toBeNull();
      expect(statSync(log).size).toBe(LIMIT);

      // Usage reaches the store while the log fails (written once a second, not at the stop).
      const used = async () => {
        const rows = (await api.get<{ items: { credits: number; requests: number }[] }>(`/usage?key=${id}`)).body.items;
        return { credits: rows.reduce((n, r) => n + r.credits, 0), requests: rows.reduce((n, r) => n + r.requests, 0) };
      };
      await until(async () => (await used()).credits === REQUESTS * COST, 'the usage written');

      // A clean stop with the log still failing: the exit's last flush gives up, it does not hang.
      expect(await stopWithin(g, 8_000)).toBe(0);

      g = await startGatewayProcess(cfg, 20_000, wrap);
      expect(await used()).toEqual({ credits: REQUESTS * COST, requests: REQUESTS });
      const after = await api.get<{ credits: { remaining: number } }>(`/keys/${id}`);
      expect(BALANCE - after.body.credits.remaining).toBe(REQUESTS * COST);

      // Room again: the lines waiting are written, then the count of those dropped meanwhile.
      truncateSync(log, 0);
      for (let i = 0; i < 5; i++) expect((await fetch(g.url + CACHED, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      const recovered = await until(
        () =>
          readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l.includes('log lines are written again'))
            .map((l) => JSON.parse(l) as { error: string; droppedLines: number })[0],
        'the line saying the log is written again',
      );
      expect(recovered.error).toBe('EFBIG');
      expect(recovered.droppedLines).toBeGreaterThanOrEqual(0);
      await until(() => readFileSync(log, 'utf8').includes(`"path":"${CACHED.split('?')[0]}"`), 'access lines written again');
      expect(await g.stop()).toBe(0);
    } finally {
      if (g.child.exitCode === null) await g.stop('SIGKILL');
    }
  }, 90_000);
  it('a stdout pipe whose reader stopped: requests answered and billed, /healthz answers, SIGTERM ends it at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-log-pipe-'));
    dirs.push(dir);
    const adminPort = await closedPort();
    const cfg = {
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
      plans: { big: { rps: 1_000_000, credits: BALANCE, period: 'monthly' } },
      costs: { default: COST, routes: { 'token-balances': COST } },
      cache: { ttlSeconds: { 'token-balances': 15 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
      storage: { path: join(dir, 'gateway.db') },
      log: { level: 'info', requests: true },
    };
    const api = adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`);
    let g: GatewayProcess = await startGatewayProcess(cfg);
    try {
      const created = await api.post<{ id: string; key: string }>('/keys', { name: 'pipe', plan: 'big' });
      const { id, key } = created.body;
      // Stop reading: the socket's buffers (about 200 KiB each way, /proc/sys/net/core/wmem_default)
      // fill with the access lines of requests whose paths are 4 KiB long (answered 404 by the key's
      // route check or the explorer: each one is a line), 2 MiB of them.
      g.child.stdout!.pause();
      const long = `/1/api/v2/addresses/${ADDRESS}/${'a'.repeat(4_000)}`;
      let sent = 0;
      const flood = async () => {
        while (sent < 500) {
          sent++;
          const res = await fetch(g.url + long, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
          await res.arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: 8 }, flood));
      const statuses: number[] = [];
      let paid = 0;
      const loop = async () => {
        while (paid < REQUESTS) {
          paid++;
          const res = await fetch(g.url + CACHED, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
      };
      await Promise.all(Array.from({ length: 8 }, loop));
      expect(statuses.filter((s) => s === 200)).toHaveLength(REQUESTS);
      expect((await fetch(`${g.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
      const before = (await api.get<{ credits: { remaining: number } }>(`/keys/${id}`)).body.credits.remaining;
      // The stop does not wait on the reader: the last lines get their time, then are dropped.
      expect(await stopWithin(g, 8_000)).toBe(0);

      g = await startGatewayProcess(cfg);
      const after = (await api.get<{ credits: { remaining: number } }>(`/keys/${id}`)).body.credits.remaining;
      expect(after).toBe(before);
      const rows = (await api.get<{ items: { credits: number }[] }>(`/usage?key=${id}`)).body.items;
      expect(rows.reduce((n, r) => n + r.credits, 0)).toBe(BALANCE - after);
      expect(BALANCE - after).toBeGreaterThanOrEqual(REQUESTS * COST);
      expect(await g.stop()).toBe(0);
    } finally {
      if (g.child.exitCode === null) await g.stop('SIGKILL');
    }
  }, 90_000);
});
