// The command line, loaded by src/cli.ts once it holds the signals: argv -> loadConfig ->
// buildServer -> listen; signals -> close.
import cluster from 'node:cluster';
import { readFileSync, watch } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ADMIN_USAGE, CliError, runAdminCommand, type AdminCommand } from './admin/cli.js';
import { hashKey } from './auth/digest.js';
import { ConfigError, loadConfig } from './config/load.js';
import { adminTokens, type Config } from './config/schema.js';
import { buildServer, PlansInUseError } from './app/server.js';
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
  explorer-gateway hash-key [KEY]                         print the sha256 digest for keys[].sha256 (KEY read from stdin if not given)
  explorer-gateway --version                              print the version
  explorer-gateway [COMMAND [SUBCOMMAND]] --help          this text, or one command's

Options of the start:
  -c, --config FILE   the configuration file (else GATEWAY_CONFIG)
      --host H        listen on H instead of server.host
  -p, --port N        listen on N instead of server.port
SIGTERM or SIGINT drains the requests in flight and stops; SIGHUP reloads the configuration.

${ADMIN_USAGE}`;

const CHECK_CONFIG_USAGE = `Usage:
  explorer-gateway check-config FILE
  explorer-gateway check-config --config FILE

Validates FILE. If it is valid, prints a summary (chains, plans, keys by name, stores, the admin
address) and exits 0; otherwise lists every problem on stderr (FILE:LINE: key.path: message) and
exits 1. With redis and without redis.volatile: true, it also asks that Redis (2 s at most)
whether it keeps anything on disk, and exits 1 when the start would be refused.
`;

const HASH_KEY_USAGE = `Usage:
  explorer-gateway hash-key KEY
  explorer-gateway hash-key < FILE

Prints the sha256 hex digest of KEY, to store in keys[].sha256 instead of the key itself.
Without KEY, the key is read from stdin: one line, its trailing newline not part of it; the key
then stays out of the shell's history and of the process list:
  printf '%s\n' "$KEY" | explorer-gateway hash-key
An empty stdin, or one holding more than one line, is refused (exit 2).
`;

/** What each admin command does, under its usage line (ADMIN_USAGE has the lines, so they cannot drift). */
const ADMIN_COMMANDS: Record<string, string> = {
  'keys create': 'Creates a key on PLAN and prints it, with its secret (key): shown in this answer only.',
  'keys list': 'Lists the keys, those of OWNER, PLAN or a status only if given.',
  'keys show': 'Shows one key: its plan, status, chains, expiry, credits and spend.',
  'keys update': "Changes a key's plan, status, name, owner, chains or expiry (--expires never: none).",
  'keys credits': 'Adds AMOUNT bought credits (a positive integer) to the key.',
  'keys roll':
    'Gives the key a new secret (same id, plan, balance, usage); the old one is refused after --grace SECONDS (default 0: at once; at most 30 days).',
  'keys revoke': 'Revokes the key: its secret is refused from now on.',
  usage:
    'Prints usage (requests, credits, cache hits, refusals, errors) per day (--granularity hour: per hour), key, account, chain and route; --account ID: the rows counted under that account; --format csv for a spreadsheet.',
  plans:
    "Lists, shows, makes, changes and deletes plans made at run time (the configuration's are listed, read-only); a change reaches every process within a second and keeps what was spent.",
  webhooks:
    'Lists, shows, makes, changes and deletes webhooks (credits.threshold, credits.exhausted, key.expiring, key.created, key.revoked), and lists their deliveries and sends one again.',
  accounts:
    'Lists, shows, makes, changes and deletes accounts: customers whose keys (keys create --account ID) share a plan, its limits, credits and rate.',
};

const ADMIN_WHERE = `Where the admin API is: --admin-url URL, else EGW_ADMIN_URL, else the admin address of --config
FILE. URL is the admin listener's address, with or without /admin/v1: http://127.0.0.1:9091 and
http://127.0.0.1:9091/admin/v1 are the same. The token: EGW_ADMIN_TOKEN, else admin.token of
--config FILE. Exit status: 0 done; 1 the API refused (its message on stderr) or did not answer;
2 a malformed command.
`;

/** The help of the program (no command), of check-config or of hash-key; undefined for another command. */
export function commandHelp(command: string | undefined): string | undefined {
  if (command === undefined) return USAGE;
  if (command === 'check-config') return CHECK_CONFIG_USAGE;
  if (command === 'hash-key') return HASH_KEY_USAGE;
  return undefined;
}

/** The usage lines of ADMIN_USAGE for `command` (`keys`, `keys create`, `usage`). */
function adminUsageLines(command: string): string[] {
  return ADMIN_USAGE.split('\n')
    .map((line) => line.trim())
    .filter((line) => line === `explorer-gateway ${command}` || line.startsWith(`explorer-gateway ${command} `));
}

/** The help of `keys`, of `keys SUBCOMMAND` or of `usage`. */
function adminHelp(command: string): string {
  const lines = adminUsageLines(command);
  if (command === 'keys') {
    const subs = Object.entries(ADMIN_COMMANDS).filter(([name]) => name.startsWith('keys '));
    return `Usage:\n${lines.map((l) => `  ${l}`).join('\n')}\n\n${subs
      .map(([name, what]) => `  ${name.slice('keys '.length).padEnd(8)} ${what}`)
      .join('\n')}\n\nexplorer-gateway keys SUBCOMMAND --help: one subcommand's options.\n\n${ADMIN_WHERE}`;
  }
  return `Usage:\n${lines.map((l) => `  ${l}`).join('\n')}\n\n${ADMIN_COMMANDS[command] ?? ''}\n\n${ADMIN_WHERE}`;
}

