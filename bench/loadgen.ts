// The load generators: wrk when it is on PATH (C, event loop, ~no per-request overhead), else
// autocannon (Node; its own CPU cost is higher, so it may saturate before the server does).
// Both run as one single-threaded process pinned to the load core, with keep-alive connections.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { LOAD_CORE, pinned, runBounded } from './procs.js';
import { AUTH_HEADER } from './shared.js';

export interface LoadSpec {
  url: string;
  connections: number;
  durationS: number;
  /** Ask for a different address on every request (wrk only; autocannon repeats `url`). */
  distinctPaths?: boolean;
  /** Send the key as `Authorization: Bearer` (default); false when `url` carries it in `?apikey=`. */
  bearer?: boolean;
  /** POST this JSON body on every request (`content-type: application/json`) instead of a GET. */
  postBody?: string | undefined;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses that were not 2xx (wrk: statuses above 399). */
  non2xx: number;
  /** Connect, read and write errors and timeouts. */
  socketErrors: number;
}

export interface LoadGenerator {
  name: 'wrk' | 'autocannon';
  version: string;
  run(spec: LoadSpec): Promise<LoadResult>;
}

export type LoadGeneratorChoice = 'auto' | LoadGenerator['name'];

/** Headroom past the run's duration before a hung load generator is killed. */
const SLACK_MS = 15_000;
const WRK_SCRIPT = fileURLToPath(new URL('./wrk-report.lua', import.meta.url));
const WRK_DISTINCT_SCRIPT = fileURLToPath(new URL('./wrk-distinct.lua', import.meta.url));
const WRK_POST_SCRIPT = fileURLToPath(new URL('./wrk-post.lua', import.meta.url));

function wrkVersion(): string | undefined {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (probe.error) return undefined;
  // `wrk -v` prints "wrk 4.1.0 [epoll] Copyright ..." followed by its usage, and exits 1.
  return /wrk (\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1] ?? 'unknown';
}

interface WrkJson {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  non2xx: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

function wrk(version: string): LoadGenerator {
  return {
    name: 'wrk',
    version,
    async run({ url, connections, durationS, distinctPaths, bearer = true, postBody }) {
      if (distinctPaths && postBody !== undefined) throw new Error('wrk: distinct paths and a POST body do not go together');
      // One thread: the load generator has one core to itself.
      const script = distinctPaths ? WRK_DISTINCT_SCRIPT : postBody !== undefined ? WRK_POST_SCRIPT : WRK_SCRIPT;
      const auth = bearer ? ['-H', `Authorization: ${AUTH_HEADER}`] : [];
      // wrk passes what follows the URL to the script's init(args): wrk-post.lua's body.
      const body = postBody !== undefined ? [postBody] : [];
      const wrkArgs = ['-t1', `-c${connections}`, `-d${durationS}s`, '-s', script, ...auth, url, ...body];
      const [cmd, args] = pinned(LOAD_CORE, 'wrk', wrkArgs);
      const out = await runBounded(cmd, args, durationS * 1000 + SLACK_MS);
      const line = out.stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
      if (out.code !== 0 || !line) throw new Error(`wrk failed (${out.code}): ${out.stderr || out.stdout}`);
      const r = JSON.parse(line.slice('WRK_JSON '.length)) as WrkJson;
      return {
        requests: r.requests,
        rps: r.requests / (r.durationUs / 1e6),
        p50Ms: r.p50Us / 1000,
        p99Ms: r.p99Us / 1000,
        non2xx: r.non2xx,
        socketErrors: r.connect + r.read + r.write + r.timeout,
      };
    },
  };
}

/** The fields of autocannon's `--json` result the bench uses. */
interface AutocannonJson {
  requests: { total: number };
  duration: number;
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

function autocannon(): LoadGenerator {
  const require = createRequire(import.meta.url);
  const cli = require.resolve('autocannon'); // its main module is also its CLI
  const version = (require('autocannon/package.json') as { version: string }).version;
  return {
    name: 'autocannon',
    version,
    async run({ url, connections, durationS, bearer = true, postBody }) {
      // The CLI in its own process (not the API in ours), so it can be pinned like wrk.
      // `K=V` header syntax: with `K: V` autocannon would keep the space in the value.
      const auth = bearer ? ['-H', `Authorization=${AUTH_HEADER}`] : [];
      const post = postBody !== undefined ? ['-m', 'POST', '-H', 'Content-Type=application/json', '-b', postBody] : [];
      const acArgs = [cli, '-c', String(connections), '-d', String(durationS), '-j', '-n', ...auth, ...post, url];
      const [cmd, args] = pinned(LOAD_CORE, process.execPath, acArgs);
      const out = await runBounded(cmd, args, durationS * 1000 + SLACK_MS);
      if (out.code !== 0) throw new Error(`autocannon failed (${out.code}): ${out.stderr}`);
      const r = JSON.parse(out.stdout) as AutocannonJson;
      return {
        requests: r.requests.total,
        rps: r.requests.total / r.duration,
        // autocannon's latency histogram has 1 ms resolution: p50 differences below that vanish.
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        non2xx: r.non2xx,
        socketErrors: r.errors, // autocannon's errors already include its timeouts
      };
    },
  };
}

export function pickLoadGenerator(choice: LoadGeneratorChoice): LoadGenerator {
  if (choice === 'autocannon') return autocannon();
  const version = wrkVersion();
  if (version !== undefined) return wrk(version);
  if (choice === 'wrk') throw new Error('--loadgen wrk: wrk is not on PATH (Debian: apt-get install -y wrk)');
  return autocannon();
}
