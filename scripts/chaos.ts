// `npm run chaos`: fault runs against the real program (src/cli.ts in a child process, as
// test/support/process.ts starts it), each scenario with its own gateway, fixture explorer
// (fixture/explorer.ts, in this process) and, where it needs one, its own redis-server, all on
// loopback ports picked free. Not part of CI (.ci/run does not call it).
//
//   npm run chaos -- [--only NAME[,NAME]] [--duration S] [--connections N] [--out FILE]
//
// Scenarios: redis-restart (without persistence, then with --appendonly yes), redis-freeze (a plan
// above the load's rate, then one below it: the rate kept while Redis is away),
// upstream-flap, reload-under-load, sigterm-under-load. Each prints a short table (answers by
// status, credits billed against billed answers times the route's cost, the gateway's RSS from
// /proc/PID/status, latency) and a PASS/FAIL line per invariant; the exit code is 1 if any failed.
// The crash scenarios, kill9-redis, kill9-worker and kill9-sqlite (kill -9 under load, then a
// restart on the same storage: see kill9 below), print requests served, credits billed, usage
// credits and their difference, which should be 0, also in one table after the last scenario.
// Issue 42's (scripts/chaos/strangers.ts), each under load from a paying key and each with its
// requests served × cost against credits billed and usage credits, in a table of their own at the
// end: webhook-endless-body (a receiver answering 500 with a body without end), log-disk-full
// (stdout on a file at its RLIMIT_FSIZE), keyless-uploads (50 slow 20 MiB POSTs without a key),
// reload-drops-plan (SIGHUP without a plan a run-time key is on).
//
// The load is a closed loop of N keep-alive connections (undici's Pool, the gateway's own HTTP
// client library) rather than wrk or autocannon: the credit ledger below needs, per answer, its
// status, its x-credits-remaining header (-1 when the quota store failed, docs/clients.md "Response
// headers") and when it was sent and answered, to tell which side of a fault each answer fell on.
//
// Only loopback traffic, bounded in count (MAX_REQUESTS) and time (--duration, and a deadline per
// scenario). Every process started here is tracked by pid and ended by pid, also on Ctrl-C; the
// machine's own Redis (6379) is never touched: each Redis here is a redis-server of its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { cpus, hostname, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool, WebSocket } from 'undici';
import { stringify } from 'yaml';
import { startFixtureExplorer } from '../fixture/explorer.js';
import { LEASE_GRACE_MS, LEASE_SWEEP_MS } from '../src/quota/lease.js';
import { RATE_WINDOW_MS } from '../src/quota/window.js';
import { billingTable, keylessUploads, logDiskFull, reloadDropsPlan, webhookEndlessBody } from './chaos/strangers.js';

const ROOT = new URL('..', import.meta.url).pathname;
const SCENARIOS = [
  'redis-restart',
  'redis-freeze',
  'upstream-flap',
  'reload-under-load',
  'sigterm-under-load',
  'kill9-redis',
  'kill9-worker',
  'kill9-sqlite',
  'webhook-endless-body',
  'log-disk-full',
  'keyless-uploads',
  'reload-drops-plan',
] as const;
type ScenarioName = (typeof SCENARIOS)[number];

const USAGE = `usage: npm run chaos -- [--only ${SCENARIOS.join(',')}] [--duration S] [--connections N] [--out FILE]

  --only NAME[,NAME]   run only these scenarios (default: all, in the order above)
  --duration S         load per scenario run, seconds (default 15; redis-restart and redis-freeze run twice)
  --connections N      concurrent keep-alive connections of the load (default 16)
  --out FILE           also write the report (markdown) to FILE`;

// ---- figures every scenario shares

/** At most this many requests per scenario run, whatever the duration. */
const MAX_REQUESTS = 1_000_000;
/** A request the gateway leaves unanswered this long counts as lost (the gateway's own deadlines are shorter). */
const CLIENT_TIMEOUT_MS = 15_000;
export const ADMIN_TOKEN = 'chaos-admin-token-0123456789';
export const ADDRESS = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
/** A cacheable route (docs/clients.md "Costs and cache lifetimes": token-balances) ... */
export const CACHED_PATH = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
/** ... and one the configurations below never cache (cache.ttlSeconds.transactions: 0): every request reaches the explorer. */
export const UNCACHED_PATH = `/1/api/v2/addresses/${ADDRESS}/transactions?items_count=5`;
/** What both routes cost (costs.routes below), so that expected credits are answers times this. */
export const COST = 20;
export const YAML_KEY = 'chaos-yaml-key-0123456789abcdef';
export const PLANS = {
  // rps far above what the load reaches: no 429 blurs the ledger. Monthly: no period ends mid-run.
  big: { rps: 1_000_000, credits: 500_000_000, period: 'monthly' },
  bigger: { rps: 900_000, credits: 600_000_000, period: 'monthly' },
  // No allowance: everything this plan's keys spend comes from bought credits.
  topup: { rps: 1_000_000, credits: 0, period: 'monthly' },
  // Below what the load reaches: redis-freeze (rate) shows the rate kept while Redis is away.
  limited: { rps: 1_000, credits: 500_000_000, period: 'monthly' },
} as const;

// ---- processes, directories and servers this run started, so that Ctrl-C ends exactly those

interface Tracked {
  child: ChildProcess;
  what: string;
  /** SIGSTOPped: needs SIGCONT before it can act on SIGTERM. */
  frozen: boolean;
}
const live = new Map<number, Tracked>();
const tempDirs = new Set<string>();
let activeScope: Scope | undefined;

function spawnTracked(what: string, cmd: string, args: readonly string[]): { child: ChildProcess; pid: number } {
  const child = spawn(cmd, [...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${what}: could not start ${cmd}`);
  live.set(pid, { child, what, frozen: false });
  child.once('exit', () => live.delete(pid));
  return { child, pid };
}

/** Signals one tracked process (by its pid, through its ChildProcess). */
function signal(pid: number, sig: NodeJS.Signals): void {
  const t = live.get(pid);
  if (!t) return;
  if (sig === 'SIGSTOP') t.frozen = true;
  if (sig === 'SIGCONT') t.frozen = false;
  t.child.kill(sig);
}

/** The last resort of an exit: SIGKILL to every tracked process still running, temp dirs removed. */
function killAllTrackedSync(): void {
  for (const pid of [...live.keys()]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    live.delete(pid);
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}
process.on('exit', killAllTrackedSync);

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${sig}: stopping the processes this run started (${[...live.keys()].join(', ') || 'none'}) ...\n`);
    const scope = activeScope;
    const done = scope ? scope.close() : Promise.resolve();
    void Promise.race([done, deadline(8_000)]).finally(() => {
      killAllTrackedSync();
      process.exit(130);
    });
  });
}

/**
 * What one scenario run started: closed in reverse order at its end, whatever happened, and by
 * the Ctrl-C handler.
 */
export class Scope {
  readonly dir: string;
  private readonly closers: { what: string; fn: () => Promise<unknown> }[] = [];
  private closing: Promise<void> | undefined;

  constructor(name: string) {
    this.dir = mkdtempSync(join(tmpdir(), `egw-chaos-${name}-`));
    tempDirs.add(this.dir);
  }

  defer(what: string, fn: () => Promise<unknown>): void {
    this.closers.push({ what, fn });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const { what, fn } of this.closers.splice(0).reverse()) {
        try {
          await Promise.race([fn(), deadline(10_000).then(() => Promise.reject(new Error('took over 10 s')))]);
        } catch (err) {
          process.stderr.write(`clean-up of ${what}: ${(err as Error).message}\n`);
        }
      }
      rmSync(this.dir, { recursive: true, force: true });
      tempDirs.delete(this.dir);
    })();
    return this.closing;
  }
}

// ---- small helpers

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A sleep that does not keep the process alive: for deadlines raced against the work they bound. */
export const deadline = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
export const fmt = (x: number) => (Number.isNaN(x) ? '–' : x.toLocaleString('en-US'));
export const ms1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
export const secs = (ms: number) => (ms / 1000).toFixed(2);
export const mib = (kib: number | undefined) => (kib === undefined ? '–' : (kib / 1024).toFixed(1));

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/** `n` distinct free ports: each held open until all are chosen (one at a time, two may come back the same). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', resolve);
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

/** VmRSS of a process in KiB (proc(5): /proc/PID/status), undefined once it is gone. */
export function rssKiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

// ---- Redis: a redis-server of this run's own, on a loopback port

/** One PING over a raw connection: "PONG", or the error line (-LOADING while an AOF is read), or undefined. */
function redisPing(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const done = (v: string | undefined) => {
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), 500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d: Buffer) => {
      data += d.toString();
      if (data.includes('\r\n')) {
        clearTimeout(timer);
        done(data.startsWith('+PONG') ? 'PONG' : data.trim());
      }
    });
    socket.on('error', () => {
      clearTimeout(timer);
      done(undefined);
    });
  });
}

export class RedisServer {
  private pid: number | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly port: number,
    readonly dir: string,
    /** --appendonly yes (every write logged, replayed at start) or no persistence at all. */
    readonly aof: boolean,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    // https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/: `save ""` turns
    // RDB snapshots off; appendonly yes logs every write to the AOF (fsync every second by default).
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--loglevel', 'warning'];
    args.push('--appendonly', this.aof ? 'yes' : 'no');
    const { child, pid } = spawnTracked(`redis-server :${this.port}`, 'redis-server', args);
    this.pid = pid;
    child.stdout?.resume();
    child.stderr?.resume();
    this.exited = new Promise((r) => child.once('exit', () => r()));
    const deadline = Date.now() + 10_000;
    while ((await redisPing(this.port)) !== 'PONG') {
      if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not answer PING in 10 s`);
      await sleep(20);
    }
  }

  /** SIGTERM (a clean shutdown: an AOF is flushed and fsynced) and wait for the exit. */
  async stop(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined || !live.has(pid)) return;
    signal(pid, 'SIGCONT');
    signal(pid, 'SIGTERM');
    const killed = deadline(10_000).then(() => signal(pid, 'SIGKILL'));
    await Promise.race([this.exited, killed]);
    await this.exited;
    this.pid = undefined;
  }

  freeze(): void {
    if (this.pid !== undefined) signal(this.pid, 'SIGSTOP');
  }

  thaw(): void {
    if (this.pid !== undefined) signal(this.pid, 'SIGCONT');
  }
}

// ---- the gateway, in a child process

/** The loopback ports of one gateway process (public, admin API, operations with /metrics) and its directory. */
export interface Ports {
  port: number;
  adminPort: number;
  metricsPort: number;
  dir: string;
}
export type ConfigFor = (ports: Ports) => Record<string, unknown>;

export class Gateway {
  private out = '';
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;

  private constructor(
    readonly pid: number,
    readonly child: ChildProcess,
    readonly ports: Ports,
    readonly file: string,
  ) {
    const keep = (d: Buffer) => {
      this.out += d.toString();
      // Bounded: the last 4 MB are plenty for the lines counted below.
      if (this.out.length > 8_000_000) this.out = this.out.slice(-4_000_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exit = new Promise((r) => child.once('exit', (code, sig) => r({ code, signal: sig, at: performance.now() })));
  }

  get url(): string {
    return `http://127.0.0.1:${this.ports.port}`;
  }

