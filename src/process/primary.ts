// `server.workers` > 1: one primary process and N workers serving one port (node:cluster; the
// primary hands connections out round robin, https://nodejs.org/api/cluster.html#how-it-works).
// Every worker is a whole gateway (request path, admin API, operations listener) on one Redis,
// which holds what they share: balances, rate windows, run-time keys, usage, cache fills. The
// primary serves nothing itself: it starts the workers, replaces one that dies (logged, with a
// growing pause when they keep dying at once), passes SIGHUP on (each worker reloads the file),
// drains them all on SIGTERM, and answers their requests for the whole gateway's metrics
// (prom-client's AggregatorRegistry sums what every worker counted).
import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';

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

/** A worker that dies within this long of its start is dying at once: the next start waits. */
const QUICK_DEATH_MS = 10_000;
const MAX_RESTART_PAUSE_MS = 30_000;

export function runPrimary(count: number, shutdownTimeoutMs: number, level: string): void {
  const log = pino({ level, base: { pid: process.pid, role: 'primary' } });
  const registry = new AggregatorRegistry();
  const startedAt = new Map<Worker, number>();
  let quickDeaths = 0;
  let stopping = false;

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
    worker.on('message', (message: MetricsRequest) => {
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
    if (stopping) return;
    quickDeaths = lived < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    const pause = quickDeaths === 0 ? 0 : Math.min(1_000 * 2 ** (quickDeaths - 1), MAX_RESTART_PAUSE_MS);
    log.error({ worker: worker.process.pid, code, signal, livedMs: lived, restartInMs: pause }, 'worker died; starting another');
    setTimeout(fork, pause).unref();
  });

  for (let i = 0; i < count; i++) fork();
  log.info({ workers: count }, 'primary started its workers');

  process.on('SIGHUP', () => {
    log.info('SIGHUP: every worker reloads the configuration');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGHUP');
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    log.info({ signal, workers: workers.length }, 'shutting down: every worker finishes its requests in flight');
    let failed = false;
    let left = workers.length;
    if (left === 0) process.exit(0);
    for (const w of workers) {
      w.once('exit', (code) => {
        failed ||= code !== 0;
        if (--left === 0) process.exit(failed ? 1 : 0);
      });
      w.process.kill('SIGTERM');
    }
    // A worker that does not finish past its own shutdown timeout (and a second) is ended.
    setTimeout(() => {
      for (const w of workers) if (!w.isDead()) w.process.kill('SIGKILL');
    }, shutdownTimeoutMs + 2_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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