const KEYS_SUBCOMMANDS = Object.keys(ADMIN_COMMANDS)
  .filter((name) => name.startsWith('keys '))
  .map((name) => name.slice('keys '.length));

/**
 * The help `argv` (after `keys` or `usage`) asks for, or undefined when it asks for none: with
 * `--help` or `-h` before any `--`, the first word that is no option's value names the subcommand.
 */
export function adminHelpAsked(command: AdminCommand, argv: readonly string[]): string | undefined {
  let asked = false;
  let sub: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '--help' || arg === '-h') asked = true;
    else if (arg.startsWith('-')) {
      // Every other option of the admin commands takes a value: the next word, unless given with =.
      if (!arg.includes('=') && arg !== '-') i++;
    } else sub ??= arg;
  }
  if (!asked) return undefined;
  if (command !== 'keys') return adminHelp(command);
  return sub !== undefined && KEYS_SUBCOMMANDS.includes(sub) ? adminHelp(`keys ${sub}`) : adminHelp('keys');
}

/**
 * The admin API's base URL from the listener's address as an operator writes it: with or
 * without /admin/v1, with or without a trailing slash (and behind a proxy, with the proxy's path
 * before /admin/v1). Anything but an http(s) URL is refused with what to write.
 */
export function adminApiUrl(raw: string, what: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    url = new URL('invalid:');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new CliError(
      `${what}: expected the admin listener's address, such as http://127.0.0.1:9091 (with or without /admin/v1), got ${JSON.stringify(raw)}`,
      2,
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  const base = /\/admin\/v1$/.test(path) ? path : /\/admin$/.test(path) ? `${path}/v1` : `${path}/admin/v1`;
  return `${url.origin}${base}`;
}

/** `argv` and `env` with the admin URL they give, if any, as the API's base URL (adminApiUrl). */
function withAdminUrl(argv: readonly string[], env: NodeJS.ProcessEnv): { argv: string[]; env: NodeJS.ProcessEnv } {
  const args = [...argv];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg === '--admin-url' && i + 1 < args.length) {
      args[i + 1] = adminApiUrl(args[i + 1]!, '--admin-url');
      i++;
    } else if (arg.startsWith('--admin-url=')) {
      args[i] = `--admin-url=${adminApiUrl(arg.slice('--admin-url='.length), '--admin-url')}`;
    }
  }
  const given = env.EGW_ADMIN_URL;
  return { argv: args, env: given === undefined || given === '' ? env : { ...env, EGW_ADMIN_URL: adminApiUrl(given, 'EGW_ADMIN_URL') } };
}

/** package.json's version: dist/ and src/ are both one folder below it. */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The key hash-key reads from stdin: one line, without its newline (`\n` or `\r\n`). From a
 * terminal, the first line typed (a prompt on stderr says so); from a pipe or file, all of it.
 */
async function keyFromStdin(): Promise<string> {
  const stdin = process.stdin;
  const terminal = stdin.isTTY === true;
  if (terminal) process.stderr.write('hash-key: type the key, then Enter: ');
  let text = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin as AsyncIterable<string>) {
    text += chunk;
    if (terminal && text.includes('\n')) {
      text = text.slice(0, text.indexOf('\n') + 1);
      break;
    }
  }
  stdin.destroy();
  const key = text.replace(/\r?\n$/, '');
  if (key === '')
    fail(`hash-key: no key on stdin: pass KEY, or write the key to stdin (printf '%s\\n' "$KEY" | explorer-gateway hash-key)`);
  if (/[\r\n]/.test(key)) fail('hash-key: stdin holds more than one line; a key is one line');
  return key;
}

function fail(message: string, code = 2): never {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(code);
}

