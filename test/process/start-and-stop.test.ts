// Starting and stopping as an operator and an orchestrator do. `npm start` (the README's start
// command, package.json's prestart and start scripts, run by npm itself): SIGTERM or SIGINT sent
// to npm's pid alone stops the gateway, and npm waits for it; an npm ended by SIGKILL leaves no
// gateway behind. And every listener that cannot be had (public, admin, operations; one process
// or workers) stops the start with exit 1 and a message naming it.
//
// npm runs in a copy of the package (package.json, tsconfig, src/, node_modules linked, a
// config/gateway.yaml of the test's own), so its build writes no dist/ of the checkout. The first
// run builds it (prestart: npm run build, as an operator's does); the others reuse that build
// with --ignore-scripts, which skips prestart only (npm docs, ignore-scripts).
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ADMIN_TOKEN } from '../support/admin.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { closedPort } from '../support/gateway.js';
import { deletePrefix, connect, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const fixture = useFixtureExplorer();

/** Whether a process `pid` runs: /proc has it and it is no zombie (one whose parent is gone may stay one). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface Run {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Run[] = [];
/** `command` in `cwd`, in a process group of its own (so a signal to its pid reaches it alone). */
function start(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Run {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const run = { child, output: () => output, exited };
  started.push(run);
  return run;
}
afterEach(() => {
  // Whatever a failed test left running, its whole group.
  for (const { child } of started.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

describe('npm start', () => {
  let dir: string;
  let port: number;
  const nodePids: number[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'egw-npm-start-'));
    for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(ROOT, file), join(dir, file));
    cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
    // The build copies src/'s .lua and .sql files into dist/ with this script (package.json).
    cpSync(join(ROOT, 'scripts', 'copy-assets.js'), join(dir, 'scripts', 'copy-assets.js'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  afterAll(() => {
    for (const pid of nodePids) if (running(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes config/gateway.yaml on fresh ports, runs npm start with `args`, and waits until the gateway listens. */
  async function npmStart(args: string[], timeoutMs: number): Promise<{ run: Run; node: number }> {
    port = await closedPort();
    const [metrics, admin] = [await closedPort(), await closedPort()];
    cpSync(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
    writeFileSync(
      join(dir, 'config/gateway.yaml'),
      stringify({
        server: { host: '127.0.0.1', port },
        metrics: { host: '127.0.0.1', port: metrics },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: admin },
        chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
        plans: { free: { rps: 100, credits: 1_000 } },
        storage: { path: join(dir, 'gateway.db') },
        log: { level: 'info', requests: false },
        health: { probeIntervalMs: 60_000 },
      }),
    );
    // npm's own variables of the test run (npm test) are not the start's.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
    const run = start('npm', ['start', ...args], dir, { ...env, npm_config_update_notifier: 'false' });
    const line = await until(
      () => {
        if (run.child.exitCode !== null) throw new Error(`npm start exited with ${run.child.exitCode}:\n${run.output()}`);
        return /^\{.*"msg":"listening".*$/m.exec(run.output())?.[0];
      },
      'the gateway to listen',
      timeoutMs,
    );
    const node = (JSON.parse(line) as { pid: number }).pid;
    nodePids.push(node);
    expect(node).not.toBe(run.child.pid);
    expect(await accepts(port)).toBe(true);
    return { run, node };
  }

  /** The gateway has stopped: its process is gone and nothing listens on its port. */
  async function stopped(node: number): Promise<void> {
    await until(() => !running(node), 'the gateway process to end', 30_000);
    expect(await accepts(port)).toBe(false);
  }

  it('builds (prestart) and stops on SIGTERM to npm: npm waits for the gateway and exits 0', async () => {
    const { run, node } = await npmStart([], 240_000);
    expect(existsSync(join(dir, 'dist/cli.js'))).toBe(true);
    process.kill(run.child.pid!, 'SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    // npm exited after the gateway did: it is gone already.
    expect(running(node)).toBe(false);
    await stopped(node);
    expect(run.output()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down/);
  }, 300_000);

  it('stops on SIGINT to npm', async () => {
    const { run, node } = await npmStart(['--ignore-scripts'], 60_000);
    process.kill(run.child.pid!, 'SIGINT');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(running(node)).toBe(false);
    await stopped(node);
    expect(run.output()).toMatch(/"signal":"SIGINT".*"msg":"shutting down/);
  }, 90_000);

  it('stops when npm is killed (SIGKILL), which passes nothing on', async () => {
    const { run, node } = await npmStart(['--ignore-scripts'], 60_000);
    process.kill(run.child.pid!, 'SIGKILL');
    expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await stopped(node);
    expect(run.output()).toContain('npm start, which started the gateway, is gone: stopping as on SIGTERM');
  }, 90_000);
});

describe('a listener that cannot be had stops the start', () => {
  let taken: Server;
  let takenPort: number;
  const dir = mkdtempSync(join(tmpdir(), 'egw-listeners-'));
  const redis = connect();
  const prefix = testPrefix('listeners');
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    takenPort = (taken.address() as { port: number }).port;
  });
  afterAll(async () => {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  /** The CLI on a configuration of its own, `extra` merged into its sections; resolves with its exit and output. */
  async function startOn(name: string, extra: Record<string, unknown>) {
    const file = join(dir, `${name}.yaml`);
    const ports = { server: await closedPort(), metrics: await closedPort(), admin: await closedPort() };
    const config: Record<string, Record<string, unknown>> = {
      server: { host: '127.0.0.1', port: ports.server },
      metrics: { host: '127.0.0.1', port: ports.metrics },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: ports.admin },
      chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
      plans: { free: { rps: 100, credits: 1_000 } },
      storage: { path: join(dir, `${name}.db`) },
      log: { level: 'info', requests: false },
    };
    for (const [section, value] of Object.entries(extra)) config[section] = { ...config[section], ...(value as object) };
    writeFileSync(file, stringify(config));
    const run = start(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), '--config', file], ROOT);
    return { ...(await run.exited), output: run.output(), ports };
  }

  it.each([
    ['public', 'server', 'public listener (server.port)'],
    ['admin', 'admin', 'admin API'],
    ['operations', 'metrics', 'operations listener (metrics.port)'],
  ])(
    'the %s one: exit 1, naming the listener and its address',
    async (_, section, named) => {
      const result = await startOn(`${section}-taken`, { [section]: { port: takenPort } });
      expect(result.code).toBe(1);
      expect(result.output).toContain(`explorer-gateway: ${named}: cannot listen on 127.0.0.1:${takenPort}: listen EADDRINUSE`);
      expect(result.output).toContain('"msg":"could not start"');
      // Nothing it opened stays open.
      for (const port of Object.values(result.ports)) expect(await accepts(port)).toBe(false);
    },
    60_000,
  );

  it('with workers, the operations one: the primary stops its workers and exits 1', async () => {
    const result = await startOn('workers', {
      server: { workers: 2 },
      metrics: { port: takenPort },
      redis: { url: REDIS_URL, keyPrefix: prefix, volatile: true },
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain(`operations listener (metrics.port): cannot listen on 127.0.0.1:${takenPort}`);
    expect(result.output).toContain('"msg":"a worker could not start; stopping the gateway"');
    expect(result.output).not.toContain('worker died; starting another');
  }, 90_000);
});
