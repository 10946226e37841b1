// Starts one server variant in its own process, pinned to the server core, and waits for its
// ReadyLine. A fresh process per measured run: no JIT, GC or Redis state carries over from one
// run to the next, and a variant cannot disturb another one's heap.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LOAD_CORE, pinned, SERVER_CORE, start, stopChild } from './procs.js';
import { NEEDS_ORIGIN, type ReadyLine, type Variant } from './shared.js';

/** tsx start-up plus a Redis connection fit well within this. */
const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
/**
 * The servers run as JavaScript compiled by tsc (`npm run bench` compiles src and bench into
 * .bench-build first), as in production: tsx's on-the-fly transform adds helpers of its own
 * (`__name` wrappers) that show in a profile of the hot path.
 */
const BUILD = fileURLToPath(new URL('../.bench-build/bench/', import.meta.url));
const SERVER_ENTRY = `${BUILD}servers.js`;
/** The same, compiled from the `--base` revision (bench/base-build.ts). */
export const BASE_ROOT = fileURLToPath(new URL('../.bench-base/', import.meta.url));
const BASE_SERVER_ENTRY = `${BASE_ROOT}.bench-build/bench/servers.js`;

export interface RunningServer {
  port: number;
  /** The server's own pid (taskset execs node, so it is the child's pid). */
  pid: number;
  /** The processes whose CPU is the server's: its own and its workers'. */
  serverPids: number[];
  /** Every process of the variant (the server, and its origin if it has one), for CPU accounting. */
  pids: number[];
  /** The origin's URL, for the variants that have one. */
  origin?: string | undefined;
  stop(): Promise<void>;
}

function isReadyLine(value: unknown): value is ReadyLine {
  return (
    typeof value === 'object' && value !== null && (value as ReadyLine).ready === true && typeof (value as ReadyLine).port === 'number'
  );
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined; // anything else a server prints is not the handshake
  }
}

/** Resolves with the child's ReadyLine; rejects if it exits or takes too long. */
function waitReady(child: ChildProcess, variant: Variant | 'origin'): Promise<ReadyLine> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const onExit = (code: number | null) => settle(new Error(`server ${variant}: exited with ${code} before it was ready`));
    const timer = setTimeout(() => settle(new Error(`server ${variant}: not ready after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    function settle(outcome: ReadyLine | Error): void {
      clearTimeout(timer);
      child.off('exit', onExit);
      lines.close();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    }
    child.once('exit', onExit);
    lines.on('line', (line) => {
      const parsed = parseLine(line);
      if (isReadyLine(parsed)) settle(parsed);
    });
  });
}

const ORIGIN_ENTRY = `${BUILD}origin.js`;

/**
 * The origin of the proxying variants, pinned to the load generator's core: its CPU must not be
 * charged to the server under test (for the hit variants it is idle after the first request).
 */
async function startOrigin(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const [cmd, args] = pinned(LOAD_CORE, process.execPath, [ORIGIN_ENTRY, '0']);
  const child = start(cmd, args, 'inherit-stderr');
  try {
    const { port } = await waitReady(child, 'origin');
    return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopChild(child, STOP_GRACE_MS) };
  } catch (err) {
    await stopChild(child, STOP_GRACE_MS);
    throw err;
  }
}

export async function startServer(variant: Variant, redisPrefix: string): Promise<RunningServer> {
  const origin = NEEDS_ORIGIN.has(variant) ? await startOrigin() : undefined;
  try {
    const server = variant === 'nginx-cache' ? await startNginx(origin!.url) : await startNode(variant, redisPrefix, origin?.url);
    return {
      ...server,
      pids: origin ? [...server.serverPids, origin.pid] : server.serverPids,
      origin: origin?.url,
      async stop() {
        await server.stop();
        await origin?.stop();
      },
    };
  } catch (err) {
    await origin?.stop();
    throw err;
  }
}

async function startNode(variant: Variant, redisPrefix: string, origin: string | undefined): Promise<RunningServer> {
  // node itself, not a wrapper: the pid we pin and stop is the server's. The base revision's
  // servers.js knows its own variant as gateway-hit.
  const [entry, name] = variant === 'gateway-hit-base' ? [BASE_SERVER_ENTRY, 'gateway-hit'] : [SERVER_ENTRY, variant];
  // Workers use every core the machine has (and share one with the load generator): not pinned.
  const argv = [entry, name, '0', redisPrefix, origin ?? ''];
  const [cmd, args] = variant === 'gateway-hit-workers' ? [process.execPath, argv] : pinned(SERVER_CORE, process.execPath, argv);
  const child = start(cmd, args, 'inherit-stderr');
  try {
    const { port, workers = [] } = await waitReady(child, variant);
    const serverPids = [child.pid!, ...workers];
    return { port, pid: child.pid!, serverPids, pids: serverPids, stop: () => stopChild(child, STOP_GRACE_MS) };
  } catch (err) {
    await stopChild(child, STOP_GRACE_MS);
    throw err;
  }
}

/** nginx is on PATH (Debian: apt-get install -y nginx-light). */
export const hasNginx: boolean = spawnSync('nginx', ['-v']).status === 0;

/**
 * nginx with one worker (pinned like the node servers) answering from proxy_cache: the reference
 * a cache hit is compared with (0.85 to 1.3 of the bare fastify route here: bench/results/).
 */
async function startNginx(origin: string): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'egw-bench-nginx-'));
  const port = await freePort();
  const conf = `
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache keys_zone=bench:10m;
  upstream origin { server ${new URL(origin).host}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      proxy_cache_valid 200 1h;
      proxy_ignore_headers Cache-Control Expires;
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  // daemon off and master_process off: one process, the worker itself, so pinning and stopping are by its pid.
  const [cmd, args] = pinned(SERVER_CORE, 'nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off; master_process off;']);
  const child = start(cmd, args, 'inherit-stderr');
  const stop = async () => {
    await stopChild(child, STOP_GRACE_MS);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1_000) });
      return { port, pid: child.pid!, serverPids: [child.pid!], pids: [child.pid!], stop };
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`nginx did not start on port ${port}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