  get adminUrl(): string {
    return `http://127.0.0.1:${this.ports.adminPort}/admin/v1`;
  }

  output(): string {
    return this.out;
  }

  /**
   * `ports`: those of an earlier process (a restart on the same ports and directory, hence the
   * same embedded store). `inspect: false`: no inspector (the crash scenarios read no memory, and
   * cluster workers would each open one). `wrap`: a command the node process runs under, which
   * ends by exec-ing its arguments (so the pid stays the gateway's), as test/support/process.ts
   * takes it: prlimit and a shell redirecting stdout (log-disk-full in scripts/chaos/strangers.ts).
   */
  static async start(
    scope: Scope,
    name: string,
    configFor: ConfigFor,
    opt: { ports?: Ports; inspect?: boolean; wrap?: readonly string[] } = {},
  ): Promise<Gateway> {
    const [port, adminPort, metricsPort] = opt.ports ? [] : await freePorts(3);
    const ports: Ports = opt.ports ?? { port: port!, adminPort: adminPort!, metricsPort: metricsPort!, dir: scope.dir };
    const file = join(scope.dir, `${name}.yaml`);
    writeFileSync(file, stringify(configFor(ports)));
    // The inspector, on loopback and a port of its own choosing, only to ask for a full garbage
    // collection before memory is read (Gateway.collectGarbage).
    const [cmd, ...pre] = [...(opt.wrap ?? []), process.execPath];
    const { child, pid } = spawnTracked(`gateway ${name}`, cmd, [
      ...pre,
      ...(opt.inspect === false ? [] : ['--inspect=127.0.0.1:0']),
      '--import',
      'tsx',
      join(ROOT, 'src/cli.ts'),
      '--config',
      file,
    ]);
    const gw = new Gateway(pid, child, ports, file);
    scope.defer(`gateway ${name}`, () => gw.stop());
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gateway ${name} exited with ${child.exitCode}:\n${gw.output().slice(-4000)}`);
      try {
        const [health, admin] = await Promise.all([fetch(`${gw.url}/healthz`), fetch(`${gw.adminUrl}/plans`, gw.auth())]);
        if (health.ok && admin.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`gateway ${name} did not start in 30 s:\n${gw.output().slice(-4000)}`);
      await sleep(100);
    }
    return gw;
  }

  private auth(): RequestInit {
    return { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
  }

  /** Writes a configuration (the ports stay) and sends SIGHUP. */
  reload(configFor: ConfigFor | string): void {
    const text = typeof configFor === 'string' ? configFor : stringify(configFor(this.ports));
    writeFileSync(this.file, text);
    this.child.kill('SIGHUP');
  }

  rss(): number | undefined {
    return rssKiB(this.pid);
  }

  async admin<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(this.adminUrl + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  /** A key's credits as the gateway's store sees them (GET /admin/v1/keys/{id}). */
  async credits(id: string): Promise<KeyCredits | undefined> {
    const r = await this.admin<{ credits: KeyCredits | null }>('GET', `/keys/${id}`);
    return r.status === 200 && r.body.credits !== null ? r.body.credits : undefined;
  }

  /** A key's usage rows from `from` (a UTC day; default today) to today, summed (GET /admin/v1/usage?key=ID writes pending counts first). */
  async usage(id: string, from?: string): Promise<UsageSum> {
    const r = await this.admin<{ items?: UsageSum[] }>('GET', `/usage?key=${id}${from === undefined ? '' : `&from=${from}`}`);
    const sum: UsageSum = { requests: 0, credits: 0, cacheHits: 0, refused: 0, errors: 0 };
    for (const row of r.body.items ?? []) for (const k of Object.keys(sum) as (keyof UsageSum)[]) sum[k] += row[k];
    return sum;
  }

  async keyId(name: string): Promise<string> {
    const r = await this.admin<{ items: { id: string; name: string }[] }>('GET', '/keys');
    const id = r.body.items.find((k) => k.name === name)?.id;
    if (id === undefined) throw new Error(`no key named ${name}`);
    return id;
  }

  /** One sample (a line of the Prometheus text format) from /metrics on the operations listener; NaN when absent. */
  async metric(line: string): Promise<number> {
    try {
      const text = await (await fetch(`http://127.0.0.1:${this.ports.metricsPort}/metrics`)).text();
      const found = text.split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? Number.NaN : Number(found.slice(line.length).trim());
    } catch {
      return Number.NaN;
    }
  }

  /**
   * A full garbage collection in the gateway, through its inspector (the Chrome DevTools
   * Protocol's HeapProfiler.collectGarbage, https://chromedevtools.github.io/devtools-protocol/tot/HeapProfiler/),
   * so that heap used counts what is still referenced, not garbage an idle process has not collected yet.
   */
  async collectGarbage(): Promise<boolean> {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(this.out)?.[1];
    if (url === undefined) return false;
    const ws = new WebSocket(url);
    try {
      return await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 10_000);
        ws.addEventListener('open', () => ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })));
        ws.addEventListener('message', (e) => {
          if (typeof e.data === 'string' && (JSON.parse(e.data) as { id?: number }).id === 1) {
            clearTimeout(timer);
            resolve(true);
          }
        });
        ws.addEventListener('error', () => {
          clearTimeout(timer);
          resolve(false);
        });
      });
    } finally {
      ws.close();
    }
  }

  count(text: string): number {
    return this.out.split('\n').filter((l) => l.includes(text)).length;
  }

  /** SIGTERM and the exit code; SIGKILL if it has not exited after 20 s. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const t0 = performance.now();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
      const e = await this.exit;
      clearTimeout(timer);
      return { code: e.code, signal: e.signal, ms: e.at - t0 };
    }
    const e = await this.exit;
    return { code: e.code, signal: e.signal, ms: 0 };
  }
}

export interface KeyCredits {
  remaining: number;
  spent: number;
  topup: number;
}
export interface UsageSum {
  requests: number;
  credits: number;
  cacheHits: number;
  refused: number;
  errors: number;
}

/** Usage since a first reading (the warm-up's requests are in the rows too). */
export function minus(a: UsageSum, b: UsageSum): UsageSum {
  return {
    requests: a.requests - b.requests,
    credits: a.credits - b.credits,
    cacheHits: a.cacheHits - b.cacheHits,
    refused: a.refused - b.refused,
    errors: a.errors - b.errors,
  };
}

export function baseConfig(
  o: Ports,
  extra: {
    upstreams?: string[];
    chains?: Record<string, unknown>;
    redis?: Record<string, unknown>;
    plan?: keyof typeof PLANS;
    timeoutMs?: number;
    ttl?: number;
    shutdownTimeoutMs?: number;
  } = {},
): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: o.port, shutdownTimeoutMs: extra.shutdownTimeoutMs ?? 10_000 },
    ...(extra.redis ? { redis: extra.redis } : {}),
    chains: extra.chains ?? { '1': { name: 'Ethereum', upstreams: extra.upstreams ?? [], timeoutMs: extra.timeoutMs ?? 10_000 } },
    plans: PLANS,
    keys: [{ name: 'chaos-yaml', key: YAML_KEY, plan: extra.plan ?? 'big' }],
    costs: { default: COST, routes: { 'token-balances': COST, transactions: COST } },
    cache: { ttlSeconds: { 'token-balances': extra.ttl ?? 15, transactions: 0 }, staleSeconds: 60 },
    // Request lines off: a line per request would be most of the output kept above.
    log: { level: 'info', requests: false },
    health: { probeIntervalMs: 60_000 },
    admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: o.adminPort },
    // /metrics on a loopback listener of its own (docs/operator-guide.md "Operating it", Metrics).
    metrics: { port: o.metricsPort, host: '127.0.0.1' },
    storage: { path: join(o.dir, 'gateway.db') },
  };
}

// ---- the load: a closed loop of keep-alive connections, every answer kept

export interface Target {
  label: string;
  path: string;
  key: string;
}

export interface Shot {
  /** When it was sent and answered, ms on this process's performance clock. */
  start: number;
  end: number;
  target: number;
  /** HTTP status, 0 when no answer came (the error says why). */
  status: number;
  /** x-credits-remaining: -1 when the quota store failed, null when absent (refused before the key step). */
  credits: number | null;
  cache: string;
  /** x-ratelimit-limit: the plan's rps, as the decision saw it. */
  limit: number | null;
  error: string;
}

export class Load {
  readonly shots: Shot[] = [];
  private stopped = false;
  private next = 0;
  private readonly pool: Pool;
  private workers: Promise<void>[] = [];
  /** Sampled while it runs. */
  peakRss: number | undefined;
  private sampler: NodeJS.Timeout | undefined;

  constructor(
    origin: string,
    readonly targets: readonly Target[],
    private readonly connections: number,
    private readonly rssOf?: () => number | undefined,
  ) {
    this.pool = new Pool(origin, {
      connections,
      pipelining: 1,
      headersTimeout: CLIENT_TIMEOUT_MS,
      bodyTimeout: CLIENT_TIMEOUT_MS,
      connectTimeout: 2_000,
    });
  }

  start(): this {
    this.workers = Array.from({ length: this.connections }, () => this.worker());
    if (this.rssOf) {
      const rssOf = this.rssOf;
      this.sampler = setInterval(() => {
        const r = rssOf();
        if (r !== undefined && (this.peakRss === undefined || r > this.peakRss)) this.peakRss = r;
      }, 200);
    }
    return this;
  }

