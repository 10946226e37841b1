// The command line, loaded by src/cli.ts once it holds the signals: argv -> loadConfig ->
// buildServer -> listen; signals -> close.
import cluster from 'node:cluster';
import { watch } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ADMIN_USAGE, CliError, runAdminCommand } from './admin/cli.js';
import { hashKey } from './auth/digest.js';
import { ConfigError, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { buildServer } from './app/server.js';
import { runPrimary, WORKER_READY, type WorkerReady } from './process/primary.js';
import { KEEPS_NOTHING, keepsNothing, lostOnRestart, probePersistence, volatileRefusal } from './redis/persistence.js';
import { displayUpstream } from './upstream/client.js';

/** What a signal does once the program has taken it over. */
export type SignalHandler = (signal: NodeJS.Signals) => void;

/** SIGTERM, SIGINT and SIGHUP, taken by src/cli.ts before the program was loaded. */
export interface HeldSignals {
  /** The first SIGTERM or SIGINT received and not handed over yet, if any. */
  stopRequested(): NodeJS.Signals | undefined;
  /** From now on signals go to `handler`; those received before are handed to it at once, in order. */
  handTo(handler: SignalHandler): void;
  /** Node's defaults again (a signal ends the process), for the commands that are not the gateway. */
  restoreDefaults(): void;
}

const USAGE = `explorer-gateway: a caching, quota-enforcing gateway in front of Blockscout explorers

Usage:
  explorer-gateway --config FILE [--host H] [--port N]   start the gateway (or GATEWAY_CONFIG=FILE)
  explorer-gateway check-config FILE                      validate a configuration file (or --config FILE)
  explorer-gateway hash-key KEY                           print the sha256 digest for keys[].sha256
  explorer-gateway --help

${ADMIN_USAGE}`;

function fail(message: string, code = 2): never {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(code);
}

export function summarise(config: Config, file: string): string {
  const lines = [`${file}: OK`];
  lines.push(`chains (${Object.keys(config.chains).length}):`);
  for (const [id, c] of Object.entries(config.chains)) {
    const key = c.upstreamApiKey ? ' (apikey sent)' : '';
    lines.push(`  ${id}  ${c.name}  ${c.upstreams.map(displayUpstream).join(', ')}${key}`);
  }
  lines.push(`plans (${Object.keys(config.plans).length}):`);
  for (const [name, p] of Object.entries(config.plans)) lines.push(`  ${name}  ${p.rps} rps, ${p.credits} credits ${p.period}`);
  lines.push(`keys (${config.keys.length}):`);
  for (const k of config.keys) {
    lines.push(`  ${k.name}  plan ${k.plan}, ${k.status}${k.chains ? `, chains ${k.chains.join(',')}` : ''}`);
  }
  lines.push(
    `quota store: ${config.redis ? `redis (${config.redis.cluster ? 'cluster' : 'single'}, onError ${config.redis.onError})` : 'in process'}`,
  );
  lines.push(`run-time keys, usage, audit: ${config.redis ? 'redis' : `${config.storage.path} (SQLite)`}`);
  lines.push(`admin API: ${config.admin.token === undefined ? 'off (no admin.token)' : `${config.admin.host}:${config.admin.port}`}`);
  return `${lines.join('\n')}\n`;
}

/** How long check-config and a cluster primary wait for Redis to answer before they say they could not check it. */
const PERSISTENCE_PROBE_MS = 2_000;

/**
 * Whether a start on this configuration's Redis would be refused (app/resources.ts judges the
 * start itself): the line check-config prints, and the refusal when Redis answered within
 * PERSISTENCE_PROBE_MS and keeps nothing on disk without `redis.volatile: true`.
 */
async function persistenceVerdict(config: Config): Promise<{ line: string; refusal?: string } | undefined> {
  const redis = config.redis;
  if (!redis) return undefined;
  const keysInRedis = config.storage.url === undefined;
  if (redis.volatile) {
    return {
      line: `redis persistence: not checked (redis.volatile: true): a restart of a Redis that keeps nothing on disk loses ${lostOnRestart(keysInRedis)}`,
    };
  }
  const nodes = await probePersistence(redis, PERSISTENCE_PROBE_MS);
  if (nodes === undefined) {
    return {
      line: `redis persistence: could not check: Redis did not answer within ${PERSISTENCE_PROBE_MS / 1000} s; the start is refused if it keeps nothing on disk (appendonly no, save ""), unless redis.volatile: true`,
    };
  }
  const volatile = nodes.filter(keepsNothing);
  if (volatile.length > 0) {
    return {
      line: `redis persistence: ${KEEPS_NOTHING} at ${volatile.map((n) => n.node).join(', ')}: the start will be refused`,
      refusal: volatileRefusal(volatile, keysInRedis),
    };
  }
  const shown = nodes.map((n) =>
    n.error === undefined ? `${n.node} appendonly ${n.appendonly}, save "${n.save}"` : `${n.node} not checked: ${n.error}`,
  );
  const unchecked = nodes.length === 0 || nodes.some((n) => n.error !== undefined);
  return {
    line: unchecked
      ? `redis persistence: could not check (${shown.join('; ') || 'no master found'}): the start goes on with a warning`
      : `redis persistence: kept on disk (${shown.join('; ')})`,
  };
}

async function checkConfig(file: string | undefined): Promise<void> {
  if (!file) fail(`check-config needs a FILE\n\n${USAGE}`);
  let config: Config;
  try {
    config = loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 1);
    throw err;
  }
  const verdict = await persistenceVerdict(config);
  process.stdout.write(summarise(config, file) + (verdict ? `${verdict.line}\n` : ''));
  if (verdict?.refusal) fail(`${file}: the start will be refused: ${verdict.refusal}`, 1);
}

