// Faults of the process itself: a signal at any moment of the start, a cluster whose workers get
// SIGHUP while they start or die, and the end of keep-alive connections at shutdown.
//
// The real CLI runs in child processes, many times. To keep seventy starts within a minute on two
// cores it runs as JavaScript: the suite does not build dist/, so src/ is transpiled once into a
// temporary directory (TypeScript's transpileModule: the build's output without its type check),
// and `node cli.js` costs about half the CPU of `node --import tsx src/cli.ts`.
//
// Whether the program's own first lines have run is read from /proc/PID/status (proc(5), SigCgt:
// the signals the process catches): src/cli.ts takes SIGHUP there, and Node itself never does at
// boot. A signal that lands before them gets Node's default (the process ends by that signal, with
// nothing of the gateway loaded): no program can act before its first line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, closedPort, DEMO_KEY } from '../support/gateway.js';
import { connect as connectRedis, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

let build: string;
let cli: string;
const dirs: string[] = [];

/** src/ as JavaScript in `dir`/dist (its .lua and .sql files as they are), beside a link to the repository's node_modules. */
function transpile(dir: string): string {
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const src = join(ROOT, 'src');
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : /\.(ts|lua|sql)$/.test(e.name) ? [join(d, e.name)] : [],
    );
  for (const file of walk(src)) {
    // The Lua scripts and SQL migrations are read at start from beside the modules, as the build
    // copies them (scripts/copy-assets.js).
    if (!file.endsWith('.ts')) {
      const copy = join(dir, 'dist', relative(src, file));
      mkdirSync(dirname(copy), { recursive: true });
      writeFileSync(copy, readFileSync(file));
      continue;
    }
    const out = join(dir, 'dist', relative(src, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true },
    });
    writeFileSync(out, outputText);
  }
  return join(dir, 'dist', 'cli.js');
}

beforeAll(() => {
  build = mkdtempSync(join(tmpdir(), 'egw-built-cli-'));
  cli = transpile(build);
}, 60_000);
afterAll(() => {
  unlinkSync(join(build, 'node_modules')); // the link, never what it points to
  rmSync(build, { recursive: true, force: true });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  output(): string;
  /** Milliseconds since spawn at which the `listening` line was seen, if it was. */
  listenedAt(): number | undefined;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  started: number;
}

function start(file: string): Run {
  const child = spawn(process.execPath, [cli, '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const started = Date.now();
  let output = '';
  let listenedAt: number | undefined;
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
    if (listenedAt === undefined && output.includes('"msg":"listening"')) listenedAt = Date.now() - started;
  });
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  return { child, output: () => output, listenedAt: () => listenedAt, exited, started };
}

/** Whether process `pid` catches `signo` (proc(5): SigCgt, a hexadecimal mask, bit signo - 1). */
function catches(pid: number, signo: number): boolean {
  try {
    const line = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line !== null && ((BigInt(`0x${line[1]}`) >> BigInt(signo - 1)) & 1n) === 1n;
  } catch {
    return false; // gone
  }
}
const SIGHUP = 1;

/** The process's exit, or SIGKILL after `ms` (then `killed`). */
async function exitWithin(run: Run, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), ms)));
  const first = await Promise.race([run.exited, late]);
  clearTimeout(timer);
  if (first !== 'late') return { ...first, killed: false };
  run.child.kill('SIGKILL');
  return { ...(await run.exited), killed: true };
}

/** Runs `task(0..count-1)`, `width` at a time. */
async function inBatches<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** A configuration file of its own (its own embedded store), on port 0. */
function configFile(extra: Record<string, unknown> = {}): { file: string; write(c: Record<string, unknown>): void } {
  const dir = mkdtempSync(join(tmpdir(), 'egw-faults-'));
  dirs.push(dir);
  const file = join(dir, 'gateway.yaml');
  const write = (c: Record<string, unknown>) =>
    writeFileSync(
      file,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { path: join(dir, 'gateway.db') },
        chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
        plans: { free: { rps: 100, credits: 1_000_000 } },
        keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
        log: { level: 'info', requests: false },
        health: { probeIntervalMs: 60_000 },
        ...c,
      }),
    );
  write(extra);
  return { file, write };
}