  private async worker(): Promise<void> {
    while (!this.stopped && this.shots.length < MAX_REQUESTS) {
      const target = this.next++ % this.targets.length;
      const t = this.targets[target]!;
      const start = performance.now();
      try {
        const res = await this.pool.request({ path: t.path, method: 'GET', headers: { authorization: `Bearer ${t.key}` } });
        await res.body.arrayBuffer();
        const credits = res.headers['x-credits-remaining'];
        const cache = res.headers['x-cache'];
        const limit = res.headers['x-ratelimit-limit'];
        this.shots.push({
          start,
          end: performance.now(),
          target,
          status: res.statusCode,
          credits: typeof credits === 'string' ? Number(credits) : null,
          cache: typeof cache === 'string' ? cache : '',
          limit: typeof limit === 'string' ? Number(limit) : null,
          error: '',
        });
      } catch (err) {
        const e = err as Error & { code?: string };
        this.shots.push({
          start,
          end: performance.now(),
          target,
          status: 0,
          credits: null,
          cache: '',
          limit: null,
          error: e.code ?? e.name,
        });
        // A refused or reset connection fails at once: do not spin.
        await sleep(20);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sampler) clearInterval(this.sampler);
    await Promise.all(this.workers);
    await this.pool.destroy();
  }
}

// ---- what the answers say

/** Requests by status (and x-cache), "no answer" by error code. */
export function byStatus(shots: readonly Shot[], withCache = false): string {
  const counts = new Map<string, number>();
  for (const s of shots) {
    const k = s.status === 0 ? `no answer (${s.error})` : withCache && s.cache ? `${s.status} ${s.cache}` : String(s.status);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}: ${fmt(v)}`)
    .join(', ');
}

export function latency(shots: readonly Shot[]): { p50: number; p99: number; max: number; n: number } {
  const l = shots.filter((s) => s.status !== 0).map((s) => s.end - s.start);
  l.sort((a, b) => a - b);
  return { p50: percentile(l, 50), p99: percentile(l, 99), max: l.at(-1) ?? Number.NaN, n: l.length };
}

export interface Ledger {
  /** Answers the quota store decided and billed, and kept billed (2xx, 4xx other than refusals). */
  billed: number;
  /** Answers while the store failed (quota headers -1, redis.onError open). */
  failOpen: number;
  /** Of those, 2xx: decided in process and billed once the store was back (src/quota/outage.ts). */
  servedOpen: number;
  /** 5xx answers that had been billed: refunded. */
  refunded: number;
  /** 429 and 402: refused by the decision, not billed. */
  refused: number;
  /** Answers without quota headers (refused at the key step, or by fastify while closing). */
  noQuota: number;
  expected: number;
}

/**
 * The credits the answers say were billed: a request is billed when the decision lets it through
 * and refunded when the answer is a 5xx (docs/clients.md "Response headers" and "Rate limits and credits").
 */
export function ledger(shots: readonly Shot[]): Ledger {
  const l: Ledger = { billed: 0, failOpen: 0, servedOpen: 0, refunded: 0, refused: 0, noQuota: 0, expected: 0 };
  for (const s of shots) {
    if (s.status === 0) continue;
    if (s.credits === null) l.noQuota++;
    else if (s.credits === -1) {
      // Served while Redis was away: decided in process and billed once Redis is back
      // (src/quota/outage.ts), when the answer is billable (a 2xx).
      l.failOpen++;
      if (s.status >= 200 && s.status < 300) l.servedOpen++;
    } else if (s.status >= 500) l.refunded++;
    else if (s.status === 429 || s.status === 402) l.refused++;
    else l.billed++;
  }
  l.expected = (l.billed + l.servedOpen) * COST;
  return l;
}

/**
 * Usage rows against the answers: every answer past the key step (it carries quota headers) is a
 * request of the key, with the credits it kept and 5xx as errors (docs/operator-guide.md "Operating a paid API":
 * usage rows are exact).
 */
/** Answers past the key step (they carry quota headers): what usage rows count as requests. */
export function ledgerRequests(shots: readonly Shot[]): number {
  return shots.filter((s) => s.status !== 0 && s.credits !== null).length;
}

export function usageCheck(usage: UsageSum, shots: readonly Shot[], l: Ledger, name = 'usage rows exact'): Check {
  const requests = ledgerRequests(shots);
  const errors = shots.filter((s) => s.status >= 500 && s.credits !== null).length;
  const pass = usage.credits === l.expected && usage.requests === requests && usage.errors === errors;
  return check(
    name,
    pass,
    `usage rows: credits ${fmt(usage.credits)}, requests ${fmt(usage.requests)}, errors ${fmt(usage.errors)}; ` +
      `the answers: ${fmt(l.expected)}, ${fmt(requests)}, ${fmt(errors)}` +
      (pass
        ? ''
        : ` (credits ${usage.credits >= l.expected ? '+' : ''}${fmt(usage.credits - l.expected)}, requests ${usage.requests >= requests ? '+' : ''}${fmt(usage.requests - requests)})`),
  );
}

const decided = (s: Shot) => s.status !== 0 && s.credits !== null && s.credits !== -1;

// ---- the report

export interface Check {
  name: string;
  pass: boolean;
  detail: string;
}

export interface Report {
  title: string;
  rows: [string, string][];
  checks: Check[];
  notes: string[];
}

export function render(r: Report): string {
  const lines = [`## ${r.title}`, '', '| figure | value |', '|---|---|'];
  for (const [k, v] of r.rows) lines.push(`| ${k} | ${v.replaceAll('|', '\\|')} |`);
  lines.push('');
  for (const c of r.checks) lines.push(`- **${c.pass ? 'PASS' : 'FAIL'}** ${c.name}: ${c.detail}`);
  for (const n of r.notes) lines.push(`- note: ${n}`);
  return `${lines.join('\n')}\n`;
}

export const check = (name: string, pass: boolean, detail: string): Check => ({ name, pass, detail });

/** Rows every scenario shows. */
export function commonRows(load: Load, t0: number, before: Memory, after: Memory): [string, string][] {
  const lat = latency(load.shots);
  const last = load.shots.reduce((m, s) => Math.max(m, s.end), t0);
  return [
    ['requests by status', `${byStatus(load.shots)} (total ${fmt(load.shots.length)} in ${secs(last - t0)} s)`],
    ['latency p50 / p99 / max (ms)', `${ms1(lat.p50)} / ${ms1(lat.p99)} / ${ms1(lat.max)}`],
    ['gateway RSS before / peak / after (MiB)', `${mib(before.rss)} / ${mib(load.peakRss)} / ${mib(after.rss)}`],
    ['gateway V8 heap used after a full GC, before / after (MiB)', `${mib(before.heap)} / ${mib(after.heap)}`],
  ];
}

/** The gateway's memory after a full GC: RSS (KiB, /proc/PID/status) and V8 heap used (KiB, prom-client's default metric). */
export interface Memory {
  rss: number | undefined;
  heap: number | undefined;
}

export async function memory(gw: Gateway): Promise<Memory> {
  const collected = await gw.collectGarbage();
  const heap = await gw.metric('egw_nodejs_heap_size_used_bytes');
  return { rss: gw.rss(), heap: !collected || Number.isNaN(heap) ? undefined : heap / 1024 };
}

/**
 * What a leak would look like: the heap, after a full GC, still holding what the load allocated.
 * RSS alone would mislead: V8 keeps the pages it grew into and gives them back to the system
 * lazily, so RSS gets a looser bound.
 */
export const HEAP_LIMIT_KIB = 16 * 1024;
export const RSS_LIMIT_KIB = 64 * 1024;
export function memoryCheck(before: Memory, after: Memory): Check {
  if (before.rss === undefined || after.rss === undefined) return check('memory comes back', false, 'RSS not readable');
  const rss = after.rss - before.rss;
  const heap = before.heap === undefined || after.heap === undefined ? undefined : after.heap - before.heap;
  const sign = (x: number) => (x >= 0 ? '+' : '');
  return check(
    'memory comes back',
    rss <= RSS_LIMIT_KIB && (heap === undefined || heap <= HEAP_LIMIT_KIB),
    `after a full GC, 2 s after the load, against before it: RSS ${sign(rss)}${mib(rss)} MiB (limit +${mib(RSS_LIMIT_KIB)} MiB), ` +
      `heap used ${heap === undefined ? '–' : `${sign(heap)}${mib(heap)}`} MiB (limit +${mib(HEAP_LIMIT_KIB)} MiB)`,
  );
}

export function exitCheck(e: { code: number | null; signal: NodeJS.Signals | null; ms: number }): Check {
  return check('exit code 0 on SIGTERM', e.code === 0, `exit code ${e.code ?? `signal ${e.signal}`} after ${fmt(Math.round(e.ms))} ms`);
}

export function noCrashCheck(gw: Gateway, during: string): Check {
  const alive = gw.child.exitCode === null && gw.child.signalCode === null;
  return check('no crash', alive, alive ? `process ${gw.pid} still running after ${during}` : `exited with ${gw.child.exitCode}`);
}

export async function settle(gw: Gateway): Promise<Memory> {
  await sleep(2_000);
  return memory(gw);
}

/** A few requests first, so that "before" is a warmed process (modules loaded, pools open). */
export async function warm(gw: Gateway, targets: readonly Target[]): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const t = targets[i % targets.length]!;
    await (await fetch(gw.url + t.path, { headers: { authorization: `Bearer ${t.key}` } })).arrayBuffer();
  }
  await sleep(500);
}

export async function until(at: number, t0: number): Promise<void> {
  const wait = t0 + at - performance.now();
  if (wait > 0) await sleep(wait);
}

// ---- scenarios

export interface Options {
  durationMs: number;
  connections: number;
}

/**
 * Redis stopped (SIGTERM) mid-run and started again on the same port, under load, with
 * redis.onError open: the gateway keeps serving (quota headers -1 while Redis is away), and
 * enforcement resumes when ioredis reconnects (src/redis/client.ts). Without persistence Redis
 * comes back empty: the period's spend, bought credits and run-time keys (src/store/redis.ts)
 * are gone; with --appendonly yes they are kept.
 */