async function serve(
  values: { config?: string | undefined; host?: string | undefined; port?: string | undefined },
  signals: HeldSignals,
): Promise<void> {
  const file = values.config ?? process.env.GATEWAY_CONFIG;
  if (!file) fail(`no configuration: pass --config FILE or set GATEWAY_CONFIG\n\n${USAGE}`);
  let config: Config;
  try {
    config = loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 1);
    throw err;
  }
  const host = values.host ?? config.server.host;
  const port = values.port === undefined ? config.server.port : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port: expected a port number, got ${values.port}`);

  // Signals caught while the program was loading reach JavaScript when the event loop next polls,
  // which comes before its check phase (https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick).
  // A stop among them ends the start here, before anything is opened: there is nothing to flush.
  await new Promise((resolve) => setImmediate(resolve));
  const early = signals.stopRequested();
  if (early !== undefined) {
    const log = pino({ level: config.log.level }, pino.destination({ dest: 1, sync: true }));
    log.info({ signal: early }, 'stopped while starting: nothing was opened');
    process.exit(0);
  }

  const workers = config.server.workers === 'auto' ? availableParallelism() : config.server.workers;
  if (workers > 1 && cluster.isPrimary) {
    // Judged here as each worker judges its own start: a worker that refuses would only be
    // started again and again by the primary.
    const refusal = (await persistenceVerdict(config))?.refusal;
    if (refusal !== undefined) {
      pino({ level: config.log.level }, pino.destination({ dest: 1, sync: true })).fatal({ err: refusal }, 'could not start');
      fail(`explorer-gateway: ${refusal}`, 1);
    }
    signals.handTo(runPrimary(workers, config.server.shutdownTimeoutMs, config.log.level));
    return;
  }

  const app = buildServer(config);
  app.gateway.log.info({ file, ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) }, 'starting');
  app.gateway.flushLogs(); // at once: an operator watching the start sees it began

  let closing = false;
  // Reload on SIGHUP, and on file changes when server.watchConfig is set. An invalid file is
  // rejected with its problems logged; the running configuration stays.
  const reload = (why: string) => {
    if (closing) return;
    try {
      const next = loadConfig(file);
      const notApplied = app.gateway.reload(next);
      app.gateway.log.info(
        { why, file, notApplied },
        notApplied.length ? 'configuration reloaded; some sections need a restart' : 'configuration reloaded',
      );
    } catch (err) {
      const problems = err instanceof ConfigError ? err.problems : [String(err)];
      app.gateway.log.error({ why, file, problems }, 'configuration rejected; keeping the running one');
    }
  };

  const close = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    app.gateway.log.info(
      { signal, timeoutMs: config.server.shutdownTimeoutMs },
      'shutting down: no new connections, finishing requests in flight',
    );
    let code = 0;
    // Past shutdownTimeoutMs the connections still open are closed: requests still in flight are
    // cut (exit code 1); connections that were only idle end as at their keep-alive timeout.
    const force = setTimeout(() => {
      const cut = app.gateway.inFlight();
      if (cut > 0) {
        code = 1;
        app.gateway.log.warn({ requests: cut }, 'shutdown timeout: closing the connections still open');
      } else {
        app.gateway.log.info('shutdown timeout: closing the idle connections still open');
      }
      app.server.closeAllConnections();
      setTimeout(() => {
        app.gateway.flushLogs();
        process.exit(1);
      }, 1_000).unref();
    }, config.server.shutdownTimeoutMs);
    force.unref();
    // The public listener drains first (answers say Connection: close, idle keep-alive
    // connections are answered 503 or end at their keep-alive timeout: app/server.ts); then the
    // rest closes: the admin and operations listeners, upstream pools, stores, the last flush.
    app.gateway
      .drain()
      .then(() => app.close())
      .then(
        () => {
          clearTimeout(force);
          process.exit(code);
        },
        (err: unknown) => {
          app.gateway.log.error({ err }, 'error while closing');
          app.gateway.flushLogs();
          process.exit(1);
        },
      );
  };
  let url: string;
  try {
    url = await app.listen({ host, port });
  } catch (err) {
    app.gateway.log.fatal({ err: (err as Error).message }, 'could not start');
    app.gateway.flushLogs();
    fail(`explorer-gateway: ${(err as Error).message}`, 1);
  }
  if (config.server.watchConfig) watchFile(file, reload);
  app.gateway.log.info({ url, ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) }, 'listening');
  // The signals received while starting take effect now, in order: a SIGHUP reloads, a stop stops.
  signals.handTo((signal) => (signal === 'SIGHUP' ? reload('SIGHUP') : close(signal)));
  // A worker tells the primary it listens and handles its signals (process/primary.ts holds a
  // SIGHUP for a worker until then).
  if (cluster.isWorker) process.send?.({ type: WORKER_READY } satisfies WorkerReady);
}

/** Calls `onChange` once after a burst of changes to `file` (editors write in several steps). */
function watchFile(file: string, onChange: (why: string) => void): void {
  let timer: NodeJS.Timeout | undefined;
  watch(dirname(file), (_event, name) => {
    if (name !== basename(file)) return;
    clearTimeout(timer);
    timer = setTimeout(() => onChange('file changed'), 200);
  }).unref();
}

export async function main(argv: string[], signals: HeldSignals): Promise<void> {
  // The admin commands have options of their own.
  if (argv[0] === 'keys' || argv[0] === 'usage') {
    signals.restoreDefaults();
    try {
      process.stdout.write(await runAdminCommand(argv[0], argv.slice(1)));
      return;
    } catch (err) {
      if (err instanceof CliError) fail(err.message, err.exitCode);
      throw err;
    }
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      host: { type: 'string' },
      port: { type: 'string', short: 'p' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, arg, extra] = positionals;
  if (values.help || command !== undefined) signals.restoreDefaults();
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'check-config') return await checkConfig(arg ?? values.config);
  if (command === 'hash-key') {
    if (arg === undefined || arg === '' || extra !== undefined) fail(`hash-key needs exactly one KEY\n\n${USAGE}`);
    process.stdout.write(`${hashKey(arg)}\n`);
    return;
  }
  if (command !== undefined) fail(`unknown command: ${command}\n\n${USAGE}`);
  await serve(values, signals);
}

/** Runs the command line; exits non-zero with a message on any error. */
export function run(argv: string[], signals: HeldSignals): void {
  main(argv, signals).catch((err: unknown) => {
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) fail(`${err.message}\n\n${USAGE}`);
    fail(`explorer-gateway: ${err instanceof Error ? err.message : String(err)}`, 1);
  });
}
