// Faults of the embedded SQLite store under a real gateway process (docs/configuration.md, `storage`): a full
// disk (RLIMIT_FSIZE through prlimit), the file deleted while the gateway runs, a read-only folder
// or file. In each the process stays up, answers from memory, keeps what it could not write and
// writes it once it can; /readyz says not ready meanwhile, egw_store_errors_total{store="records"}
// counts the failures and the log says why; a restart finds everything that was answered. And the
// files are 0600 whatever the umask. store/sqlite.ts says how; sqlite-faults.test.ts tests the
// store alone.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { hashKey } from '../../src/auth/digest.js';
import { configKeyId } from '../../src/keys/ring.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, closedPort, DEMO_KEY } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const CREDITS = 10_000_000;
/**
 * Root reads and writes whatever the modes say (CAP_DAC_OVERRIDE, capabilities(7)): a gateway
 * run as root runs without it here, so that a read-only folder or file is one.
 */
const AS_OWNER = process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--'] : [];
const UMASK_022 = ['sh', '-c', 'umask 022 && exec "$@"', 'sh'];

let explorer: FixtureExplorer;
const dirs: string[] = [];
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  for (const d of dirs) {
    chmodSync(d, 0o700);
    rmSync(d, { recursive: true, force: true });
  }
});

interface Setup {
  dir: string;
  file: string;
  cfg: Record<string, unknown>;
  ops: string;
  api: ReturnType<typeof adminClient>;
}