async function redisRestart(scope: Scope, opt: Options, aof: boolean): Promise<Report> {
  const redis = new RedisServer(await freePort(), join(scope.dir, 'redis'), aof);
  await redis.start();
  scope.defer('redis-server', () => redis.stop());
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  // redis.volatile: the gateway refuses a Redis that keeps nothing on disk unless told it is meant.
  const redisConfig = { url: redis.url, onError: 'open', commandTimeoutMs: 250, volatile: !aof };
  const gw = await Gateway.start(scope, 'gateway', (o) => baseConfig(o, { upstreams: [explorer.url], redis: redisConfig }));

  // A run-time key with bought credits only (its plan has no allowance): both live in Redis.
  const created = await gw.admin<{ id: string; key: string }>('POST', '/keys', { name: 'chaos-runtime', plan: 'topup' });
  if (created.status !== 201) throw new Error(`POST /keys: ${created.status} ${JSON.stringify(created.body)}`);
  const topup = 50_000_000;
  await gw.admin('POST', `/keys/${created.body.id}/credits`, { amount: topup });
  const yamlId = await gw.keyId('chaos-yaml');
  const runtimeId = created.body.id;
  const targets: Target[] = [
    { label: 'yaml cached', path: CACHED_PATH, key: YAML_KEY },
    { label: 'yaml uncached', path: UNCACHED_PATH, key: YAML_KEY },
    { label: 'runtime cached', path: CACHED_PATH, key: created.body.key },
    { label: 'runtime uncached', path: UNCACHED_PATH, key: created.body.key },
  ];
  const isYaml = (s: Shot) => s.target < 2;
  await warm(gw, targets);
  const initial = { yaml: (await gw.credits(yamlId))!, runtime: (await gw.credits(runtimeId))! };
  const usage0 = await gw.usage(yamlId);
  const memBefore = await memory(gw);

  const t0 = performance.now();
  const load = new Load(gw.url, targets, opt.connections, () => gw.rss()).start();
  await until(opt.durationMs * 0.3, t0);
  const stopAt = performance.now();
  await redis.stop();
  const goneAt = performance.now();
  await until(opt.durationMs * 0.55, t0);
  const restartAt = performance.now();
  await redis.start();
  const readyAt = performance.now();
  await until(opt.durationMs, t0);
  await load.stop();
  const memAfter = await settle(gw);
  const final = { yaml: await gw.credits(yamlId), runtime: await gw.credits(runtimeId) };
  const usage = minus(await gw.usage(yamlId), usage0);
  const storeErrors = await gw.metric('egw_store_errors_total{store="quota"}');
  const keysUnread = gw.count('could not read the run-time keys');
  const alive = noCrashCheck(gw, 'the restart');
  const exit = await gw.stop();

  const shots = load.shots;
  const yaml = shots.filter(isYaml);
  const runtime = shots.filter((s) => !isYaml(s));
  // Which Redis decided an answer: the first one if it was answered before the second started,
  // the second if it was sent after the first had exited (the gap between them is seconds).
  const phase1 = (s: Shot) => s.end < restartAt;
  const phase2 = (s: Shot) => s.start > goneAt && !phase1(s);
  const unplaced = shots.filter((s) => decided(s) && !phase1(s) && !phase2(s)).length;
  const during = shots.filter((s) => s.start >= goneAt && s.end <= restartAt);
  const after = shots.filter((s) => s.start > readyAt);
  const ly = ledger(yaml);
  const ly1 = ledger(yaml.filter(phase1));
  const ly2 = ledger(yaml.filter(phase2));
  const lr = ledger(runtime);
  // A run with persistence: what the store took since the start; without: what the new, empty
  // Redis took (it started from nothing, so its spend is all of it).
  const billedYaml = final.yaml === undefined ? Number.NaN : aof ? initial.yaml.remaining - final.yaml.remaining : final.yaml.spent;
  const billedRuntime = final.runtime === undefined ? Number.NaN : initial.runtime.remaining - final.runtime.remaining;
  // The lowest balance an answer showed before the stop: what the first Redis had taken by then.
  const lowest1 = yaml.filter((s) => phase1(s) && decided(s)).reduce((m, s) => Math.min(m, s.credits!), initial.yaml.remaining);
  const spent1 = initial.yaml.remaining - lowest1;
  // Calls sent before Redis exited whose reply never came (Redis ran them, then closed the
  // connection on its way out): served free under onError, and billed. docs/clients.md names this edge
  // for a reply that times out ("Rate limits and credits", Redis failure); a reply lost to a
  // closed connection is the same. At most the requests served free that were sent before the exit.
  const edge = (of: readonly Shot[]) => of.filter((s) => s.credits === -1 && s.start < goneAt).length * COST;
  const [edgeY, edgeR] = [edge(yaml), edge(runtime)];
  const within = (billed: number, expected: number, e: number) => billed - expected >= 0 && billed - expected <= e;

  const tl =
    `load 0–${secs(opt.durationMs)} s on ${opt.connections} connections; Redis SIGTERM at ${secs(stopAt - t0)} s (exited ${secs(goneAt - t0)} s), ` +
    `started again at ${secs(restartAt - t0)} s (answering PING ${secs(readyAt - t0)} s)`;
  const rows: [string, string][] = [
    ['timeline', tl],
    ...commonRows(load, t0, memBefore, memAfter),
    ['answers while Redis was down', `${byStatus(during)}; quota headers -1 on ${fmt(ledger(during).failOpen)}`],
    ['answers sent after Redis answered again', `${byStatus(after)}; decided by the new Redis: ${fmt(after.filter(decided).length)}`],
    ['quota store failures counted (egw_store_errors_total{store="quota"})', fmt(storeErrors)],
    [
      'YAML key: answers billed / served free (store down)',
      `${fmt(ly.billed)} (${fmt(ly1.billed)} before the stop, ${fmt(ly2.billed)} after the restart) / ${fmt(ly.failOpen)}`,
    ],
    aof
      ? [
          'YAML key: credits billed (GET /admin/v1/keys: remaining at start − at end)',
          `${fmt(initial.yaml.remaining)} − ${final.yaml === undefined ? '–' : fmt(final.yaml.remaining)} = ${fmt(billedYaml)}`,
        ]
      : ['YAML key: credits billed by the new Redis (GET /admin/v1/keys: spent at end)', fmt(billedYaml)],
    [
      `YAML key: expected (billed answers × ${COST})`,
      aof ? fmt(ly.expected) : `${fmt(ly2.expected)} after the restart (${fmt(ly1.expected)} before it, ${fmt(ly.expected)} in all)`,
    ],
    ...(aof
      ? []
      : ([['YAML key: spend before the stop, as the answers showed it (lowest x-credits-remaining)', fmt(spent1)]] as [string, string][])),
    ['YAML key: usage rows (credits / requests / errors)', `${fmt(usage.credits)} / ${fmt(usage.requests)} / ${fmt(usage.errors)}`],
    ['run-time key (bought credits only): requests by status', byStatus(runtime)],
    aof
      ? ['run-time key: credits billed / expected', `${fmt(billedRuntime)} / ${fmt(lr.expected)}`]
      : [
          'run-time key after the restart (GET /admin/v1/keys/ID at the end)',
          final.runtime === undefined
            ? '404: the gateway read the keys again and dropped it'
            : `still known to the gateway, ${fmt(final.runtime.remaining)} credits left (its bought credits were in the lost data)`,
        ],
    ['gateway log: "could not read the run-time keys; keeping the ones known"', fmt(keysUnread)],
  ];
  const fiveXX = shots.filter((s) => s.status >= 500).length;
  const lost = shots.filter((s) => s.status === 0).length;
  const lateRuntime = runtime.filter((s) => s.start > readyAt + 2_000);
  const checks: Check[] = [
    check('no 5xx', fiveXX === 0, `${fmt(fiveXX)} answers ≥ 500 (redis.onError open: a Redis outage is never an error)`),
    check('every request answered', lost === 0, `${fmt(lost)} without an answer`),
    check(
      'kept answering while Redis was down',
      during.length > 0 && during.every((s) => s.status === 200),
      `${fmt(during.length)} answers between the exit and the restart, ${fmt(during.filter((s) => s.status !== 200).length)} not 200`,
    ),
    check(
      'enforcement resumed after the restart',
      after.some(decided),
      `${fmt(after.filter(decided).length)} of ${fmt(after.length)} answers sent after the restart were decided by Redis`,
    ),
    aof
      ? check(
          'credits exact (YAML key), but for replies lost at the shutdown',
          within(billedYaml, ly.expected, edgeY) && unplaced === 0,
          `billed ${fmt(billedYaml)}, expected ${fmt(ly.expected)}: ${fmt(billedYaml - ly.expected)} more, at most ${fmt(edgeY)} allowed ` +
            `(requests sent before Redis exited and served free)`,
        )
      : check(
          'credits exact on both sides of the restart (YAML key)',
          billedYaml === ly2.expected && unplaced === 0 && spent1 === ly1.expected,
          `the new Redis billed ${fmt(billedYaml)}, expected ${fmt(ly2.expected)}; the first one had billed ${fmt(spent1)} ` +
            `(answers: ${fmt(ly1.expected)}), lost with its data${unplaced ? `; ${unplaced} answers not placed` : ''}`,
        ),
    aof
      ? check(
          'credits exact (run-time key, bought credits), but for replies lost at the shutdown',
          final.runtime !== undefined && within(billedRuntime, lr.expected, edgeR),
          final.runtime === undefined
            ? 'key gone'
            : `billed ${fmt(billedRuntime)}, expected ${fmt(lr.expected)}: ${fmt(billedRuntime - lr.expected)} more, at most ${fmt(edgeR)} allowed`,
        )
      : check(
          "run-time key, lost with Redis's data, is refused (402: no credits; 401 once the keys are read again)",
          lateRuntime.length > 0 && lateRuntime.every((s) => s.status === 401 || s.status === 402),
          `answers sent 2 s after the restart and later: ${byStatus(lateRuntime)}`,
        ),
    ...(aof
      ? []
      : [
          check(
            'the gateway read its run-time keys again when Redis came back',
            final.runtime === undefined,
            final.runtime === undefined
              ? 'the key Redis no longer had was dropped (GET /admin/v1/keys/ID: 404)'
              : `the key Redis no longer had was still known at the end, ${secs(performance.now() - readyAt)} s after Redis came back; ` +
                  `"could not read the run-time keys; keeping the ones known" logged ${keysUnread} time(s), never tried again ` +
                  `(docs/operator-guide.md "One view for every process": after a lost subscription it reads every key again)`,
          ),
        ]),
    aof
      ? usageCheck(usage, yaml, ly, 'usage rows exact (YAML key)')
      : check('usage rows (YAML key)', true, `not checked: rows written before the stop were lost with Redis's data`),
    alive,
    memoryCheck(memBefore, memAfter),
    exitCheck(exit),
  ];
  const notes: string[] = [];
  if (!aof) {
    notes.push(
      `without persistence Redis came back empty: the YAML key's spend (${fmt(spent1)} credits) was forgotten, so the key could spend its ` +
        `allowance again; the run-time key and its ${fmt(topup)} bought credits were gone: 402 (no credits), and 401 once the gateway read its keys again ` +
        `(docs/operator-guide.md "One view for every process": with redis, keys, balances, usage and audit live in Redis)`,
    );
  }
  return {
    title: `redis-restart, ${aof ? 'with --appendonly yes' : "without persistence (--save '' --appendonly no)"}`,
    rows,
    checks,
    notes,
  };
}

