// Scenarios of `npm run chaos` (scripts/chaos.ts, which runs them) for issue 42: what a stranger,
// a webhook receiver or a full disk does to the gateway, each under load from a paying key (a
// run-time key of the run's own on the `big` plan), each ending with that key's requests served
// × the route's cost against the credits billed and its usage rows (billingFigures: one table
// after the last scenario).
//
// - webhook-endless-body: a receiver on loopback answers every delivery 500 with a body that never
//   ends (item 1): the gateway reads at most a prefix within the attempt's time (src/webhooks/delivery.ts).
// - log-disk-full: stdout appended to a file at the process's RLIMIT_FSIZE (prlimit), every log
//   write failing as on a full disk (item 2), as test/integration/log-disk-full.test.ts does it.
// - keyless-uploads: 50 slow 20 MiB POSTs without a key to the legacy endpoint at all times (item 3):
//   each refused after at most rpc.maxKeylessBodyBytes read, with Connection: close.
// - reload-drops-plan: SIGHUP with a file whose plan a run-time key is on (item 5): refused.
//
// This module imports from scripts/chaos.ts, which imports it: only functions here, nothing run at
// load, so the cycle is safe (ECMAScript modules: chaos.ts's bindings are set before main runs).
import { request as httpRequest, createServer, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { startFixtureExplorer } from '../../fixture/explorer.js';
import { ATTEMPT_TIMEOUT_MS, ERROR_CHARS } from '../../src/webhooks/delivery.js';
import {
  ADDRESS,
  CACHED_PATH,
  COST,
  Gateway,
  Load,
  PLANS,
  RSS_LIMIT_KIB,
  UNCACHED_PATH,
  baseConfig,
  byStatus,
  check,
  commonRows,
  exitCheck,
  fmt,
  latency,
  ledger,
  memory,
  memoryCheck,
  mib,
  minus,
  ms1,
  noCrashCheck,
  percentile,
  secs,
  settle,
  sleep,
  until,
  usageCheck,
  utcToday,
  warm,
  type Check,
  type ConfigFor,
  type KeyCredits,
  type Options,
  type Report,
  type Scope,
  type Shot,
  type Target,
  type UsageSum,
} from '../chaos.js';

const MiB = 1024 * 1024;

// ---- the paying key and its billing, the same in every scenario here

/** One line of the table printed after the last scenario (scripts/chaos.ts, main). */
export interface BillingFigures {
  title: string;
  /** Answers 200 × COST. */
  served: number;
  billed: number;
  usage: number;
  pass: boolean;
}
export const billingFigures: BillingFigures[] = [];

interface Paying {
  id: string;
  key: string;
  targets: Target[];
  day: string;
  initial: KeyCredits;
}

/** A run-time key (POST /admin/v1/keys) on `plan`, the process warmed with it, and its balance before the load. */
async function payingKey(gw: Gateway, plan: string): Promise<Paying> {
  const created = await gw.admin<{ id: string; key: string }>('POST', '/keys', { name: 'chaos-paying', plan });
  if (created.status !== 201) throw new Error(`POST /keys: ${created.status} ${JSON.stringify(created.body)}`);
  const { id, key } = created.body;
  const targets: Target[] = [
    { label: 'cached', path: CACHED_PATH, key },
    { label: 'uncached', path: UNCACHED_PATH, key },
  ];
  await warm(gw, targets);
  const day = utcToday();
  const initial = await gw.credits(id);
  if (initial === undefined) throw new Error(`GET /keys/${id}: no credits`);
  return { id, key, targets, day, initial };
}

/** Usage rows of the key, read until they stay the same for a second (written once a second), at most 10 s. */
async function settledUsage(gw: Gateway, p: Paying): Promise<UsageSum> {
  let last = await gw.usage(p.id, p.day);
  const end = performance.now() + 10_000;
  for (let same = 0; same < 2 && performance.now() < end;) {
    await sleep(500);
    const next = await gw.usage(p.id, p.day);
    same = next.credits === last.credits && next.requests === last.requests ? same + 1 : 0;
    last = next;
  }
  return last;
}

/**
 * The billed-against-served rows and checks: warm-up requests count in the balance and the rows
 * too, so both are read against the figures after the warm-up (`initial`, `usage0`).
 */
function billing(
  title: string,
  shots: readonly Shot[],
  p: Paying,
  final: KeyCredits | undefined,
  usage: UsageSum,
  how = 'GET /admin/v1/keys/ID: remaining at start − at end',
): { rows: [string, string][]; checks: Check[] } {
  const ok = shots.filter((s) => s.status === 200).length;
  const served = ok * COST;
  const l = ledger(shots);
  const billed = final === undefined ? Number.NaN : p.initial.remaining - final.remaining;
  const pass = billed === l.expected && served === billed && usage.credits === billed;
  billingFigures.push({ title, served, billed, usage: usage.credits, pass });
  return {
    rows: [
      [`requests served (answered 200) × ${COST}`, `${fmt(ok)} × ${COST} = ${fmt(served)}`],
      [`credits billed (${how})`, `${fmt(p.initial.remaining)} − ${final === undefined ? '–' : fmt(final.remaining)} = ${fmt(billed)}`],
      [
        'usage rows since the warm-up (credits / requests / errors)',
        `${fmt(usage.credits)} / ${fmt(usage.requests)} / ${fmt(usage.errors)}`,
      ],
    ],
    checks: [
      check(
        'billing exact',
        billed === l.expected && served === billed,
        `served ${fmt(served)}, billed ${fmt(billed)}, expected from the answers (billed answers × ${COST}) ${fmt(l.expected)}`,
      ),
      usageCheck(usage, shots, l),
    ],
  };
}

/** The answers of the paying load: all 200, none lost. */
function payingChecks(shots: readonly Shot[]): Check[] {
  const fiveXX = shots.filter((s) => s.status >= 500).length;
  const lost = shots.filter((s) => s.status === 0).length;
  const notOk = shots.filter((s) => s.status !== 200);
  return [
    check('paying load: no 5xx', fiveXX === 0, `${fmt(fiveXX)} answers ≥ 500 of ${fmt(shots.length)}`),
    check(
      'paying load: every request answered 200',
      notOk.length === 0 && lost === 0,
      notOk.length ? byStatus(notOk) : `all ${fmt(shots.length)} 200`,
    ),
  ];
}

/** Peak RSS (KiB) of a process, sampled every 200 ms until stopped. */
function rssSampler(gw: Gateway): { peak: () => number | undefined; stop: () => void } {
  let peak: number | undefined;
  const timer = setInterval(() => {
    const r = gw.rss();
    if (r !== undefined && (peak === undefined || r > peak)) peak = r;
  }, 200);
  return { peak: () => peak, stop: () => clearInterval(timer) };
}

// ---- webhook-endless-body

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

interface Answered {
  at: number;
  /** Bytes the receiver got to write before the gateway closed the connection. */
  written: number;
  closedAt?: number;
}

/** A receiver that answers every POST 500 and then sends `x` without end, as fast as the socket takes it. */
async function startEndlessReceiver(): Promise<{ url: string; answered: Answered[]; close(): Promise<void> }> {
  const answered: Answered[] = [];
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const server: Server = createServer((req, res) => {
    req.resume();
    const a: Answered = { at: performance.now(), written: 0 };
    answered.push(a);
    res.on('close', () => (a.closedAt = performance.now()));
    res.writeHead(500, { 'content-type': 'text/plain' });
    const pump = () => {
      while (!res.destroyed) {
        a.written += chunk.length;
        if (!res.write(chunk)) break;
      }
    };
    res.on('drain', pump);
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Delivery {
  status: string;
  type?: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
}

/**
 * Every delivery to a receiver that answers 500 and never ends its body (issue 42, item 1: the
 * body was read whole and took the process down, and again after each restart). Events fire all
 * run long: every 500 ms a key is made on a 100-credit plan (key.created) and spent to the end
 * (credits.threshold 80 and 100, credits.exhausted; checked every second, src/webhooks/credits.ts),
 * while the paying key loads the gateway.
 */
export async function webhookEndlessBody(scope: Scope, opt: Options): Promise<Report> {
  const receiver = await startEndlessReceiver();
  scope.defer('endless receiver', () => receiver.close());
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const gw = await Gateway.start(scope, 'gateway', (o) => ({
    ...baseConfig(o, { upstreams: [explorer.url] }),
    plans: { ...PLANS, tiny: { rps: 1_000_000, credits: 5 * COST, period: 'monthly' } },
    webhooks: [{ name: 'endless', url: `${receiver.url}/endless`, events: ['*'], secret: SECRET }],
    // The receiver is on loopback (docs/configuration.md, security.allowPrivateWebhooks).
    security: { allowPrivateWebhooks: true },
  }));
  const p = await payingKey(gw, 'big');
  const usage0 = await gw.usage(p.id, p.day);
  const memBefore = await memory(gw);
  const sampler = rssSampler(gw);

  const t0 = performance.now();
  const load = new Load(gw.url, p.targets, opt.connections, () => gw.rss()).start();
  let made = 0;
  const tinyStatuses: number[] = [];
  while (performance.now() - t0 < opt.durationMs - 500) {
    const k = await gw.admin<{ key: string }>('POST', '/keys', { name: `chaos-tiny-${made}`, plan: 'tiny' });
    if (k.status === 201) {
      made++;
      for (let i = 0; i < 6; i++) {
        const res = await fetch(gw.url + CACHED_PATH, { headers: { authorization: `Bearer ${k.body.key}` } });
        await res.arrayBuffer();
        tinyStatuses.push(res.status);
      }
    }
    await sleep(500);
  }
  await until(opt.durationMs, t0);
  await load.stop();
  const loadEnd = performance.now();
  // The last events' first attempts: the outbox polls every second, an attempt takes at most ATTEMPT_TIMEOUT_MS.
  const list = async () =>
    (await gw.admin<{ items: Delivery[] }>('GET', '/webhooks/deliveries?webhook=endless&limit=1000')).body.items ?? [];
  let deliveries = await list();
  const waitEnd = performance.now() + ATTEMPT_TIMEOUT_MS + 5_000;
  while (performance.now() < waitEnd && (deliveries.length === 0 || deliveries.some((d) => d.attempts === 0))) {
    await sleep(500);
    deliveries = await list();
  }
  const waited = performance.now() - loadEnd;
  const alive = noCrashCheck(gw, `${fmt(receiver.answered.length)} endless answers`);
  const healthz = await fetch(`${gw.url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
    (r) => r.status,
    () => 0,
  );
  sampler.stop();
  const memAfter = await settle(gw);
  const final = await gw.credits(p.id);
  const usage = minus(await settledUsage(gw, p), usage0);
  // Read again just before the stop: retries (5 s back-off) went on meanwhile; the receiver's
  // figures below are read after the stop, so attempts in flight then are counted on both sides.
  deliveries = await list();
  const exit = await gw.stop();

  const attempted = deliveries.filter((d) => d.attempts > 0);
  const attempts = attempted.reduce((n, d) => n + d.attempts, 0);
  const errorMax = `HTTP 500: `.length + ERROR_CHARS;
  const longest = attempted.reduce((n, d) => Math.max(n, d.lastError?.length ?? 0), 0);
  const badError = attempted.filter((d) => d.lastStatus !== 500 || d.lastError === null || d.lastError.length > errorMax);
  const delivered = deliveries.filter((d) => d.status === 'delivered').length;
  const closed = receiver.answered.filter((a) => a.closedAt !== undefined);
  const open = receiver.answered.length - closed.length;
  const slowest = closed.reduce((m, a) => Math.max(m, a.closedAt! - a.at), 0);
  const maxWritten = receiver.answered.reduce((m, a) => Math.max(m, a.written), 0);
  const types = new Map<string, number>();
  for (const d of deliveries) types.set(d.type ?? '?', (types.get(d.type ?? '?') ?? 0) + 1);
  const peak = sampler.peak();
  const peakGrowth = peak === undefined || memBefore.rss === undefined ? Number.NaN : peak - memBefore.rss;
  const PEAK_LIMIT_KIB = 2 * RSS_LIMIT_KIB;
  const b = billing('webhook-endless-body', load.shots, p, final, usage);
  const rows: [string, string][] = [
    [
      'timeline',
      `load 0–${secs(opt.durationMs)} s on ${opt.connections} connections; a 100-credit key made and spent every 0.5 s (${made} keys); ` +
        `deliveries then waited for ${secs(waited)} s`,
    ],
    ...commonRows(load, t0, memBefore, memAfter),
    ['gateway RSS peak, load and deliveries (MiB)', `${mib(peak)} (+${mib(peakGrowth)} over before)`],
    ['the 100-credit keys: requests by status', byStatus(tinyStatuses.map((status) => ({ status }) as Shot))],
    ['deliveries to the endless receiver: by type', [...types].map(([k, v]) => `${k}: ${v}`).join(', ') || 'none'],
    [
      'deliveries: attempted / attempts in all / delivered',
      `${fmt(attempted.length)} of ${fmt(deliveries.length)} / ${fmt(attempts)} / ${fmt(delivered)}`,
    ],
    ['longest lastError kept (characters)', `${fmt(longest)} (at most ${errorMax}: "HTTP 500: " and ${ERROR_CHARS} of the body)`],
    [
      'receiver: answers begun / closed by the gateway / bytes it wrote into one, most',
      `${fmt(receiver.answered.length)} / ${fmt(closed.length)} / ${mib(maxWritten / 1024)} MiB`,
    ],
    ['receiver: slowest answer until the gateway closed it (ms)', ms1(slowest)],
    ...b.rows,
  ];
  const checks: Check[] = [
    alive,
    check('/healthz answers after the deliveries', healthz === 200, `status ${healthz || 'none in 5 s'}`),
    ...payingChecks(load.shots),
    check(
      'deliveries fail with a bounded error',
      attempted.length > 0 && badError.length === 0 && delivered === 0,
      `${fmt(attempted.length)} attempted, ${fmt(badError.length)} without lastStatus 500 and an error of at most ${errorMax} characters`,
    ),
    check(
      'each answer read only in part, within the attempt time',
      closed.length > 0 && open === 0 && slowest <= ATTEMPT_TIMEOUT_MS,
      `${fmt(closed.length)} closed by the gateway, ${fmt(open)} still open at the end, slowest ${ms1(slowest)} ms (attempt bound ${ATTEMPT_TIMEOUT_MS} ms)`,
    ),
    check(
      'RSS bounded while the receiver streams',
      peakGrowth <= PEAK_LIMIT_KIB,
      `peak ${mib(peak)} MiB, +${mib(peakGrowth)} MiB over before the load (limit +${mib(PEAK_LIMIT_KIB)} MiB: the paying load alone ` +
        `takes up to about 60 MiB at its peak, bench/results/2026-12-02-chaos-redis-freeze.md; a body read whole took over 512 MiB)`,
    ),
    memoryCheck(memBefore, memAfter),
    ...b.checks,
    exitCheck(exit),
  ];
  return { title: 'webhook-endless-body (a receiver answering 500 with a body without end)', rows, checks, notes: [] };
}

// ---- log-disk-full

/** RLIMIT_FSIZE of the gateway: its log file starts at it (sparse: no disk used), the SQLite file stays far below. */
const LOG_LIMIT = 64 * MiB;

/**
 * The gateway's stdout appended to a file it can no longer grow (prlimit --fsize, the file at
 * the limit: every write fails with EFBIG, as with ENOSPC on a full disk; Node ignores SIGXFSZ),
 * one access line per request (issue 42, item 2: the process hung in sonic-boom's flushSync, then
 * died, and the usage it had served was lost). Then SIGTERM and a start on the same store, still
 * on the full log, to read what the first process kept.
 */
export async function logDiskFull(scope: Scope, opt: Options): Promise<Report> {
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const log = join(scope.dir, 'gateway.log');
  writeFileSync(log, '');
  truncateSync(log, LOG_LIMIT);
  // util-linux prlimit(1) sets the limit and runs the shell, which appends stdout to the log and
  // execs node: the pid is the gateway's (stderr stays a pipe to this process).
  const wrap = ['prlimit', `--fsize=${LOG_LIMIT}`, '--', 'sh', '-c', `exec "$@" >> '${log}'`, 'sh'];
  const configFor: ConfigFor = (o) => ({ ...baseConfig(o, { upstreams: [explorer.url] }), log: { level: 'info', requests: true } });
  let gw = await Gateway.start(scope, 'gateway', configFor, { wrap });
  const failuresAtStart = await gw.metric('egw_log_write_failures_total');
  const p = await payingKey(gw, 'big');
  const usage0 = await gw.usage(p.id, p.day);
  const memBefore = await memory(gw);

  const t0 = performance.now();
  const load = new Load(gw.url, p.targets, opt.connections, () => gw.rss()).start();
  // /healthz every 250 ms while the log fails: each must answer within 2 s (the hang answered none).
  const probes: { status: number; ms: number }[] = [];
  const probing = (async () => {
    while (performance.now() - t0 < opt.durationMs) {
      const s = performance.now();
      const status = await fetch(`${gw.url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        () => 0,
      );
      probes.push({ status, ms: performance.now() - s });
      await sleep(250);
    }
  })();
  await until(opt.durationMs, t0);
  await load.stop();
  await probing;
  const memAfter = await settle(gw);
  const failures = await gw.metric('egw_log_write_failures_total');
  const dropped = await gw.metric('egw_log_lines_dropped_total');
  const alive = noCrashCheck(gw, 'the load on a full log');
  const usageBefore = minus(await settledUsage(gw, p), usage0);
  const exit = await gw.stop();

  // Another process on the same store and ports, its log still full.
  gw = await Gateway.start(scope, 'restarted', configFor, { wrap, ports: gw.ports });
  const final = await gw.credits(p.id);
  const usage = minus(await gw.usage(p.id, p.day), usage0);
  const exit2 = await gw.stop();

  const badProbes = probes.filter((x) => x.status !== 200);
  const slowestProbe = probes.reduce((m, x) => Math.max(m, x.ms), 0);
  const lat = latency(load.shots);
  const b = billing('log-disk-full', load.shots, p, final, usage, 'read by the restarted process: remaining at start − at end');
  const rows: [string, string][] = [
    [
      'timeline',
      `log at its RLIMIT_FSIZE (${mib(LOG_LIMIT / 1024)} MiB) from the start; load 0–${secs(opt.durationMs)} s on ${opt.connections} connections, ` +
        `an access line per request; SIGTERM, then a start on the same store with the log still full`,
    ],
    ...commonRows(load, t0, memBefore, memAfter),
    ['log writes failed (egw_log_write_failures_total): after the start / after the load', `${fmt(failuresAtStart)} / ${fmt(failures)}`],
    [
      'log lines dropped (egw_log_lines_dropped_total; the rest wait in a buffer of at most 8 MiB, src/observability/log-destination.ts)',
      fmt(dropped),
    ],
    [
      '/healthz during the load: answers / not 200 / slowest (ms)',
      `${fmt(probes.length)} / ${fmt(badProbes.length)} / ${ms1(slowestProbe)}`,
    ],
    ['usage rows before the SIGTERM (credits / requests)', `${fmt(usageBefore.credits)} / ${fmt(usageBefore.requests)}`],
    ['SIGTERM: exit code, time to exit', `${exit.code ?? `signal ${exit.signal}`}, ${fmt(Math.round(exit.ms))} ms`],
    ...b.rows,
  ];
  const checks: Check[] = [
    check('the log was full', failures > 0, `${fmt(failures)} failed log writes`),
    alive,
    ...payingChecks(load.shots),
    check('no hang: requests answered on time', lat.max < 5_000, `slowest paying answer ${ms1(lat.max)} ms (bound 5,000 ms)`),
    check(
      'no hang: /healthz answers',
      probes.length > 0 && badProbes.length === 0,
      `${fmt(probes.length)} probes, ${fmt(badProbes.length)} not 200 within 2 s, slowest ${ms1(slowestProbe)} ms`,
    ),
    memoryCheck(memBefore, memAfter),
    check(
      'exit code 0 on SIGTERM with the log full, within 8 s',
      exit.code === 0 && exit.ms < 8_000,
      `exit code ${exit.code ?? `signal ${exit.signal}`} after ${fmt(Math.round(exit.ms))} ms`,
    ),
    check(
      'usage rows written before the stop',
      usageBefore.credits === usage.credits,
      `${fmt(usageBefore.credits)} credits before the SIGTERM, ${fmt(usage.credits)} read by the restarted process`,
    ),
    ...b.checks.map((c) => ({ ...c, name: `${c.name} after the restart` })),
    { ...exitCheck(exit2), name: 'the restarted process: exit code 0 on SIGTERM' },
  ];
  return { title: 'log-disk-full (stdout on a file at its RLIMIT_FSIZE)', rows, checks, notes: [] };
}

// ---- keyless-uploads

const UPLOADS = 50;
const UPLOAD_BYTES = 20 * MiB;
const UPLOAD_CHUNK = 16 * 1024;
/** A chunk every this many ms: 800 KiB/s, a 20 MiB upload would take 26 s. */
const UPLOAD_EVERY_MS = 20;
/** rpc.maxKeylessBodyBytes' default (src/config/schema.ts): what the gateway reads of a keyless form. */
const KEYLESS_PREFIX = 256 * 1024;
const BOUNDARY = 'chaos-boundary';

/** The filler of every upload: one buffer, written again and again (no allocation per chunk). */
const FILLER = Buffer.alloc(UPLOAD_CHUNK, 0x61);

/**
 * CPU time of a process in ms: utime + stime of proc(5)'s /proc/PID/stat (fields 14 and 15, in
 * clock ticks: 100 a second on Linux, sysconf(_SC_CLK_TCK)); NaN once it is gone.
 */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** CPU-seconds per second between two readings. */
const cps = (cpuA: number, cpuB: number, tA: number, tB: number) => ((cpuB - cpuA) / (tB - tA)).toFixed(2);

/** This process's own CPU time in ms (the load, the uploads and the fixture explorer all run here). */
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Upload {
  status: number | undefined;
  connection: string | undefined;
  /** Body bytes the client's socket took before the answer (or the end of the run). */
  written: number;
  ms: number;
  error: string | undefined;
  /** Still sending at the end of the run, no answer yet: cut by this process. */
  cut: boolean;
}

/** The start of a legacy verification form without a key: urlencoded, or multipart up to its file. */
function uploadHead(multipart: boolean): Buffer {
  if (!multipart) return Buffer.from(`module=contract&action=verifysourcecode&contractaddress=${ADDRESS}&sourceCode=`);
  const part = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return Buffer.from(
    part('module', 'contract') +
      part('action', 'verify_via_sourcify') +
      part('addressHash', ADDRESS) +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files[0]"; filename="Counter.sol"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
}

/** One slow 20 MiB POST to /1/api without a key, a chunk every UPLOAD_EVERY_MS (on 'drain' when the socket is full). */
function slowUpload(port: number, multipart: boolean, stopped: () => boolean): Promise<Upload> {
  const started = performance.now();
  return new Promise((resolve) => {
    const u: Upload = { status: undefined, connection: undefined, written: 0, ms: 0, error: undefined, cut: false };
    let finished = false;
    const end = () => {
      if (finished) return;
      finished = true;
      u.ms = performance.now() - started;
      resolve(u);
    };
    const req: ClientRequest = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/1/api',
      method: 'POST',
      agent: false,
      headers: {
        'content-type': multipart ? `multipart/form-data; boundary=${BOUNDARY}` : 'application/x-www-form-urlencoded',
        'content-length': String(UPLOAD_BYTES),
      },
    });
    req.on('response', (res) => {
      u.status = res.statusCode;
      const c = res.headers.connection;
      u.connection = typeof c === 'string' ? c : undefined;
      res.resume();
      res.on('end', end);
      res.on('error', end);
    });
    req.on('error', (e) => ((u.error = (e as NodeJS.ErrnoException).code ?? e.name), end()));
    req.on('close', () => setImmediate(end));
    const next = () => {
      if (finished || u.status !== undefined || req.destroyed) return;
      if (stopped()) {
        u.cut = true;
        req.destroy();
        return;
      }
      const chunk = u.written === 0 ? uploadHead(multipart) : FILLER.subarray(0, Math.min(UPLOAD_CHUNK, UPLOAD_BYTES - u.written));
      u.written += chunk.length;
      const more = req.write(chunk);
      if (u.written >= UPLOAD_BYTES) return void req.end();
      if (more) setTimeout(next, UPLOAD_EVERY_MS);
      else req.once('drain', () => setTimeout(next, UPLOAD_EVERY_MS));
    };
    next();
  });
}

/**
 * The paying key's load alone, then with 50 slow 20 MiB keyless uploads in flight at all times
 * (each refused one replaced at once), issue 42, item 3: before, each body was read and parsed
 * whole (1.3-1.6 GB RSS, a paying client waiting 19-30 s).
 */
export async function keylessUploads(scope: Scope, opt: Options): Promise<Report> {
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const gw = await Gateway.start(scope, 'gateway', (o) => baseConfig(o, { upstreams: [explorer.url] }));
  const p = await payingKey(gw, 'big');
  const usage0 = await gw.usage(p.id, p.day);
  const memBefore = await memory(gw);
  const port = gw.ports.port;

  const baseMs = opt.durationMs * 0.4;
  const cpu0 = { gw: cpuMs(gw.pid), own: ownCpuMs() };
  // This process's event-loop delay in each phase: how late its own timers and sockets were served
  // (a late client measures its own lateness as the gateway's).
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const load0 = loadavg()[0]!;
  const t0 = performance.now();
  const alone = new Load(gw.url, p.targets, opt.connections, () => gw.rss()).start();
  await until(baseMs, t0);
  await alone.stop();
  const cpu1 = { gw: cpuMs(gw.pid), own: ownCpuMs() };
  const lagAlone = lag.percentile(99) / 1e6;
  lag.reset();
  const t1 = performance.now();
  let stop = false;
  const uploads: Upload[] = [];
  const uploaders = Array.from({ length: UPLOADS }, async (_, i) => {
    while (!stop) uploads.push(await slowUpload(port, i % 2 === 1, () => stop));
  });
  const withUploads = new Load(gw.url, p.targets, opt.connections, () => gw.rss()).start();
  await until(opt.durationMs - baseMs, t1);
  await withUploads.stop();
  const cpu2 = { gw: cpuMs(gw.pid), own: ownCpuMs() };
  const lagUploads = lag.percentile(99) / 1e6;
  lag.disable();
  const load1 = loadavg()[0]!;
  const t2 = performance.now();
  stop = true;
  await Promise.all(uploaders);
  const memAfter = await settle(gw);
  const final = await gw.credits(p.id);
  const usage = minus(await settledUsage(gw, p), usage0);
  const alive = noCrashCheck(gw, `${fmt(uploads.length)} keyless uploads`);
  const exit = await gw.stop();

  const shots = [...alone.shots, ...withUploads.shots];
  const [la, lu] = [latency(alone.shots), latency(withUploads.shots)];
  const answered = uploads.filter((u) => !u.cut);
  const statuses = new Map<string, number>();
  for (const u of uploads) {
    const k = u.cut ? 'cut at the end, no answer yet' : u.status === undefined ? `no answer (${u.error ?? '?'})` : `${u.status}`;
    statuses.set(k, (statuses.get(k) ?? 0) + 1);
  }
  const refused = answered.filter((u) => (u.status === 401 || u.status === 403) && u.connection?.toLowerCase() === 'close');
  const writtenMax = uploads.reduce((m, u) => Math.max(m, u.written), 0);
  const WRITTEN_LIMIT = 2 * MiB;
  const answerMs = answered.map((u) => u.ms).sort((x, y) => x - y);
  // An estimate: the gateway's CPU in the second phase, less its paying answers at the first
  // phase's CPU each, over the uploads answered (the uploads cut at the end also cost some).
  const perPaid = (cpu1.gw - cpu0.gw) / alone.shots.length;
  const perUpload = (cpu2.gw - cpu1.gw - perPaid * withUploads.shots.length) / answered.length;
  const peakGrowth = (withUploads.peakRss ?? Number.NaN) - (alone.peakRss ?? Number.NaN);
  const p99Bound = Math.max(5 * la.p99, la.p99 + 250);
  const b = billing('keyless-uploads', shots, p, final, usage);
  const rows: [string, string][] = [
    [
      'timeline',
      `paying load alone 0–${secs(baseMs)} s, then ${secs(opt.durationMs - baseMs)} s with ${UPLOADS} keyless uploads in flight at all times ` +
        `(${mib(UPLOAD_BYTES / 1024)} MiB each, ${UPLOAD_CHUNK / 1024} KiB every ${UPLOAD_EVERY_MS} ms, half urlencoded, half multipart, to /1/api); ` +
        `${opt.connections} connections`,
    ],
    ['paying requests by status', `${byStatus(shots)} (total ${fmt(shots.length)})`],
    ['gateway RSS before / after (MiB)', `${mib(memBefore.rss)} / ${mib(memAfter.rss)}`],
    ['gateway V8 heap used after a full GC, before / after (MiB)', `${mib(memBefore.heap)} / ${mib(memAfter.heap)}`],
    [
      'paying latency p50 / p99 / max (ms): alone / with the uploads',
      `${ms1(la.p50)} / ${ms1(la.p99)} / ${ms1(la.max)} (${fmt(la.n)}) · ${ms1(lu.p50)} / ${ms1(lu.p99)} / ${ms1(lu.max)} (${fmt(lu.n)})`,
    ],
    [
      'CPU-seconds per second of the phase, alone / with the uploads: the gateway; this process (load, uploads, fixture explorer)',
      `${cps(cpu0.gw, cpu1.gw, t0, t1)} / ${cps(cpu1.gw, cpu2.gw, t1, t2)}; ${cps(cpu0.own, cpu1.own, t0, t1)} / ${cps(cpu1.own, cpu2.own, t1, t2)}`,
    ],
    [
      "the gateway's CPU per answer (ms): a paying one, alone / a keyless upload (estimate: the second phase's CPU less its paying answers at the first's)",
      `${ms1(perPaid)} / ${ms1(perUpload)}`,
    ],
    ["this process's event-loop delay p99 (ms), alone / with the uploads", `${ms1(lagAlone)} / ${ms1(lagUploads)}`],
    ['the machine: load average (1 min) at the start / at the end of the load', `${load0.toFixed(2)} / ${load1.toFixed(2)}`],
    ['gateway RSS peak (MiB): alone / with the uploads', `${mib(alone.peakRss)} / ${mib(withUploads.peakRss)}`],
    ['keyless uploads: by status', [...statuses].map(([k, v]) => `${k}: ${fmt(v)}`).join(', ')],
    [
      'keyless uploads: time to the refusal p50 / p99 / max (ms)',
      `${ms1(percentile(answerMs, 50))} / ${ms1(percentile(answerMs, 99))} / ${ms1(answerMs.at(-1) ?? Number.NaN)}`,
    ],
    [
      'keyless uploads: body bytes the client could write before the answer, most',
      `${mib(writtenMax / 1024)} MiB of ${mib(UPLOAD_BYTES / 1024)} (the gateway reads at most rpc.maxKeylessBodyBytes, ${KEYLESS_PREFIX / 1024} KiB; the rest is socket buffers)`,
    ],
    ...b.rows,
  ];
  const checks: Check[] = [
    alive,
    ...payingChecks(shots),
    check(
      'each keyless upload refused (401/403, Connection: close) before its body is read',
      answered.length > 0 && refused.length === answered.length && writtenMax < WRITTEN_LIMIT,
      `${fmt(refused.length)} of ${fmt(answered.length)} answered uploads refused with Connection: close; the most the client could write ` +
        `${mib(writtenMax / 1024)} MiB (limit ${mib(WRITTEN_LIMIT / 1024)} MiB of ${mib(UPLOAD_BYTES / 1024)})`,
    ),
    check(
      'RSS bounded under the uploads',
      peakGrowth <= RSS_LIMIT_KIB,
      `peak with the uploads − peak alone = ${peakGrowth >= 0 ? '+' : ''}${mib(peakGrowth)} MiB (limit +${mib(RSS_LIMIT_KIB)} MiB; the issue saw 1.3-1.6 GB)`,
    ),
    check(
      "the paying client's p99 within bound",
      lu.p99 <= p99Bound,
      `p99 ${ms1(lu.p99)} ms with the uploads, ${ms1(la.p99)} ms alone (bound: the larger of 5 × and + 250 ms = ${ms1(p99Bound)} ms; the issue saw 19-30 s)`,
    ),
    memoryCheck(memBefore, memAfter),
    ...b.checks,
    exitCheck(exit),
  ];
  return { title: `keyless-uploads (${UPLOADS} slow 20 MiB POSTs without a key at all times)`, rows, checks, notes: [] };
}

// ---- reload-drops-plan

const GOLD = { rps: 777_777, credits: 500_000_000, period: 'monthly' } as const;

/**
 * Under load from a run-time key on plan `gold`, SIGHUP with a file without `gold` (twice), then
 * with it again (issue 42, item 5: the reload was applied, the key answered 401, and its client's
 * address was blocked by security.badKeys). Now refused as the admin API refuses deleting a plan in
 * use: the running configuration stays (docs/operator-guide.md "Reload without restart").
 */
export async function reloadDropsPlan(scope: Scope, opt: Options): Promise<Report> {
  const explorer = await startFixtureExplorer();
  scope.defer('fixture explorer', () => explorer.close());
  const configFor =
    (gold: boolean): ConfigFor =>
    (o) => ({
      ...baseConfig(o, { upstreams: [explorer.url] }),
      plans: gold ? { ...PLANS, gold: GOLD } : PLANS,
      // The default, said here: 20 wrong keys from an address in 60 s block it for 300 s.
      security: { badKeys: { failures: 20, windowSeconds: 60, blockSeconds: 300 } },
    });
  const gw = await Gateway.start(scope, 'gateway', configFor(true));
  const p = await payingKey(gw, 'gold');
  const usage0 = await gw.usage(p.id, p.day);
  const memBefore = await memory(gw);
  const metric = (outcome: string) => gw.metric(`egw_config_reloads_total{outcome="${outcome}"}`);
  const before = { refused: await metric('refused'), ok: await metric('ok') };

  const steps: { at: number; gold: boolean }[] = [
    { at: 0.25, gold: false },
    { at: 0.5, gold: false },
    { at: 0.75, gold: true },
  ];
  const done: { at: number; gold: boolean; logged: boolean }[] = [];
  const t0 = performance.now();
  const load = new Load(gw.url, p.targets, opt.connections, () => gw.rss()).start();
  for (const step of steps) {
    await until(opt.durationMs * step.at, t0);
    const handled = gw.count('"msg":"configuration re');
    gw.reload(configFor(step.gold));
    const at = performance.now() - t0;
    // Handled: "configuration refused" or "configuration reloaded" logged (bounded wait).
    const end = performance.now() + 5_000;
    while (gw.count('"msg":"configuration re') === handled && performance.now() < end) await sleep(50);
    done.push({ at, gold: step.gold, logged: gw.count('"msg":"configuration re') > handled });
  }
  await until(opt.durationMs, t0);
  await load.stop();
  const memAfter = await settle(gw);
  const after = { refused: await metric('refused'), ok: await metric('ok') };
  const lastOk = await gw.metric('egw_config_last_reload_successful');
  const refusedLines = gw.count('"msg":"configuration refused');
  const verify = await gw.admin<{ valid?: boolean; code?: string }>('POST', '/keys:verify', { key: p.key });
  const final = await gw.credits(p.id);
  const usage = minus(await settledUsage(gw, p), usage0);
  const alive = noCrashCheck(gw, 'the reloads');
  const exit = await gw.stop();

  const shots = load.shots;
  const refusedSent = steps.filter((s) => !s.gold).length;
  const wrongKey = shots.filter((s) => s.status === 401 || s.status === 429 || s.status === 503);
  const limits = [...new Set(shots.map((s) => s.limit))];
  const b = billing('reload-drops-plan', shots, p, final, usage);
  const rows: [string, string][] = [
    [
      'timeline',
      `load 0–${secs(opt.durationMs)} s on ${opt.connections} connections from a run-time key on plan gold (rps ${fmt(GOLD.rps)}); SIGHUP: ` +
        done.map((d) => `${secs(d.at)} s ${d.gold ? 'gold back' : 'gold removed'}${d.logged ? '' : ' (not logged in 5 s)'}`).join('; '),
    ],
    ...commonRows(load, t0, memBefore, memAfter),
    [
      'egw_config_reloads_total refused / ok: before → after',
      `${fmt(before.refused)} → ${fmt(after.refused)} / ${fmt(before.ok)} → ${fmt(after.ok)}`,
    ],
    ['"configuration refused" logged', fmt(refusedLines)],
    ['egw_config_last_reload_successful at the end', fmt(lastOk)],
    ['x-ratelimit-limit seen', limits.map((l) => (l === null ? 'none' : fmt(l))).join(', ')],
    ['POST /admin/v1/keys:verify at the end: valid, code', `${String(verify.body.valid)}, ${verify.body.code ?? '–'}`],
    ...b.rows,
  ];
  const checks: Check[] = [
    check(
      'the reloads without the plan refused',
      after.refused - before.refused === refusedSent && refusedLines === refusedSent,
      `egw_config_reloads_total{outcome="refused"} +${fmt(after.refused - before.refused)}, "configuration refused" logged ${refusedLines} time(s), of ${refusedSent} sent`,
    ),
    check(
      'the reload with the plan back applied',
      after.ok - before.ok === 1 && lastOk === 1,
      `{outcome="ok"} +${fmt(after.ok - before.ok)}, last successful ${fmt(lastOk)}`,
    ),
    check(
      'the key kept working: no 401, no block (429), no 503',
      wrongKey.length === 0 && limits.length === 1 && limits[0] === GOLD.rps && verify.body.valid === true,
      `${wrongKey.length ? byStatus(wrongKey) : 'none'}; x-ratelimit-limit ${limits.join(', ')}; keys:verify valid ${String(verify.body.valid)}`,
    ),
    ...payingChecks(shots),
    alive,
    memoryCheck(memBefore, memAfter),
    ...b.checks,
    exitCheck(exit),
  ];
  return { title: 'reload-drops-plan (SIGHUP without a plan a run-time key is on)', rows, checks, notes: [] };
}

/** The table after the last scenario: the paying key's requests served against billing and usage. */
export function billingTable(): string | undefined {
  if (billingFigures.length === 0) return undefined;
  return [
    '## Strangers, receivers, a full disk: billed against served',
    '',
    `| scenario | requests served × ${COST} | credits billed | usage credits | billed − served | usage − billed | exact |`,
    '|---|---:|---:|---:|---:|---:|---|',
    ...billingFigures.map(
      (f) =>
        `| ${f.title} | ${fmt(f.served)} | ${fmt(f.billed)} | ${fmt(f.usage)} | ${fmt(f.billed - f.served)} | ${fmt(f.usage - f.billed)} | ${f.pass ? 'PASS' : 'FAIL'} |`,
    ),
    '',
  ].join('\n');
}