async function setup(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'egw-storage-faults-'));
  dirs.push(dir);
  const file = join(dir, 'gateway.db');
  const [adminPort, opsPort] = [await closedPort(), await closedPort()];
  const cfg = {
    chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
    plans: { small: { rps: 100_000, credits: CREDITS } },
    keys: [{ name: 'yaml-key', key: DEMO_KEY, plan: 'small' }],
    admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
    metrics: { port: opsPort },
    storage: { path: file },
    log: { level: 'info', requests: false },
  };
  return { dir, file, cfg, ops: `http://127.0.0.1:${opsPort}`, api: adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`) };
}

const get = (g: GatewayProcess, secret: string) => fetch(g.url + BALANCES, { headers: { authorization: `Bearer ${secret}` } });

/** `n` requests at once with `secret`, every one answered 200; how many. */
async function burst(g: GatewayProcess, secret: string, n: number): Promise<number> {
  const statuses = await Promise.all(Array.from({ length: n }, () => get(g, secret).then((r) => r.status)));
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  return n;
}

async function readyz(s: Setup): Promise<{ status: string; storage: { backend: string; status: string } }> {
  return (await (await fetch(`${s.ops}/readyz`)).json()) as { status: string; storage: { backend: string; status: string } };
}

async function storeErrors(s: Setup): Promise<number> {
  const text = await (await fetch(`${s.ops}/metrics`)).text();
  return Number(/^egw_store_errors_total\{store="records"\} (\d+)$/m.exec(text)?.[1] ?? NaN);
}

/** The configured key's ledger as the file holds it, read beside the gateway (its rows are named by a keyed hash). */
function storedLedger(file: string): { spent: number; topup: number } | undefined {
  const db = new Database(file, { readonly: true });
  try {
    const secret = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE name = 'ledger_secret'").get()!.value;
    const name = createHmac('sha256', Buffer.from(secret, 'hex')).update(hashKey(DEMO_KEY)).digest('hex');
    // The month's counter: every debit counts in it (and in its day's), so a run across midnight adds up.
    return db
      .prepare<[string], { spent: number; topup: number }>('SELECT month_spent AS spent, topup FROM ledgers WHERE account = ?')
      .get(name);
  } finally {
    db.close();
  }
}

/** What one request of the configured key costs, from its first answer. */
async function firstCost(g: GatewayProcess): Promise<number> {
  const res = await get(g, DEMO_KEY);
  expect(res.status).toBe(200);
  return CREDITS - Number(res.headers.get('x-credits-remaining'));
}

async function usageRequests(s: Setup, id: string): Promise<number> {
  const rows = (await s.api.get<{ items: { requests: number }[] }>(`/usage?key=${id}`)).body.items;
  return rows.reduce((n, r) => n + r.requests, 0);
}

describe('a gateway on the embedded store', () => {
  it('creates the store file, its -wal and -shm 0600 under umask 022', async () => {
    const s = await setup();
    const g = await startGatewayProcess(s.cfg, undefined, UMASK_022);
    try {
      await burst(g, DEMO_KEY, 3);
      for (const f of [s.file, `${s.file}-wal`, `${s.file}-shm`]) {
        expect([f, (statSync(f).mode & 0o777).toString(8)]).toEqual([f, '600']);
      }
    } finally {
      expect(await g.stop()).toBe(0);
    }
  });

  it('stays up on a full disk (RLIMIT_FSIZE): answers, is not ready, counts and logs the failures, and writes every credit spent once there is room', async () => {
    const s = await setup();
    // The file made, then closed (its WAL folded in); the limit leaves room for a dozen WAL pages.
    const first = await startGatewayProcess(s.cfg);
    const cost = await firstCost(first);
    expect(await first.stop()).toBe(0);
    const limit = Math.max(statSync(s.file).size, 32 * 1024) + 48 * 1024;
    const g = await startGatewayProcess(s.cfg, undefined, ['prlimit', `--fsize=${limit}:unlimited`, '--']);
    let answered = 1; // the first process's request
    try {
      await until(
        async () => {
          answered += await burst(g, DEMO_KEY, 20);
          const r = await readyz(s);
          return r.status === 'not ready' && r.storage.status === 'down';
        },
        'writes to fail and /readyz to say so',
        30_000,
      );
      expect((await fetch(g.url + '/readyz')).status).toBe(503);
      expect(await storeErrors(s)).toBeGreaterThan(0);
      expect(g.output()).toContain('the SQLite store failed; serving from memory');
      // SIGXFSZ, which would end the process (setrlimit(2)), is ignored by Node: the writes fail with EFBIG.
      answered += await burst(g, DEMO_KEY, 200);
      expect(g.child.exitCode).toBeNull();
      const inMemory = (await s.api.get<{ credits: { spent: number } }>(`/keys/${configKeyId('yaml-key')}`)).body.credits.spent;
      expect(inMemory).toBe(answered * cost); // the first run's, read at start, and this one's

      execFileSync('prlimit', ['--pid', String(g.child.pid), '--fsize=unlimited']);
      await until(async () => (await readyz(s)).status === 'ready', 'the store to take writes again (pinged every 5 s)', 15_000);
      // Every credit answered, written once: the first run's and this one's.
      await until(() => storedLedger(s.file)?.spent === answered * cost, 'the spend to be written');
      expect(await g.stop()).toBe(0);
    } finally {
      if (g.child.exitCode === null) await g.stop('SIGKILL');
    }
    expect(storedLedger(s.file)?.spent).toBe(answered * cost);

    const second = await startGatewayProcess(s.cfg);
    try {
      const res = await get(second, DEMO_KEY);
      expect(res.headers.get('x-credits-remaining')).toBe(String(CREDITS - (answered + 1) * cost));
      expect(await usageRequests(s, configKeyId('yaml-key'))).toBe(answered + 1);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 90_000);

  it.each([
    { label: 'the file', suffixes: [''] },
    { label: 'the file, its -wal and -shm', suffixes: ['', '-wal', '-shm'] },
  ])(
    'notices $label deleted while it runs, writes it again at its path with everything, logs it; a restart finds every key and top-up',
    async ({ suffixes }) => {
      const s = await setup();
      const g = await startGatewayProcess(s.cfg);
      let a: { id: string; key: string };
      let b: { id: string; key: string };
      try {
        a = (await s.api.post<{ id: string; key: string }>('/keys', { name: 'before', plan: 'small' })).body;
        expect((await s.api.post(`/keys/${a.id}/credits`, { amount: 500 })).status).toBe(200);
        await burst(g, a.key, 3);
        for (const suffix of suffixes) unlinkSync(s.file + suffix);

        const created = await s.api.post<{ id: string; key: string }>('/keys', { name: 'after', plan: 'small' });
        expect(created.status).toBe(201);
        b = created.body;
        expect((await s.api.post(`/keys/${b.id}/credits`, { amount: 300 })).status).toBe(200);
        // What issue 25 stores, after the deletion too: a plan, an account, a correction.
        expect((await s.api.post('/plans', { name: 'team', rps: 33, credits: 1_000 })).status).toBe(201);
        expect((await s.api.post('/accounts', { name: 'acme', plan: 'team' })).status).toBe(201);
        expect((await s.api.post(`/keys/${b.id}/credits`, { amount: -100, reason: 'refund' })).status).toBe(200);
        await until(() => g.output().includes('the SQLite store file was deleted while open; written again at its path'), 'the log line');
        expect(existsSync(s.file)).toBe(true);
        expect((await readyz(s)).status).toBe('ready');
      } finally {
        expect(await g.stop()).toBe(0);
      }

      const second = await startGatewayProcess(s.cfg);
      try {
        const ra = await get(second, a.key);
        expect([ra.status, ra.headers.get('x-credits-remaining')]).toEqual([200, String(CREDITS - 4 * 20 + 500)]);
        const rb = await get(second, b.key);
        expect([rb.status, rb.headers.get('x-credits-remaining')]).toEqual([200, String(CREDITS - 20 + 300 - 100)]);
        expect((await s.api.get<{ rps: number }>('/plans/team')).body.rps).toBe(33);
        expect((await s.api.get<{ items: { name: string }[] }>('/accounts')).body.items.map((a) => a.name)).toEqual(['acme']);
        // The audit entries written before the deletion came along with the rest.
        const trail = await s.api.get<{ items: { action: string }[] }>(`/audit?key=${a.id}`);
        expect(trail.body.items.map((e) => e.action)).toEqual(['create', 'credits']);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    },
    60_000,
  );

  it('with its folder read-only after start: the open files take writes; deleted then, the file cannot be put back, so writes are refused and it is not ready until the folder is writable again', async () => {
    const s = await setup();
    const g = await startGatewayProcess(s.cfg, undefined, AS_OWNER);
    let a: { id: string; key: string };
    let b: { id: string; key: string };
    let c: { id: string; key: string };
    const cost = await firstCost(g);
    try {
      a = (await s.api.post<{ id: string; key: string }>('/keys', { name: 'a', plan: 'small' })).body;
      chmodSync(s.dir, 0o500);
      // The file, its -wal and -shm are open: a read-only folder does not stop writes to them.
      const created = await s.api.post<{ id: string; key: string }>('/keys', { name: 'b', plan: 'small' });
      expect(created.status).toBe(201);
      b = created.body;
      // Deleted now (root may still, and the gateway may not), it cannot be written again.
      unlinkSync(s.file);
      await burst(g, DEMO_KEY, 5);
      expect((await s.api.post('/keys', { name: 'c', plan: 'small' })).status).toBeGreaterThanOrEqual(500);
      expect((await s.api.post(`/keys/${a.id}/credits`, { amount: 100 })).status).toBeGreaterThanOrEqual(500);
      await until(async () => (await readyz(s)).storage.status === 'down', '/readyz to say so', 12_000);
      expect((await readyz(s)).status).toBe('not ready');
      expect(await storeErrors(s)).toBeGreaterThan(0);
      expect(g.output()).toContain('was deleted and cannot be written again yet');
      expect(g.child.exitCode).toBeNull();

      chmodSync(s.dir, 0o700);
      await until(() => g.output().includes('written again at its path'), 'the file to be written again', 12_000);
      await until(async () => (await readyz(s)).status === 'ready', '/readyz to be ready again', 12_000);
      const again = await s.api.post<{ id: string; key: string }>('/keys', { name: 'c', plan: 'small' });
      expect(again.status).toBe(201);
      c = again.body;
    } finally {
      chmodSync(s.dir, 0o700);
      expect(await g.stop()).toBe(0);
    }

    const second = await startGatewayProcess(s.cfg);
    try {
      for (const k of [a, b, c]) expect((await get(second, k.key)).status).toBe(200);
      // 1 + 5 requests of the configured key before the restart, and this one.
      const res = await get(second, DEMO_KEY);
      expect(res.headers.get('x-credits-remaining')).toBe(String(CREDITS - 7 * cost));
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 60_000);

  it.each([
    { label: 'folder', lock: (s: Setup) => chmodSync(s.dir, 0o500), unlock: (s: Setup) => chmodSync(s.dir, 0o700) },
    { label: 'file', lock: (s: Setup) => chmodSync(s.file, 0o400), unlock: (s: Setup) => chmodSync(s.file, 0o600) },
  ])(
    'starts with a read-only $label: serves from memory, not ready, and keeps every credit spent once it can write',
    async ({ lock, unlock }) => {
      const s = await setup();
      const first = await startGatewayProcess(s.cfg);
      const cost = await firstCost(first);
      await burst(first, DEMO_KEY, 2);
      expect(await first.stop()).toBe(0);

      lock(s);
      let g: GatewayProcess | undefined;
      try {
        g = await startGatewayProcess(s.cfg, undefined, AS_OWNER);
        await burst(g, DEMO_KEY, 4);
        await until(async () => (await readyz(s)).storage.status === 'down', '/readyz to say the store is down', 12_000);
        expect((await readyz(s)).status).toBe('not ready');
        expect(g.child.exitCode).toBeNull();
        unlock(s);
        await until(async () => (await readyz(s)).status === 'ready', 'the store to take writes again', 12_000);
        // 3 of the first run and 4 of this one.
        await until(() => storedLedger(s.file)?.spent === 7 * cost, 'the spend to be written');
      } finally {
        unlock(s);
        if (g) expect([await g.stop(), g.output()]).toEqual([0, g.output()]);
      }

      const second = await startGatewayProcess(s.cfg);
      try {
        const res = await get(second, DEMO_KEY);
        expect(res.headers.get('x-credits-remaining')).toBe(String(CREDITS - 8 * cost));
      } finally {
        expect(await second.stop()).toBe(0);
      }
    },
    60_000,
  );
});