/**
 * Redis frozen with SIGSTOP for a few seconds, then SIGCONT: every command times out after
 * redis.commandTimeoutMs, the store is then skipped for a second (src/quota/step.ts,
 * STORE_BACKOFF_MS), and the gateway serves under onError open.
 */
async function redisFreeze(scope: Scope, opt: Options, plan: 'big' | 'limited'): Promise<Report> {
  const commandTimeoutMs = 250;
  const freezeMs = Math.min(3_000, opt.durationMs * 0.3);
  const redis = new RedisServer(await freePort(), join(scope.dir, 'redis'), false);
  await redis.start();
  scope.defer('redis-server', () => redis.stop());
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const gw = await Gateway.start(scope, 'gateway', (o) =>
    baseConfig(o, { upstreams: [explorer.url], plan, redis: { url: redis.url, onError: 'open', commandTimeoutMs, volatile: true } }),
  );
  const yamlId = await gw.keyId('chaos-yaml');
  const targets: Target[] = [
    { label: 'cached', path: CACHED_PATH, key: YAML_KEY },
    { label: 'uncached', path: UNCACHED_PATH, key: YAML_KEY },
  ];
  await warm(gw, targets);
  const initial = (await gw.credits(yamlId))!;
  const usage0 = await gw.usage(yamlId);
  const memBefore = await memory(gw);

  const t0 = performance.now();
  const load = new Load(gw.url, targets, opt.connections, () => gw.rss()).start();
  await until(opt.durationMs * 0.3, t0);
  const freezeAt = performance.now();
  redis.freeze();
  await until(opt.durationMs * 0.3 + freezeMs, t0);
  const thawAt = performance.now();
  redis.thaw();
  await until(opt.durationMs, t0);
  await load.stop();
  const memAfter = await settle(gw);
  const final = await gw.credits(yamlId);
  const usage = minus(await gw.usage(yamlId), usage0);
  const storeErrors = await gw.metric('egw_store_errors_total{store="quota"}');
  const alive = noCrashCheck(gw, 'the freeze');
  const exit = await gw.stop();

  const shots = load.shots;
  const before = shots.filter((s) => s.end < freezeAt);
  const during = shots.filter((s) => s.start >= freezeAt && s.start < thawAt);
  const afterThaw = shots.filter((s) => s.start >= thawAt);
  const [lb, ld, la] = [latency(before), latency(during), latency(afterThaw)];
  const l = ledger(shots);
  const billed = final === undefined ? Number.NaN : initial.remaining - final.remaining;
  // docs/clients.md "Rate limits and credits", Redis failure: "a script call whose reply times out may still
  // have run in Redis; that request is served under onError, and credits Redis took for it are not
  // given back". Such a request waited the whole command timeout; one served while the store is
  // skipped did not.
  const timedOut = shots.filter((s) => s.credits === -1 && s.end - s.start >= commandTimeoutMs).length;
  const edge = timedOut * COST;
  const over = billed - l.expected;
  const fiveXX = shots.filter((s) => s.status >= 500).length;
  const lost = shots.filter((s) => s.status === 0).length;
  // The command timeout plus scheduling slack: this 2-vCPU machine also runs the load and the
  // fixture; a request that waited on the frozen Redis itself would take seconds.
  const bound = commandTimeoutMs + 750;
  const rows: [string, string][] = [
    [
      'timeline',
      `load 0–${secs(opt.durationMs)} s on ${opt.connections} connections; Redis SIGSTOP at ${secs(freezeAt - t0)} s, SIGCONT at ${secs(thawAt - t0)} s; redis.commandTimeoutMs ${commandTimeoutMs}`,
    ],
    ...commonRows(load, t0, memBefore, memAfter),
    [
      'latency p50 / p99 / max (ms): before / during / after the freeze',
      `${ms1(lb.p50)}/${ms1(lb.p99)}/${ms1(lb.max)} (${fmt(lb.n)}) · ${ms1(ld.p50)}/${ms1(ld.p99)}/${ms1(ld.max)} (${fmt(ld.n)}) · ${ms1(la.p50)}/${ms1(la.p99)}/${ms1(la.max)} (${fmt(la.n)})`,
    ],
    ['answers during the freeze', `${byStatus(during)}; quota headers -1 on ${fmt(ledger(during).failOpen)}`],
    ['answers decided in process (-1): waited for a timed-out call / store skipped', `${fmt(timedOut)} / ${fmt(l.failOpen - timedOut)}`],
    ['of those served (2xx), billed once Redis was back', `${fmt(l.servedOpen)} × ${COST} = ${fmt(l.servedOpen * COST)}`],
    ['quota store failures counted (egw_store_errors_total{store="quota"})', fmt(storeErrors)],
    [
      'credits billed (remaining at start − at end)',
      `${fmt(initial.remaining)} − ${final === undefined ? '–' : fmt(final.remaining)} = ${fmt(billed)}`,
    ],
    ['expected (billed answers × ' + COST + ')', `(${fmt(l.billed)} + ${fmt(l.servedOpen)}) × ${COST} = ${fmt(l.expected)}`],
    ['usage rows (credits / requests / errors)', `${fmt(usage.credits)} / ${fmt(usage.requests)} / ${fmt(usage.errors)}`],
  ];
  // While Redis is away the process keeps the plan's rps in windows of its own (src/quota/outage.ts):
  // a freeze of F seconds spans at most ceil(F) + 1 of them.
  const rps = PLANS[plan].rps;
  const servedDuring = during.filter((s) => s.status >= 200 && s.status < 300).length;
  const rateBound = rps * (Math.ceil((thawAt - freezeAt) / 1_000) + 1);
  rows.push([
    '2xx during the freeze against the plan (rps × windows it spans)',
    `${fmt(servedDuring)} ≤ ${fmt(rateBound)} (rps ${fmt(rps)})`,
  ]);
  const checks: Check[] = [
    check('no 5xx', fiveXX === 0, `${fmt(fiveXX)} answers ≥ 500`),
    check('every request answered', lost === 0, `${fmt(lost)} without an answer`),
    check(
      'the rate kept while Redis was away',
      servedDuring <= rateBound,
      `${fmt(servedDuring)} answers served, at most ${fmt(rateBound)} allowed`,
    ),
    check(
      'kept answering during the freeze',
      ld.n > 0 && ld.max <= bound,
      `${fmt(ld.n)} answers during ${secs(thawAt - freezeAt)} s, slowest ${ms1(ld.max)} ms (bound: commandTimeoutMs + 750 ms of slack = ${bound} ms)`,
    ),
    check(
      'credits exact, but for the documented edge',
      over >= 0 && over <= edge,
      `billed − expected = ${fmt(over)} credits; at most ${fmt(edge)} allowed: ${fmt(timedOut)} answers served free after their ` +
        `script call timed out, which Redis ran when it resumed (docs/clients.md, "Rate limits and credits": one edge)`,
    ),
    usageCheck(usage, shots, l),
    alive,
    memoryCheck(memBefore, memAfter),
    exitCheck(exit),
  ];
  const notes: string[] = [];
  if (usage.requests > ledgerRequests(shots)) {
    notes.push(
      'usage rows counted more than was answered: a usage write that timed out during the freeze was put back into the next one ' +
        '(src/usage/recorder.ts), and Redis still ran it, with the MULTI of every later timed-out write, when it resumed ' +
        "(src/store/redis.ts, addUsage), so each second's counts were added once per write that carried them. docs/operator-guide.md " +
        '"Edges, said plainly" names one repeat of one batch; a stall of several seconds repeats every batch it spans',
    );
  }
  return { title: `redis-freeze (SIGSTOP ${secs(freezeMs)} s, plan rps ${fmt(rps)})`, rows, checks, notes };
}

type FlapState = 'healthy' | '503' | 'hang' | 'reset';

/**
 * The explorer cycles every second through healthy, 503, hang and reset while the load asks a
 * cached route (1 s fresh, 60 s stale) and an uncached one: the cached route keeps answering 200
 * (STALE while the explorer fails), the uncached one 502 (503 and reset) or 504 (hang, past the
 * chain's timeoutMs), and every 5xx is refunded.
 */