const listeningUrl = (output: string) => /"url":"(http:\/\/[^"]+)","msg":"listening"/.exec(output)?.[1];
const random = (max: number) => Math.random() * max;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a start takes to listen, `width` at a time (as the runs will be): the longest of one batch. */
async function timeToListen(width: number): Promise<number> {
  const times = await inBatches(width, width, async () => {
    const run = start(configFile().file);
    await until(() => run.listenedAt(), 'a calibration start to listen', 30_000);
    run.child.kill('SIGTERM');
    await run.exited;
    return run.listenedAt()!;
  });
  return Math.max(...times);
}

describe('a signal at any moment of the start', () => {
  const WIDTH = 4;
  let listenMs: number;
  beforeAll(async () => {
    listenMs = await timeToListen(WIDTH);
  }, 60_000);

  it('SIGTERM or SIGINT stops it as a normal stop (exit 0, its shutdown logged), 50 starts, never needing SIGKILL', async () => {
    const began = Date.now();
    const runs = await inBatches(50, WIDTH, async (i) => {
      const sent: NodeJS.Signals = i % 5 === 4 ? 'SIGINT' : 'SIGTERM';
      const run = start(configFile().file);
      await delay(random(listenMs));
      const armed = catches(run.child.pid!, SIGHUP);
      const beforeListening = run.listenedAt() === undefined;
      run.child.kill(sent);
      const sentAt = Date.now();
      const end = await exitWithin(run, 15_000);
      return { i, sent, armed, beforeListening, ...end, exitMs: Date.now() - sentAt, output: run.output() };
    });
    const summary = {
      listenMs,
      totalMs: Date.now() - began,
      armed: runs.filter((r) => r.armed).length,
      stoppedBeforeListening: runs.filter((r) => r.armed && r.beforeListening).length,
      stoppedBeforeOpening: runs.filter((r) => r.output.includes('stopped while starting')).length,
      endedByDefault: runs.filter((r) => r.signal !== null && !r.killed).length,
      neededSigkill: runs.filter((r) => r.killed).length,
      slowestExitMs: Math.max(...runs.map((r) => r.exitMs)),
    };
    console.log('start-up stops:', JSON.stringify(summary));
    for (const r of runs) {
      const what = `run ${r.i} (${r.sent}, armed ${r.armed}):\n${r.output}`;
      expect(r.killed, what).toBe(false);
      if (r.armed) {
        // Its own first lines had run: a normal stop, before anything was opened or through the
        // shutdown.
        expect({ code: r.code, signal: r.signal }, what).toEqual({ code: 0, signal: null });
        expect(r.output, what).toContain(`"signal":"${r.sent}"`);
        expect(r.output, what).toMatch(/"msg":"(shutting down|stopped while starting)/);
      } else if (r.signal !== null) {
        // Node's default, before the program's first line: nothing of the gateway had run.
        expect(r.signal, what).toBe(r.sent);
        expect(r.output, what).toBe('');
      } else {
        expect(r.code, what).toBe(0);
      }
    }
    expect(summary.stoppedBeforeListening).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it('SIGHUP is held and applied once it listens (a reload), 10 starts; the process keeps serving', async () => {
    const began = Date.now();
    const runs = await inBatches(10, WIDTH, async (i) => {
      const config = configFile();
      const run = start(config.file);
      try {
        await delay(random(listenMs));
        // Before the program's first line SIGHUP would end it (Node's default): wait for it.
        await until(() => catches(run.child.pid!, SIGHUP) || run.child.exitCode !== null, 'the signals to be taken', 30_000);
        config.write({ plans: { free: { rps: 4242, credits: 1_000_000 } } });
        const beforeListening = run.listenedAt() === undefined;
        run.child.kill('SIGHUP');
        const what = () => `run ${i}:\n${run.output()}`;
        await until(() => listeningUrl(run.output()) ?? run.child.exitCode !== null, 'listening', 30_000);
        await until(() => run.output().includes('"why":"SIGHUP"') || run.child.exitCode !== null, 'the reload', 30_000);
        expect(run.child.exitCode, what()).toBe(null);
        expect(run.output(), what()).toMatch(/"why":"SIGHUP"[^\n]*"msg":"configuration reloaded"/);
        const res = await fetch(listeningUrl(run.output())! + BALANCES, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
        await res.arrayBuffer();
        expect(res.status, what()).toBe(200);
        expect(res.headers.get('x-ratelimit-limit'), what()).toBe('4242');
        run.child.kill('SIGTERM');
        expect((await exitWithin(run, 15_000)).code, what()).toBe(0);
        return { beforeListening };
      } finally {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
      }
    });
    console.log(
      'start-up reloads:',
      JSON.stringify({ listenMs, totalMs: Date.now() - began, beforeListening: runs.filter((r) => r.beforeListening).length }),
    );
  }, 120_000);
});

describe('a cluster primary (server.workers: 2)', () => {
  const redis = connectRedis();
  const prefix = testPrefix('faults-cluster');
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('keeps serving after a SIGHUP while its workers start, replaces workers killed with SIGKILL, never exits 0 while serving', async () => {
    const port = await closedPort();
    const config = configFile({
      server: { host: '127.0.0.1', port, workers: 2 },
      // The suites' Redis keeps nothing on disk (test/support/global-redis.ts): a throwaway.
      redis: { url: REDIS_URL, keyPrefix: prefix, volatile: true },
      plans: { free: { rps: 100_000, credits: 100_000_000 } },
    });
    const run = start(config.file);
    const url = `http://127.0.0.1:${port}`;
    const pids = () => [...new Set([...run.output().matchAll(/"pid":(\d+),[^\n]*"msg":"listening"/g)].map((m) => Number(m[1])))];
    const what = () => run.output();
    const serving = async () => {
      try {
        const res = await fetch(url + BALANCES, { headers: { authorization: `Bearer ${DEMO_KEY}`, connection: 'close' } });
        await res.arrayBuffer();
        return res.status === 200;
      } catch {
        return false;
      }
    };
    try {
      await until(() => run.output().includes('primary started its workers'), 'the primary to fork', 30_000);
      // The workers are starting now: a SIGHUP from config management or logrotate.
      run.child.kill('SIGHUP');
      await until(() => pids().length >= 2 || run.child.exitCode !== null, 'two workers to listen', 30_000);
      expect(run.child.exitCode, what()).toBe(null);
      // The SIGHUP reached each worker once it was up: both reloaded.
      await until(
        () => run.output().match(/"why":"SIGHUP"[^\n]*"msg":"configuration reloaded"/g)?.length === 2 || run.child.exitCode !== null,
        'both workers to reload',
        30_000,
      );
      expect(run.child.exitCode, what()).toBe(null);
      expect(await serving()).toBe(true);

      // One worker killed: another takes its place.
      const [first, second] = pids();
      process.kill(first!, 'SIGKILL');
      await until(() => pids().length >= 3 || run.child.exitCode !== null, 'a third worker to listen', 30_000);
      expect(run.child.exitCode, what()).toBe(null);
      expect(await serving()).toBe(true);

      // Both workers killed at once: the primary waits (back-off) and starts two more; it does not exit.
      const third = pids().find((p) => p !== first && p !== second)!;
      process.kill(second!, 'SIGKILL');
      process.kill(third, 'SIGKILL');
      await until(() => pids().length >= 5 || run.child.exitCode !== null, 'two more workers to listen', 30_000);
      expect(run.child.exitCode, what()).toBe(null);
      await until(serving, 'the cluster to serve again', 30_000);
      expect(run.child.exitCode, what()).toBe(null);

      run.child.kill('SIGTERM');
      expect((await exitWithin(run, 20_000)).code, what()).toBe(0);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
      for (const pid of pids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }, 90_000);
});

/** What one raw HTTP/1.1 exchange on a connection came to. */
type Outcome =
  | { kind: 'answer'; status: number; connection: string | undefined }
  /** The server closed the connection before the request was written: a clean close. */
  | { kind: 'closed-before-sent' }
  /** The request was written and the connection ended without an answer, or was reset. */
  | { kind: 'no-answer'; error: string };

/** A client connection that writes requests itself, to see exactly what happens to each. */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private error: string | undefined;
  private waiter: (() => void) | undefined;
  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.waiter?.();
    });
    socket.on('end', () => {
      this.ended = true;
      this.waiter?.();
    });
    socket.on('error', (err: Error & { code?: string }) => {
      this.error = err.code ?? err.message;
      this.ended = true;
      this.waiter?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiter?.();
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Writes a GET of `path` and reads its answer. */
  async get(path: string, headers: Record<string, string> = {}): Promise<Outcome> {
    if (this.ended) return { kind: 'closed-before-sent' };
    let head = `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    this.socket.write(`${head}\r\n`);
    for (;;) {
      const answer = this.parse();
      if (answer) return answer;
      if (this.ended) return { kind: 'no-answer', error: this.error ?? 'closed' };
      await new Promise<void>((r) => (this.waiter = r));
    }
  }

  /** One whole answer off the buffer (Content-Length or chunked), or undefined if not all here yet. */
  private parse(): Outcome | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const fields = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    let at = end + 4;
    const length = fields.get('content-length');
    if (length !== undefined) {
      if (this.buffer.length < at + Number(length)) return undefined;
      at += Number(length);
    } else if (fields.get('transfer-encoding') === 'chunked') {
      for (;;) {
        const lineEnd = this.buffer.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(this.buffer.subarray(at, lineEnd).toString('latin1'), 16);
        if (this.buffer.length < lineEnd + 2 + size + 2) return undefined;
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    }
    this.buffer = this.buffer.subarray(at);
    return { kind: 'answer', status, connection: fields.get('connection') };
  }
}

describe('shutdown with keep-alive connections', () => {
  it('the answer in flight says Connection: close; kept-alive connections, busy or idle, end on an answer that says so, never a reset', async () => {
    const config = configFile({
      server: { host: '127.0.0.1', port: 0, keepAliveTimeoutMs: 4_000, shutdownTimeoutMs: 20_000 },
      cache: { ttlSeconds: { 'token-balances': 0 } },
    });
    const run = start(config.file);
    const release = fixture().hold();
    try {
      await until(() => listeningUrl(run.output()), 'listening', 30_000);
      const port = Number(new URL(listeningUrl(run.output())!).port);
      const open = (n: number) => Promise.all(Array.from({ length: n }, () => RawConnection.open(port)));
      // Idle keep-alive connections, each having had one answer.
      const idle = await open(10);
      const quiet = await RawConnection.open(port); // never sends again
      for (const c of [...idle, quiet])
        expect(await c.get('/no-such-path')).toMatchObject({ kind: 'answer', status: 404, connection: 'keep-alive' });
      // One request in flight: the explorer holds its answer.
      const hits = fixture().hits();
      const inFlight = (await RawConnection.open(port)).get(BALANCES, { authorization: `Bearer ${DEMO_KEY}` });
      await until(() => fixture().hits() === hits + 1, 'the request to reach the explorer');
      // Busy clients: each sends its next request as soon as it has an answer, across the moment
      // the server decides to close, until an answer says Connection: close or the connection ends.
      let answered = 0;
      const busy = (await open(20)).map(async (c) => {
        const seen: Outcome[] = [];
        for (;;) {
          const outcome = await c.get('/no-such-path');
          seen.push(outcome);
          if (outcome.kind !== 'answer' || outcome.connection === 'close') return seen;
          answered++;
        }
      });
      await until(() => answered >= 200, 'the busy clients to get going');

      run.child.kill('SIGTERM');
      await until(() => run.output().includes('"msg":"shutting down'), 'the shutdown to begin');
      // The idle clients send their next request now that the server has decided to close.
      const next = await Promise.all(idle.map((c) => c.get('/no-such-path')));
      release();
      const answer = await inFlight;
      const busySeen = await Promise.all(busy);

      expect(answer).toEqual({ kind: 'answer', status: 200, connection: 'close' });
      for (const outcome of next) {
        expect([{ kind: 'answer', status: 503, connection: 'close' }, { kind: 'closed-before-sent' }]).toContainEqual(outcome);
      }
      for (const seen of busySeen) {
        // No request was ever left without an answer, and the last answer said Connection: close.
        expect(seen.filter((o) => o.kind === 'no-answer')).toEqual([]);
        const last = seen.at(-1)!;
        if (last.kind === 'answer') expect(last.connection).toBe('close');
      }
      // The quiet connection ends at its keep-alive timeout; then the process exits 0 on its own.
      const end = await exitWithin(run, 15_000);
      expect(end, run.output()).toMatchObject({ code: 0, killed: false });
      expect(run.output()).not.toContain('shutdown timeout');
      expect(quiet.closed).toBe(true);
    } finally {
      release();
      fixture().reset();
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    }
  }, 60_000);
});