/** A database URL as a console may show it: host, port and database, never the user or password. */
function databaseDisplay(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return 'storage.url';
  }
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
  // The records' store as store/open.ts chooses it: storage.url first, then Redis, then the SQLite file.
  const records = config.storage.url
    ? `PostgreSQL (${databaseDisplay(config.storage.url)})`
    : config.redis
      ? 'redis'
      : `${config.storage.path} (SQLite)`;
  lines.push(`run-time keys, usage, audit: ${records}`);
  lines.push(
    `admin API: ${adminTokens(config.admin).length === 0 ? 'off (no admin.token or admin.tokens)' : `${config.admin.host}:${config.admin.port}`}`,
  );
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
  if (!file) fail(`check-config needs a FILE\n\n${CHECK_CONFIG_USAGE}`);
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
    const primary = runPrimary(workers, config.server.shutdownTimeoutMs, config.log.level);
    signals.handTo(primary);
    stopWithNpm(() => {
      pino({ level: config.log.level }, pino.destination({ dest: 1, sync: true })).warn(NPM_GONE);
      primary('SIGTERM');
    });
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
      app.gateway.metrics.reloaded('ok');
      app.gateway.log.info(
        { why, file, notApplied },
        notApplied.length ? 'configuration reloaded; some sections need a restart' : 'configuration reloaded',
      );
    } catch (err) {
      if (err instanceof PlansInUseError) {
        // The file is valid but would leave keys without their plan (app/state.ts reload).
        app.gateway.metrics.reloaded('refused');
        const plans = err.inUse.map((u) => ({ plan: u.plan, keys: u.keys, accounts: u.accounts }));
        app.gateway.log.error(
          { why, file, plans, problems: [err.message] },
          'configuration refused: it removes plans still in use (move their keys first, as the admin API asks); keeping the running one',
        );
        return;
      }
      app.gateway.metrics.reloaded('invalid');
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
    // Each listener that cannot be had stops the start; the admin and operations listeners name
    // themselves (app/server.ts, app/ops.ts), fastify's own error is the public one's.
    const { message, syscall } = err as NodeJS.ErrnoException;
    const why = syscall === 'listen' ? `public listener (server.port): cannot listen on ${host}:${port}: ${message}` : message;
    app.gateway.log.fatal({ err: why }, 'could not start');
    app.gateway.flushLogs();
    fail(`explorer-gateway: ${why}`, 1);
  }
  if (config.server.watchConfig) watchFile(file, reload);
  app.gateway.log.info({ url, ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) }, 'listening');
  // The signals received while starting take effect now, in order: a SIGHUP reloads, a stop stops.
  signals.handTo((signal) => (signal === 'SIGHUP' ? reload('SIGHUP') : close(signal)));
  if (!cluster.isWorker) {
    stopWithNpm(() => {
      app.gateway.log.warn(NPM_GONE);
      close('SIGTERM');
    });
  }
  // A worker tells the primary it listens and handles its signals (process/primary.ts holds a
  // SIGHUP for a worker until then).
  if (cluster.isWorker) process.send?.({ type: WORKER_READY } satisfies WorkerReady);
}

/** How often a gateway started by `npm start` looks whether npm is still its parent. */
const PARENT_CHECK_MS = 1_000;
const NPM_GONE = 'npm start, which started the gateway, is gone: stopping as on SIGTERM';

/**
 * Under `npm start`, npm is the gateway's parent: package.json's start script execs node, so no
 * shell stands between them, and npm passes SIGTERM and SIGINT on and waits for the gateway to
 * end. An npm that ends otherwise (SIGKILL, a crash, its terminal closed) leaves nobody who will
 * stop the gateway: `stop` is called once npm is gone (the parent changed), within
 * PARENT_CHECK_MS. A gateway not started by npm's start script keeps running when its parent
 * ends (a shell that started it in the background, for one).
 */
function stopWithNpm(stop: () => void): void {
  if (process.env.npm_lifecycle_event !== 'start') return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, PARENT_CHECK_MS).unref();
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
  if (argv[0] === 'keys' || argv[0] === 'usage' || argv[0] === 'plans' || argv[0] === 'accounts' || argv[0] === 'webhooks') {
    const command = argv[0];
    signals.restoreDefaults();
    try {
      const help = adminHelpAsked(command, argv.slice(1));
      if (help !== undefined) return void process.stdout.write(help);
      const given = withAdminUrl(argv.slice(1), process.env);
      process.stdout.write(await runAdminCommand(command, given.argv, given.env));
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
      version: { type: 'boolean' },
    },
  });
  const [command, arg, extra] = positionals;
  if (values.help || values.version || command !== undefined) signals.restoreDefaults();
  if (values.version) return void process.stdout.write(`${version()}\n`);
  if (values.help) {
    const help = commandHelp(command);
    if (help === undefined) fail(`unknown command: ${command}\n\n${USAGE}`);
    return void process.stdout.write(help);
  }
  if (command === 'check-config') return await checkConfig(arg ?? values.config);
  if (command === 'hash-key') {
    if (arg === '' || extra !== undefined) fail(`hash-key takes one KEY, or reads it from stdin\n\n${HASH_KEY_USAGE}`);
    process.stdout.write(`${hashKey(arg ?? (await keyFromStdin()))}\n`);
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