async function upstreamFlap(scope: Scope, opt: Options): Promise<Report> {
  const timeoutMs = 800;
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const gw = await Gateway.start(scope, 'gateway', (o) => baseConfig(o, { upstreams: [explorer.url], timeoutMs, ttl: 1 }));
  const yamlId = await gw.keyId('chaos-yaml');
  const targets: Target[] = [
    { label: 'cached', path: CACHED_PATH, key: YAML_KEY },
    { label: 'uncached', path: UNCACHED_PATH, key: YAML_KEY },
  ];
  await warm(gw, targets);
  const initial = (await gw.credits(yamlId))!;
  const usage0 = await gw.usage(yamlId);
  const memBefore = await memory(gw);

  const cycle: FlapState[] = ['healthy', '503', 'hang', 'reset'];
  const phases: { state: FlapState; from: number; to: number }[] = [];
  const apply = (state: FlapState) =>
    explorer.set({ failStatus: state === '503' ? 503 : null, hang: state === 'hang', destroySocket: state === 'reset' });
  const t0 = performance.now();
  const load = new Load(gw.url, targets, opt.connections, () => gw.rss()).start();
  for (let i = 0; performance.now() - t0 < opt.durationMs; i++) {
    const state = cycle[i % cycle.length]!;
    apply(state);
    const from = performance.now();
    await until(Math.min((i + 1) * 1_000, opt.durationMs), t0);
    phases.push({ state, from, to: performance.now() });
  }
  apply('healthy');
  await load.stop();
  const memAfter = await settle(gw);
  const final = await gw.credits(yamlId);
  const usage = minus(await gw.usage(yamlId), usage0);
  const upstreamErrors = await gw.metric('egw_cache_refresh_failures_total');
  const alive = noCrashCheck(gw, 'the flapping');
  const exit = await gw.stop();

  const shots = load.shots;
  // An answer can come from an upstream request made before it was sent: identical concurrent
  // misses share one (docs/clients.md "Cache", Coalescing). So a fault phase explains the answers sent
  // from shortly before it began to a while after it ended: up to the chain's deadline for a hang.
  const overlaps = (s: Shot, states: FlapState[], slackMs: number) =>
    phases.some((p) => states.includes(p.state) && p.from <= s.end && p.to + slackMs >= s.start);
  // What the fault explains (docs/clients.md "Statuses"): 502 for an upstream 5xx or a reset, 504 past timeoutMs.
  const explained = (s: Shot) =>
    s.target === 1 &&
    ((s.status === 502 && overlaps(s, ['503', 'reset'], 250)) || (s.status === 504 && overlaps(s, ['hang'], timeoutMs + 250)));
  const unexplained = shots.filter((s) => s.status >= 500 && !explained(s));
  const cached = shots.filter((s) => s.target === 0);
  const uncached = shots.filter((s) => s.target === 1);
  const l = ledger(shots);
  const billed = final === undefined ? Number.NaN : initial.remaining - final.remaining;
  const fiveXX = shots.filter((s) => s.status >= 500).length;
  const lost = shots.filter((s) => s.status === 0).length;
  const rows: [string, string][] = [
    [
      'timeline',
      `load 0–${secs(opt.durationMs)} s on ${opt.connections} connections; explorer ${cycle.join(' → ')}, 1 s each, ${phases.length} phases; chain timeoutMs ${timeoutMs}`,
    ],
    ...commonRows(load, t0, memBefore, memAfter),
    ['cached route (1 s fresh, 60 s stale): by status and x-cache', byStatus(cached, true)],
    ['uncached route: by status', byStatus(uncached)],
    ['background refreshes that failed (egw_cache_refresh_failures_total)', fmt(upstreamErrors)],
    ['refunds (5xx answers billed, then given back)', `${fmt(l.refunded)} × ${COST} = ${fmt(l.refunded * COST)} credits`],
    [
      'credits billed (remaining at start − at end)',
      `${fmt(initial.remaining)} − ${final === undefined ? '–' : fmt(final.remaining)} = ${fmt(billed)}`,
    ],
    ['expected (billed non-5xx answers × ' + COST + ')', `${fmt(l.billed)} × ${COST} = ${fmt(l.expected)}`],
    ['usage rows (credits / requests / errors)', `${fmt(usage.credits)} / ${fmt(usage.requests)} / ${fmt(usage.errors)}`],
  ];
  const checks: Check[] = [
    check(
      'no 5xx but those the fault explains',
      unexplained.length === 0,
      `${fmt(fiveXX)} answers ≥ 500, ${fmt(unexplained.length)} unexplained` +
        (unexplained.length ? ` (${byStatus(unexplained.slice(0, 1000))}, first at ${secs(unexplained[0]!.start - t0)} s)` : ''),
    ),
    check(
      'cached route served through every fault',
      cached.every((s) => s.status === 200) && cached.some((s) => s.cache === 'STALE'),
      `${fmt(cached.filter((s) => s.status !== 200).length)} of ${fmt(cached.length)} not 200; STALE ${fmt(cached.filter((s) => s.cache === 'STALE').length)}`,
    ),
    check('every request answered', lost === 0, `${fmt(lost)} without an answer`),
    check('credits exact (5xx refunded)', billed === l.expected, `billed ${fmt(billed)}, expected ${fmt(l.expected)}`),
    usageCheck(usage, shots, l),
    alive,
    memoryCheck(memBefore, memAfter),
    exitCheck(exit),
  ];
  return { title: 'upstream-flap', rows, checks, notes: [] };
}

/**
 * SIGHUP every couple of seconds under load, cycling through a plan change, a chain change (the
 * chain's upstream moved to a second explorer, a chain added) and an invalid file (rejected, the
 * running configuration stays): docs/operator-guide.md "Reload without restart".
 */
async function reloadUnderLoad(scope: Scope, opt: Options): Promise<Report> {
  const everyMs = 2_000;
  const a = await startFixtureExplorer();
  scope.defer('fixture explorer A', () => a.close());
  const b = await startFixtureExplorer();
  scope.defer('fixture explorer B', () => b.close());
  const base: ConfigFor = (o) => baseConfig(o, { upstreams: [a.url] });
  const planChange: ConfigFor = (o) => baseConfig(o, { upstreams: [a.url], plan: 'bigger' });
  const chainChange: ConfigFor = (o) =>
    baseConfig(o, {
      chains: {
        '1': { name: 'Ethereum', upstreams: [b.url] },
        '10': { name: 'Optimism', upstreams: [a.url] },
      },
    });
  // Valid YAML, invalid configuration: rps 0 and an unknown key (docs/cli.md "check-config" shows both errors).
  const invalid = (text: string) => text.replace('rps: 1000000', 'rps: 0').replace('log:', 'colour: blue\nlog:');
  const gw = await Gateway.start(scope, 'gateway', base);
  const yamlId = await gw.keyId('chaos-yaml');
  const targets: Target[] = [
    { label: 'cached', path: CACHED_PATH, key: YAML_KEY },
    { label: 'uncached', path: UNCACHED_PATH, key: YAML_KEY },
  ];
  await warm(gw, targets);
  const initial = (await gw.credits(yamlId))!;
  const usage0 = await gw.usage(yamlId);
  const memBefore = await memory(gw);
  const hitsBefore = { a: a.hits(), b: b.hits() };

  const steps: { name: string; config: ConfigFor | 'invalid' }[] = [
    { name: 'plan change (big → bigger)', config: planChange },
    { name: 'chain change (chain 1 → explorer B, chain 10 added)', config: chainChange },
    { name: 'invalid file', config: 'invalid' },
    { name: 'back to the first file', config: base },
  ];
  const done: { name: string; at: number; hitsA: number; hitsB: number }[] = [];
  const t0 = performance.now();
  const load = new Load(gw.url, targets, opt.connections, () => gw.rss()).start();
  for (let i = 0; (i + 1) * everyMs < opt.durationMs; i++) {
    await until((i + 1) * everyMs, t0);
    const step = steps[i % steps.length]!;
    if (step.config === 'invalid') {
      gw.reload(invalid(stringify(base(gw.ports))));
    } else gw.reload(step.config);
    done.push({ name: step.name, at: performance.now() - t0, hitsA: a.hits(), hitsB: b.hits() });
  }
  await until(opt.durationMs, t0);
  await load.stop();
  const memAfter = await settle(gw);
  const final = await gw.credits(yamlId);
  const usage = minus(await gw.usage(yamlId), usage0);
  const reloaded = gw.count('"msg":"configuration reloaded');
  const rejected = gw.count('"msg":"configuration rejected');
  const alive = noCrashCheck(gw, 'the reloads');
  const exit = await gw.stop();

  const shots = load.shots;
  const l = ledger(shots);
  const billed = final === undefined ? Number.NaN : final.spent - initial.spent;
  const notOk = shots.filter((s) => s.status !== 200);
  const invalidCount = done.filter((d) => d.name === 'invalid file').length;
  // Traffic to explorer B only after the chain change, to A again after going back.
  const servedByB = b.hits() - hitsBefore.b;
  const rows: [string, string][] = [
    [
      'timeline',
      `load 0–${secs(opt.durationMs)} s on ${opt.connections} connections; SIGHUP every ${secs(everyMs)} s: ` +
        done.map((d) => `${secs(d.at)} s ${d.name}`).join('; '),
    ],
    ...commonRows(load, t0, memBefore, memAfter),
    ['reloads logged: applied / rejected', `${reloaded} / ${rejected} (sent ${done.length - invalidCount} valid, ${invalidCount} invalid)`],
    ['upstream requests: explorer A / explorer B', `${fmt(a.hits() - hitsBefore.a)} / ${fmt(servedByB)}`],
    ['credits billed (spent at end − at start; spend is kept across plan changes)', `${fmt(billed)}`],
    ['expected (billed answers × ' + COST + ')', `(${fmt(l.billed)} + ${fmt(l.servedOpen)}) × ${COST} = ${fmt(l.expected)}`],
    ['usage rows (credits / requests / errors)', `${fmt(usage.credits)} / ${fmt(usage.requests)} / ${fmt(usage.errors)}`],
  ];
  const checks: Check[] = [
    check(
      'no request failed because of a reload',
      notOk.length === 0,
      notOk.length === 0 ? `all ${fmt(shots.length)} answers 200` : `${byStatus(notOk)}, first at ${secs(notOk[0]!.start - t0)} s`,
    ),
    check(
      'every reload handled',
      reloaded === done.length - invalidCount && rejected === invalidCount,
      `${reloaded} applied, ${rejected} rejected, of ${done.length} sent`,
    ),
    check(
      'the plan change took effect',
      [PLANS.big.rps, PLANS.bigger.rps].every((rps) => shots.some((s) => s.limit === rps)),
      `x-ratelimit-limit seen: ${[...new Set(shots.map((s) => s.limit))].join(', ')}`,
    ),
    check(
      'the chain change took effect',
      done.every((d) => !d.name.startsWith('chain')) || servedByB > 0,
      `explorer B answered ${fmt(servedByB)}`,
    ),
    check('credits exact', billed === l.expected, `billed ${fmt(billed)}, expected ${fmt(l.expected)}`),
    usageCheck(usage, shots, l),
    alive,
    memoryCheck(memBefore, memAfter),
    exitCheck(exit),
  ];
  return { title: 'reload-under-load', rows, checks, notes: [] };
}

/**
 * SIGTERM while requests are in flight (the explorer answers after 300 ms): those finish, new
 * connections are refused, the process exits 0 (docs/operator-guide.md "Signals and shutdown"); a second process on the same
 * embedded store then shows what the first one had written at shutdown ("SIGTERM loses none").
 */
