// `server.workers` > 1: one primary process and N workers serving one port (node:cluster; the
// primary hands connections out round robin, https://nodejs.org/api/cluster.html#how-it-works).
// Every worker is a whole gateway (request path, admin API, operations listener) on one Redis,
// which holds what they share: balances, rate windows, run-time keys, usage, cache fills. The
// primary serves nothing itself: it starts the workers, replaces one that dies (logged, with a
// growing pause when they keep dying at once) for as long as it runs, passes SIGHUP on (each
// worker reloads the file; one still starting gets it once it listens), drains them all on
// SIGTERM, and answers their requests for the whole gateway's metrics (prom-client's
// AggregatorRegistry sums what every worker counted). It exits 0 only after a stop.
import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { LogDestination } from '../observability/log-destination.js';

/** Messages between a worker and the primary about /metrics. */
export const METRICS_REQUEST = 'egw:metrics-request';
export const METRICS_ANSWER = 'egw:metrics-answer';
export interface MetricsRequest {
  type: typeof METRICS_REQUEST;
  id: number;
}
export interface MetricsAnswer {
  type: typeof METRICS_ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** A worker's message once it listens and handles its own signals (src/cli-main.ts). */
export const WORKER_READY = 'egw:worker-ready';
export interface WorkerReady {
  type: typeof WORKER_READY;
}

/** A worker that dies within this long of its start is dying at once: the next start waits. */
const QUICK_DEATH_MS = 10_000;
const MAX_RESTART_PAUSE_MS = 30_000;

/**
 * Starts `count` workers; returns what the primary does on a signal (src/cli.ts holds the signals
 * and hands them over): SIGHUP reloads every worker, SIGTERM or SIGINT drains them and exits.
 */
export function runPrimary(count: number, shutdownTimeoutMs: number, level: string): (signal: NodeJS.Signals) => void {
  // Not pino's default destination: a write that fails (a full disk under stdout) was thrown
  // from the logging call and ended the primary, and its workers with it (issue 42, item 2). Each
  // line is written at once, asynchronously (minLength 0), at most a pipe's atomic write
  // (PIPE_BUF, pipe(7): the workers share this stdout); what waits at exit, in a bounded flush.
  const out = new LogDestination({ fd: 1, minLength: 0, maxWrite: 4096 });
  process.on('exit', () => out.flushSync());
  const log = pino({ level, base: { pid: process.pid, role: 'primary' } }, out);
  const registry = new AggregatorRegistry();
  const startedAt = new Map<Worker, number>();
  /** Workers that listen and handle their own signals. */
  const ready = new Set<Worker>();
  /** Workers still starting when a SIGHUP came: they get it once ready. */
  const reloadWhenReady = new Set<Worker>();
  const restarts = new Set<NodeJS.Timeout>();
  let quickDeaths = 0;
  let stopping = false;
  /** Whether a worker ever listened: until one has, a worker that fails is the start failing. */
  let started = false;
  /** Set when the start failed: the primary stops its workers and exits 1. */
  let startFailed = false;

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
    worker.on('message', (message: MetricsRequest | WorkerReady) => {
      if (message?.type === WORKER_READY) {
        started = true;
        ready.add(worker);
        if (reloadWhenReady.delete(worker)) worker.process.kill('SIGHUP');
        return;
      }
      if (message?.type !== METRICS_REQUEST) return;
      registry.clusterMetrics().then(
        (text) => worker.send({ type: METRICS_ANSWER, id: message.id, text } satisfies MetricsAnswer),
        (err: unknown) => worker.send({ type: METRICS_ANSWER, id: message.id, error: (err as Error).message } satisfies MetricsAnswer),
      );
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    ready.delete(worker);
    reloadWhenReady.delete(worker);
    if (stopping) return;
    // A worker that exits with a failure before any worker listens could not start (a listener
    // that cannot be had, a store that refuses, its own message on stderr): the others would
    // fail the same way, so the gateway does not start, as one process would not (exit 1),
    // rather than starting workers again and again.
    if (!started && code !== 0 && code !== null) {
      log.fatal({ worker: worker.process.pid, code }, 'a worker could not start; stopping the gateway');
      startFailed = true;
      stop('SIGTERM');
      return;
    }
    quickDeaths = lived < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    const pause = quickDeaths === 0 ? 0 : Math.min(1_000 * 2 ** (quickDeaths - 1), MAX_RESTART_PAUSE_MS);
    log.error({ worker: worker.process.pid, code, signal, livedMs: lived, restartInMs: pause }, 'worker died; starting another');
    // Not unref'd: while every worker is dead, this timer is all that keeps the primary's event
    // loop running; unref'd, the primary would end there, exit 0, and nothing would serve
    // (https://nodejs.org/api/timers.html#timeoutunref).
    const timer = setTimeout(() => {
      restarts.delete(timer);
      fork();
    }, pause);
    restarts.add(timer);
  });
  // Nothing should let the event loop run dry before a stop; if it does, the exit is a failure,
  // so a supervisor that restarts on failure brings the gateway back
  // (https://nodejs.org/api/process.html#event-beforeexit).
  process.on('beforeExit', () => {
    if (stopping) return;
    log.fatal('the primary has nothing left to run while it should serve; exiting 1');
    process.exit(1);
  });

  for (let i = 0; i < count; i++) fork();
  log.info({ workers: count }, 'primary started its workers');

  const reload = () => {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    // A worker still starting could be ended by SIGHUP (Node's default before its own first
    // line, src/cli.ts); it reads the file as it starts, and gets the SIGHUP once ready, in case
    // the file changed after it read it.
    const starting = workers.filter((w) => !ready.has(w));
    log.info({ starting: starting.length }, 'SIGHUP: every worker reloads the configuration');
    for (const w of workers) {
      if (ready.has(w)) w.process.kill('SIGHUP');
      else reloadWhenReady.add(w);
    }
  };
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    log.info({ signal, workers: workers.length }, 'shutting down: every worker finishes its requests in flight');
    let failed = startFailed;
    let left = workers.length;
    if (left === 0) process.exit(failed ? 1 : 0);
    for (const w of workers) {
      const wasReady = ready.has(w);
      w.once('exit', (code: number | null, by: NodeJS.Signals | null) => {
        // A worker still starting may end by the signal itself (Node's default, before its
        // first line; SIGINT from a terminal reaches the whole process group): it had served
        // nothing, and that is a stop too.
        failed ||= !(code === 0 || (!wasReady && (by === 'SIGTERM' || by === 'SIGINT')));
        if (--left === 0) process.exit(failed ? 1 : 0);
      });
      w.process.kill('SIGTERM');
    }
    // A worker that does not finish past its own shutdown timeout (and a second) is ended.
    setTimeout(() => {
      for (const w of workers) if (!w.isDead()) w.process.kill('SIGKILL');
    }, shutdownTimeoutMs + 2_000).unref();
  };
  return (signal) => (signal === 'SIGHUP' ? reload() : stop(signal));
}

/** In a worker: the whole gateway's metrics, summed by the primary. */
export function clusterMetrics(): Promise<string> {
  const send = process.send?.bind(process);
  if (!send) return Promise.reject(new Error('not a cluster worker'));
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the primary did not answer for the metrics'));
    }, 10_000);
    const onMessage = (message: MetricsAnswer) => {
      if (message?.type !== METRICS_ANSWER || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.text !== undefined) resolve(message.text);
      else reject(new Error(message.error ?? 'no metrics'));
    };
    process.on('message', onMessage);
    send({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
  });
}
let nextId = 0;

/** In a worker: its registry is what the primary's requests get. */
export function shareMetrics(registry: Registry): void {
  // Constructing an AggregatorRegistry in a worker installs prom-client's answering listener.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}