async function sigtermUnderLoad(scope: Scope, opt: Options): Promise<Report> {
  const delayMs = 300;
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const configFor: ConfigFor = (o) => baseConfig(o, { upstreams: [explorer.url] });
  const gw = await Gateway.start(scope, 'gateway', configFor);
  const yamlId = await gw.keyId('chaos-yaml');
  const targets: Target[] = [
    { label: 'cached', path: CACHED_PATH, key: YAML_KEY },
    { label: 'uncached', path: UNCACHED_PATH, key: YAML_KEY },
  ];
  await warm(gw, targets);
  explorer.set({ delayMs });
  const initial = (await gw.credits(yamlId))!;
  const usage0 = await gw.usage(yamlId);
  const memBefore = await memory(gw);

  const t0 = performance.now();
  const load = new Load(gw.url, targets, opt.connections, () => gw.rss()).start();
  await until(opt.durationMs * 0.5, t0);
  const memAtTerm = await memory(gw);
  const termAt = performance.now();
  gw.child.kill('SIGTERM');
  const exited = await Promise.race([gw.exit, deadline(20_000).then(() => undefined)]);
  // A little longer, so that requests sent after the exit show how they were refused.
  await sleep(300);
  await load.stop();
  const exit = exited === undefined ? await gw.stop() : { code: exited.code, signal: exited.signal, ms: exited.at - termAt };

  // The same configuration and embedded store, another process: what did the first one keep?
  const reader = await Gateway.start(scope, 'reader', configFor);
  const final = await reader.credits(yamlId);
  const usage = minus(await reader.usage(yamlId), usage0);
  await reader.stop();

  const shots = load.shots;
  const inFlight = shots.filter((s) => s.start < termAt && s.end > termAt);
  const sentBefore = shots.filter((s) => s.start < termAt);
  const sentAfter = shots.filter((s) => s.start >= termAt);
  const beforeBad = sentBefore.filter((s) => s.status !== 200);
  const l = ledger(shots);
  const billed = final === undefined ? Number.NaN : final.spent - initial.spent;
  const fiveXXBefore = sentBefore.filter((s) => s.status >= 500).length;
  const rows: [string, string][] = [
    [
      'timeline',
      `load on ${opt.connections} connections; explorer delay ${delayMs} ms; SIGTERM at ${secs(termAt - t0)} s; exit after ${fmt(Math.round(exit.ms))} ms`,
    ],
    ...commonRows(load, t0, memBefore, memAtTerm).map(([k, v]): [string, string] => [
      k.startsWith('gateway RSS')
        ? 'gateway RSS before / peak / at SIGTERM (MiB)'
        : k.startsWith('gateway V8')
          ? 'gateway V8 heap used after a full GC, before the load / at SIGTERM (MiB)'
          : k,
      v,
    ]),
    ['in flight at SIGTERM', `${fmt(inFlight.length)}: ${byStatus(inFlight) || 'none'}`],
    ['sent before SIGTERM', byStatus(sentBefore)],
    ['sent after SIGTERM (refused: expected)', byStatus(sentAfter) || 'none'],
    ['credits billed (spent read by a second process from the same store)', fmt(billed)],
    ['expected (billed answers × ' + COST + ')', `(${fmt(l.billed)} + ${fmt(l.servedOpen)}) × ${COST} = ${fmt(l.expected)}`],
    ['usage rows read by the second process (credits / requests)', `${fmt(usage.credits)} / ${fmt(usage.requests)}`],
  ];
  const checks: Check[] = [
    check(
      'requests in flight finish',
      inFlight.length > 0 && inFlight.every((s) => s.status === 200),
      `${fmt(inFlight.length)} in flight, ${fmt(inFlight.filter((s) => s.status !== 200).length)} not 200`,
    ),
    check(
      'every request sent before SIGTERM answered 200',
      beforeBad.length === 0,
      beforeBad.length === 0 ? `${fmt(sentBefore.length)} sent, all 200` : `${byStatus(beforeBad)}`,
    ),
    check('no 5xx for requests sent before SIGTERM', fiveXXBefore === 0, `${fmt(fiveXXBefore)}`),
    check('credits exact across the shutdown', billed === l.expected, `billed ${fmt(billed)}, expected ${fmt(l.expected)}`),
    usageCheck(usage, shots, l, 'usage rows exact across the shutdown'),
    check('no crash', exit.signal === null, exit.signal === null ? 'exited by itself' : `killed by ${exit.signal}`),
    exitCheck(exit),
  ];
  return { title: 'sigterm-under-load', rows, checks, notes: [] };
}

// ---- crashes: kill -9 under load, and whether usage rows and billing still agree

/** Where a crash scenario keeps its quota and records, and what it kills. */
type CrashMode = 'redis' | 'worker' | 'sqlite';

/** One line of the summary table the crash scenarios share (printed after every scenario ran). */
interface CrashFigures {
  title: string;
  served: number;
  billed: number;
  usage: number;
  pass: boolean;
}
const crashFigures: CrashFigures[] = [];

/** The pids of a process's children (proc(5): /proc/PID/task/TID/children, one list per thread). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** The children of a cluster primary that run the gateway (its workers: cluster.fork runs the same entry). */
function workerPids(primary: number): number[] {
  return childPids(primary).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('src/cli.ts');
    } catch {
      return false;
    }
  });
}

export async function waitFor(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${secs(ms)} s`);
    await sleep(50);
  }
}

export const utcToday = () => new Date().toISOString().slice(0, 10);

/**
 * kill -9 of the gateway (or of one cluster worker) under load, then a restart on the same
 * storage, then the key's usage rows against what its balance was charged. docs/operator-guide.md "Operating a
 * paid API": usage rows are written once a second ("a crash at most the last second"); the Redis
 * quota store bills a lease when it is settled, and a crashed process's reservation lapses
 * LEASE_GRACE_MS after its window, unbilled (src/quota/redis.ts, src/quota/lease.ts); the
 * in-process store writes its ledgers a second after they change (src/quota/memory.ts,
 * LEDGER_FLUSH_MS). So a crash may lose the last second of billing and of usage; the invariant
 * measured here is that it loses the same from both: usage rows' credits equal the credits billed.
 *
 * - redis: one gateway process, quota and records in its own Redis, leases on (the default);
 *   killed, then started again on the same ports and Redis.
 * - worker: server.workers 2 on that Redis (src/process/primary.ts); one worker killed, the
 *   primary starts another.
 * - sqlite: no Redis: the in-process quota with its ledgers and the records in the embedded
 *   SQLite store (storage.path); killed, then started again on the same file.
 *
 * The key is a run-time key (POST /admin/v1/keys) created for the run, with the `big` plan
 * (500,000,000 credits a month, rps far above the load): billed = its remaining credits at the
 * start − at the end (GET /admin/v1/keys/ID), usage = the credits of its usage rows
 * (GET /admin/v1/usage?key=ID), served = the answers 200 the load saw × the routes' cost.
 */
async function kill9(scope: Scope, opt: Options, mode: CrashMode): Promise<Report> {
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  let redisUrl: string | undefined;
  if (mode !== 'sqlite') {
    // No persistence: the gateway crashes here, not Redis, which keeps everything in memory.
    const redis = new RedisServer(await freePort(), join(scope.dir, 'redis'), false);
    await redis.start();
    scope.defer('redis-server', () => redis.stop());
    redisUrl = redis.url;
  }
  const workers = mode === 'worker' ? 2 : 1;
  const configFor: ConfigFor = (o) => {
    const c = baseConfig(o, {
      upstreams: [explorer.url],
      ...(redisUrl === undefined ? {} : { redis: { url: redisUrl, onError: 'open', commandTimeoutMs: 250, leases: true, volatile: true } }),
    });
    return { ...c, server: { ...(c.server as Record<string, unknown>), workers } };
  };
  const LISTENING = '"msg":"listening"';
  let gw = await Gateway.start(scope, 'gateway', configFor, { inspect: false });
  if (mode === 'worker') {
    await waitFor('every worker listening', () => gw.count(LISTENING) >= workers && workerPids(gw.pid).length === workers, 30_000);
  }
  // Warm the process(es) with the YAML key: the run-time key's numbers start from nothing.
  await warm(gw, [
    { label: 'cached', path: CACHED_PATH, key: YAML_KEY },
    { label: 'uncached', path: UNCACHED_PATH, key: YAML_KEY },
  ]);
  const created = await gw.admin<{ id: string; key: string }>('POST', '/keys', { name: 'chaos-kill9', plan: 'big' });
  if (created.status !== 201) throw new Error(`POST /keys: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id;
  const targets: Target[] = [
    { label: 'cached', path: CACHED_PATH, key: created.body.key },
    { label: 'uncached', path: UNCACHED_PATH, key: created.body.key },
  ];
  // The other worker hears of the new key by pub/sub (docs/operator-guide.md "One view for every process").
  await sleep(500);
  const day0 = utcToday();
  const initial = await gw.credits(id);
  if (initial === undefined) throw new Error(`GET /keys/${id}: no credits`);
  const usage0 = await gw.usage(id, day0);

  const t0 = performance.now();
  const load = new Load(gw.url, targets, opt.connections).start();
  await until(opt.durationMs * 0.5, t0);
  let killed: number;
  let killAt: number;
  let replacement = '';
  if (mode === 'worker') {
    const before = workerPids(gw.pid);
    const listened = gw.count(LISTENING);
    killed = before[0] ?? Number.NaN;
    if (!Number.isInteger(killed)) throw new Error('no worker found to kill');
    killAt = performance.now();
    // A process this run started (a child of the tracked primary), ended by its pid.
    process.kill(killed, 'SIGKILL');
    await waitFor('the primary starting another worker', () => gw.count(LISTENING) > listened, 30_000);
    replacement = `pid ${
      workerPids(gw.pid)
        .filter((p) => !before.includes(p))
        .join(', ') || '?'
    }`;
  } else {
    killed = gw.pid;
    killAt = performance.now();
    signal(gw.pid, 'SIGKILL');
    await gw.exit;
    gw = await Gateway.start(scope, 'restarted', configFor, { ports: gw.ports, inspect: false });
    replacement = `pid ${gw.pid}`;
  }
  const readyAt = performance.now();
  // The load goes on for the duration, and at least a quarter of it after the restart.
  await until(Math.max(opt.durationMs, readyAt - t0 + opt.durationMs * 0.25), t0);
  await load.stop();
  const loadEnd = performance.now();

  // Settle: with Redis, until the dead process's reservation has lapsed (its window, the grace and
  // a sweep after the kill); then until the two numbers stay the same for 2 s (bounded at 30 s).
  await until(mode === 'sqlite' ? 0 : killAt - t0 + RATE_WINDOW_MS + LEASE_GRACE_MS + LEASE_SWEEP_MS, t0);
  const read = async () => {
    const c = await gw.credits(id);
    const u = await gw.usage(id, day0);
    return { remaining: c?.remaining ?? Number.NaN, usage: u };
  };
  let last = await read();
  let same = 0;
  const settleEnd = performance.now() + 30_000;
  while (same < 4 && performance.now() < settleEnd) {
    await sleep(500);
    const next = await read();
    same = next.remaining === last.remaining && next.usage.credits === last.usage.credits ? same + 1 : 0;
    last = next;
  }
  const settledAt = performance.now();
  const died = gw.count('worker died; starting another');
  const exit = await gw.stop();

  const shots = load.shots;
  const ok = shots.filter((s) => s.status === 200);
  const served = ok.length * COST;
  const billed = initial.remaining - last.remaining;
  const usage = minus(last.usage, usage0);
  const diff = usage.credits - billed;
  // Sent before the kill and not answered before it: the process may have billed or counted them.
  const inFlight = shots.filter((s) => s.start < killAt && s.end >= killAt);
  // Answered 200 in the last 1.5 s before the kill: a second of flush interval, and half a second
  // for the write itself and the lease renewal on its way.
  const lastSecond = ok.filter((s) => s.end <= killAt && s.end > killAt - 1_500).length * COST;
  const afterReady = shots.filter((s) => s.start >= readyAt);
  const afterServed = afterReady.filter((s) => s.status === 200).length;
  const stable = same >= 4;
  const signed = (x: number) => `${x > 0 ? '+' : ''}${fmt(x)}`;
  const lat = latency(shots);
  const what = {
    redis: 'the gateway (Redis quota, leases on)',
    worker: 'one of 2 workers',
    sqlite: 'the gateway (SQLite, in-process quota)',
  }[mode];
  const rows: [string, string][] = [
    [
      'timeline',
      `load 0–${secs(loadEnd - t0)} s on ${opt.connections} connections; kill -9 of ${what} (pid ${killed}) at ${secs(killAt - t0)} s; ` +
        `${mode === 'worker' ? 'the primary started another' : 'started again on the same storage and ports'} (${replacement}), serving at ${secs(readyAt - t0)} s; ` +
        `numbers read until ${secs(settledAt - t0)} s (${stable ? 'unchanged for the last 2 s' : 'still changing after 30 s'})`,
    ],
    ['requests by status', `${byStatus(shots)} (total ${fmt(shots.length)})`],
    ['latency p50 / p99 / max (ms)', `${ms1(lat.p50)} / ${ms1(lat.p99)} / ${ms1(lat.max)}`],
    ['in flight at the kill', `${fmt(inFlight.length)}: ${byStatus(inFlight) || 'none'}`],
    ['requests served (answered 200) × ' + COST, `${fmt(ok.length)} × ${COST} = ${fmt(served)}`],
    [
      'credits billed (GET /admin/v1/keys/ID: remaining at start − at end)',
      `${fmt(initial.remaining)} − ${fmt(last.remaining)} = ${fmt(billed)}`,
    ],
    ['usage credits (GET /admin/v1/usage?key=ID, sum of credits; requests)', `${fmt(usage.credits)}; ${fmt(usage.requests)} requests`],
    ['usage credits − credits billed', signed(diff)],
    ['served − billed / served − usage', `${signed(served - billed)} / ${signed(served - usage.credits)}`],
    ['served in the 1.5 s before the kill × ' + COST, fmt(lastSecond)],
    ...(mode === 'worker' ? ([['gateway log: "worker died; starting another"', fmt(died)]] as [string, string][]) : []),
  ];
  const within = (lost: number) => lost >= -inFlight.length * COST && lost <= lastSecond;
  const checks: Check[] = [
    check(
      'usage equals billing',
      diff === 0,
      `usage credits ${fmt(usage.credits)} − billed ${fmt(billed)} = ${signed(diff)}${stable ? '' : ' (numbers still changing when read)'}`,
    ),
    check(
      'billing lost at most the last second before the kill',
      within(served - billed),
      `served − billed = ${signed(served - billed)}; allowed: −${fmt(inFlight.length * COST)} (in flight at the kill) to +${fmt(lastSecond)} (served in the 1.5 s before it)`,
    ),
    check(
      'usage lost at most the last second before the kill',
      within(served - usage.credits),
      `served − usage = ${signed(served - usage.credits)}; same bounds`,
    ),
    check(
      mode === 'worker' ? 'the primary replaced the worker, and the gateway kept serving' : 'the restarted gateway served',
      afterServed > 0 && (mode !== 'worker' || died === 1),
      `${fmt(afterServed)} answers 200 to requests sent after ${mode === 'worker' ? 'the new worker listened' : 'the restart'}` +
        (mode === 'worker' ? `; "worker died" logged ${died} time(s)` : ''),
    ),
    exitCheck(exit),
  ];
  const title = `kill9-${mode}`;
  crashFigures.push({ title, served, billed, usage: usage.credits, pass: diff === 0 });
  return { title, rows, checks, notes: [] };
}

// ---- main

function parseCli(argv: string[]): Options & { only: ScenarioName[]; out: string | undefined } {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      duration: { type: 'string', default: '15' },
      connections: { type: 'string', default: '16' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const only = (values.only ?? SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of only) if (!(SCENARIOS as readonly string[]).includes(name)) throw new Error(`--only: unknown scenario "${name}"`);
  const duration = Number(values.duration);
  if (!Number.isFinite(duration) || duration < 4 || duration > 600) throw new Error('--duration must be 4 to 600 seconds');
  const connections = Number(values.connections);
  if (!Number.isInteger(connections) || connections < 1 || connections > 256) throw new Error('--connections must be 1 to 256');
  return { only: only as ScenarioName[], durationMs: duration * 1000, connections, out: values.out };
}

function machine(): string {
  const redis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.trim().split(' ').slice(0, 3).join(' ');
  const cpu = cpus();
  return `${hostname()}: ${cpu.length} × ${cpu[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()}; Node ${process.version}; ${redis}`;
}

/** Which code ran: the commit, and whether src/ had changes not committed. */
function code(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (head.status !== 0) return 'code: not a git checkout';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean);
  return `code: ${head.stdout.trim()}${dirty.length ? ` with ${dirty.length} uncommitted change(s) in src/` : ''}`;
}

async function main(): Promise<void> {
  let opts: ReturnType<typeof parseCli>;
  try {
    opts = parseCli(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const runs: { name: ScenarioName; label: string; run: (scope: Scope) => Promise<Report> }[] = [];
  for (const name of opts.only) {
    if (name === 'redis-restart') {
      runs.push({ name, label: 'redis-restart (no persistence)', run: (s) => redisRestart(s, opts, false) });
      runs.push({ name, label: 'redis-restart (appendonly)', run: (s) => redisRestart(s, opts, true) });
    } else if (name === 'redis-freeze') {
      runs.push({ name, label: name, run: (s) => redisFreeze(s, opts, 'big') });
      runs.push({ name, label: 'redis-freeze (rate)', run: (s) => redisFreeze(s, opts, 'limited') });
    } else if (name === 'upstream-flap') runs.push({ name, label: name, run: (s) => upstreamFlap(s, opts) });
    else if (name === 'reload-under-load') runs.push({ name, label: name, run: (s) => reloadUnderLoad(s, opts) });
    else if (name === 'kill9-redis') runs.push({ name, label: name, run: (s) => kill9(s, opts, 'redis') });
    else if (name === 'kill9-worker') runs.push({ name, label: name, run: (s) => kill9(s, opts, 'worker') });
    else if (name === 'kill9-sqlite') runs.push({ name, label: name, run: (s) => kill9(s, opts, 'sqlite') });
    else if (name === 'webhook-endless-body') runs.push({ name, label: name, run: (s) => webhookEndlessBody(s, opts) });
    else if (name === 'log-disk-full') runs.push({ name, label: name, run: (s) => logDiskFull(s, opts) });
    else if (name === 'keyless-uploads') runs.push({ name, label: name, run: (s) => keylessUploads(s, opts) });
    else if (name === 'reload-drops-plan') runs.push({ name, label: name, run: (s) => reloadDropsPlan(s, opts) });
    else runs.push({ name, label: name, run: (s) => sigtermUnderLoad(s, opts) });
  }

  const started = performance.now();
  const header = [
    '# Chaos runs (`npm run chaos`)',
    '',
    `\`npm run chaos -- ${process.argv.slice(2).join(' ')}\`, ${new Date().toISOString().slice(0, 16)}Z; ${code()}. ${machine()}.`,
    `Each scenario: its own gateway process (\`node --import tsx src/cli.ts\`), fixture explorer and Redis, on loopback; ` +
      `load: ${opts.connections} keep-alive connections in a closed loop for ${secs(opts.durationMs)} s, ` +
      `alternating a cached route (token-balances) and an uncached one (transactions, ttl 0), ${COST} credits each.`,
    '',
  ].join('\n');
  process.stdout.write(`${header}\n`);
  const sections: string[] = [];
  let failed = 0;
  for (const r of runs) {
    if (interrupted) break;
    process.stderr.write(`running ${r.label} ...\n`);
    const scope = new Scope(r.name);
    activeScope = scope;
    const t = performance.now();
    let report: Report;
    try {
      // A deadline per run: the load is bounded, but a hung clean-up must not hold the rest.
      report = await Promise.race([
        r.run(scope),
        deadline(opts.durationMs * 2 + 120_000).then((): never => {
          throw new Error('scenario deadline passed');
        }),
      ]);
    } catch (err) {
      report = { title: r.label, rows: [], checks: [check('scenario ran', false, (err as Error).stack ?? String(err))], notes: [] };
    } finally {
      await scope.close();
      activeScope = undefined;
    }
    report.rows.push(['run time (set-up, load, checks, clean-up)', `${secs(performance.now() - t)} s`]);
    const text = render(report);
    sections.push(text);
    process.stdout.write(`${text}\n`);
    failed += report.checks.filter((c) => !c.pass).length;
  }
  if (crashFigures.length > 0) {
    const table = [
      '## Crashes: usage against billing',
      '',
      `| scenario | requests served × ${COST} | credits billed | usage credits | usage − billed | usage equals billing |`,
      '|---|---:|---:|---:|---:|---|',
      ...crashFigures.map(
        (f) =>
          `| ${f.title} | ${fmt(f.served)} | ${fmt(f.billed)} | ${fmt(f.usage)} | ${fmt(f.usage - f.billed)} | ${f.pass ? 'PASS' : 'FAIL'} |`,
      ),
      '',
    ].join('\n');
    sections.push(table);
    process.stdout.write(`${table}\n`);
  }
  const billed = billingTable();
  if (billed !== undefined) {
    sections.push(billed);
    process.stdout.write(`${billed}\n`);
  }
  const summary = `**${failed === 0 ? 'All invariants held' : `${failed} invariant(s) failed`}**; total run time ${secs(performance.now() - started)} s.\n`;
  process.stdout.write(summary);
  if (opts.out !== undefined) writeFileSync(opts.out, `${header}\n${sections.join('\n')}\n${summary}`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
