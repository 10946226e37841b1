// `npm run bench`: measures what the quota step costs on a cache hit. Each variant runs in its
// own process pinned to one core and is driven by wrk (or autocannon) pinned to the other; the
// variants alternate round by round (in an order rotated each round) so that drift in the machine
// hits all of them alike, and the summary uses medians and four ratios to `bare` (docs/performance.md
// says how to read them). `--replay` runs bench/replay.ts instead, `--upstreams` bench/upstreams.ts.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from '../src/redis/client.js';
import { parseBenchArgs, type BenchOptions } from './args.js';
import { buildBase } from './base-build.js';
import { BODY } from './body.js';
import { foreignShare, processCpuSeconds, QUIET_SHARE, sampleCpu, waitForQuiet, type RedisCpuSeconds } from './cpu.js';
import { pickLoadGenerator, type LoadGenerator } from './loadgen.js';
import { canPin, LOAD_CORE, SERVER_CORE, stopAllStarted } from './procs.js';
import { connectRedis, deletePrefix } from './redis.js';
import { callsLine, markdownTable, pairedComparison, runLine, summarise, type Machine, type Run } from './report.js';
import { originRpcCalls, RPC_PATH, RPC_REQUESTS, warmAndCheckRpc } from './rpc.js';
import { startServer } from './server-process.js';
import { AUTH_HEADER, BENCH_KEY, BENCH_PATH, DISTINCT_PATHS, HAS_QUOTA_HEADERS, QUERY_KEY, USES_REDIS, type Variant } from './shared.js';

/** Long enough for the JIT to compile the hot path and for connections to be established. */
const WARMUP_S = 1;
/** How long a run waits for other processes (tests, builds) to leave the CPU before it starts anyway. */
const QUIET_WAIT_MS = 30_000;
/** Attempts per run when other processes keep taking the CPU (the machine may be shared). */
const MAX_ATTEMPTS = 3;
const RESULTS_FILE = fileURLToPath(new URL('./results/latest.json', import.meta.url));

/**
 * One request before any load: a variant that does not answer 200 with the full body (and, for
 * the quota variants, the quota headers) would be benchmarked on its error path.
 */
async function checkAnswers(url: string, variant: Variant): Promise<void> {
  const headers: Record<string, string> = QUERY_KEY.has(variant) ? {} : { authorization: AUTH_HEADER };
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
  const body = Buffer.from(await res.arrayBuffer());
  const quotaHeader = res.headers.get('x-ratelimit-limit');
  const problem =
    res.status !== 200
      ? `status ${res.status}`
      : !body.equals(BODY)
        ? `a body of ${body.length} bytes, not the ${BODY.length}-byte bench body`
        : HAS_QUOTA_HEADERS.has(variant) && quotaHeader === null
          ? 'no x-ratelimit-limit header'
          : undefined;
  if (problem) throw new Error(`${variant} answered the check request with ${problem}`);
}

/** What a run needs besides the options: the load generator and the Redis side of the bench. */
interface BenchContext {
  opts: BenchOptions;
  loadgen: LoadGenerator;
  redisPrefix: string;
  /** Redis's CPU counter, when the bench uses Redis: its CPU is part of what is measured. */
  redisCpu: RedisCpuSeconds | undefined;
}

/** Quiet machine, fresh server, check, warm-up (discarded), measurement, stop. */
async function measure(variant: Variant, round: number, ctx: BenchContext): Promise<Run> {
  const quietBefore = await waitForQuiet(QUIET_WAIT_MS);
  const server = await startServer(variant, ctx.redisPrefix);
  try {
    const bearer = !QUERY_KEY.has(variant);
    const base = `http://127.0.0.1:${server.port}`;
    const rpc = RPC_REQUESTS.get(variant);
    const url = rpc ? `${base}${RPC_PATH}` : `${base}${BENCH_PATH}${bearer ? '' : `?apikey=${BENCH_KEY}`}`;
    const load = { url, connections: ctx.opts.connections, distinctPaths: DISTINCT_PATHS.has(variant), bearer, postBody: rpc?.body };
    if (rpc) await warmAndCheckRpc(url, variant, AUTH_HEADER);
    else await checkAnswers(url, variant);
    await ctx.loadgen.run({ ...load, durationS: WARMUP_S });
    const rpcCalls = () => (rpc && server.origin ? originRpcCalls(server.origin) : Promise.resolve(0));
    const upstreamBefore = await rpcCalls();
    // The CPU window is the measured run only; the load generator is reaped (counted) by its end.
    const cpuBefore = await sampleCpu(ctx.redisCpu, server.pids);
    const serverCpu = () => {
      let total = 0;
      for (const pid of server.serverPids) {
        const s = processCpuSeconds(pid);
        if (s === null) return null;
        total += s;
      }
      return total;
    };
    const serverBefore = serverCpu();
    const result = await ctx.loadgen.run({ ...load, durationS: ctx.opts.durationS });
    const serverAfter = serverCpu();
    const foreignCpu = foreignShare(cpuBefore, await sampleCpu(ctx.redisCpu, server.pids));
    // A JSON-RPC error is an HTTP 200, and a miss a 200 too: what reached the origin says whether
    // every call of the run was a hit (read after the CPU window, so it is not counted).
    const upstreamDuring = (await rpcCalls()) - upstreamBefore;
    if (upstreamDuring > 0) throw new Error(`${variant}: ${upstreamDuring} calls reached the origin during the run: not all hits`);
    const serverCpuUsPerReq =
      serverBefore === null || serverAfter === null || result.requests === 0
        ? null
        : ((serverAfter - serverBefore) * 1e6) / result.requests;
    return { variant, round, ...result, quietBefore, foreignCpu, serverCpuUsPerReq };
  } finally {
    await server.stop();
  }
}

/**
 * Measures a variant again (at once, so the alternation is kept) while other processes took
 * QUIET_SHARE or more of the machine during the run; after MAX_ATTEMPTS the last run is kept,
 * flagged by its "other CPU". Discarded runs are returned too, for the JSON.
 */
async function measureQuietly(variant: Variant, round: number, ctx: BenchContext): Promise<{ kept: Run; discarded: Run[] }> {
  const discarded: Run[] = [];
  for (;;) {
    const run = await measure(variant, round, ctx);
    // A run with errors is always kept: errors must reach the exit code, noise or not.
    const contaminated = run.foreignCpu !== null && run.foreignCpu >= QUIET_SHARE && run.non2xx === 0;
    if (!contaminated || discarded.length + 1 >= MAX_ATTEMPTS) return { kept: run, discarded };
    console.log(`${runLine(run, ctx.opts.rounds)}  (discarded: other processes were busy; measuring again)`);
    discarded.push(run);
  }
}

/**
 * The order of the variants in a round: the list rotated by one place per round, so that over
 * as many rounds as there are variants each runs once in every position, and a cost tied to a
 * position (what the run before left behind, drift within a round) falls on all of them alike.
 */
function roundOrder<T>(variants: readonly T[], round: number): T[] {
  const shift = (round - 1) % variants.length;
  return [...variants.slice(shift), ...variants.slice(0, shift)];
}

/** Round by round, every variant once a round, in roundOrder. */
async function measureAll(ctx: BenchContext): Promise<{ runs: Run[]; discarded: Run[] }> {
  const runs: Run[] = [];
  const discarded: Run[] = [];
  for (let round = 1; round <= ctx.opts.rounds; round++) {
    for (const variant of roundOrder(ctx.opts.variants, round)) {
      const result = await measureQuietly(variant, round, ctx);
      console.log(runLine(result.kept, ctx.opts.rounds));
      runs.push(result.kept);
      discarded.push(...result.discarded);
    }
  }
  return { runs, discarded };
}

/** The code measured: src/ may change between benches (and during one), so the JSON says which. */
function codeVersion(): string {
  const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8' }).stdout?.trim() ?? '';
  const head = git('rev-parse', '--short', 'HEAD') || 'unknown';
  return git('status', '--porcelain', '--', 'src') === '' ? head : `${head} + uncommitted changes in src/`;
}

function describeMachine(loadgen: LoadGenerator, opts: BenchOptions): Machine {
  const usesRedis = opts.variants.some((v) => USES_REDIS.has(v));
  const redisNote = usesRedis ? '; Redis is not pinned and shares both cores' : '';
  const originNote = opts.variants.some((v) => v === 'proxy-bare' || v.startsWith('gateway') || v === 'nginx-cache')
    ? `; the origin of proxying variants runs on core ${LOAD_CORE} with the load generator; misses ask for a new address every request`
    : '';
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    // autocannon's latency histogram counts whole milliseconds, so its p50 is 0 or 1 here.
    loadGenerator: `${loadgen.name} ${loadgen.version} (1 thread, ${opts.connections} connections${loadgen.name === 'autocannon' ? ', latencies in whole ms' : ''})`,
    pinning: canPin
      ? `server pinned to core ${SERVER_CORE}, load generator to core ${LOAD_CORE} (taskset)${redisNote}${originNote}`
      : `not pinned (taskset missing or fewer than 2 CPUs)${redisNote}${originNote}`,
  };
}

async function writeResults(payload: unknown): Promise<void> {
  await mkdir(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(payload, null, 2)}\n`);
}

function redisCpuReader(redis: RedisClient): RedisCpuSeconds {
  return async () => {
    const info = await redis.info('cpu');
    const seconds = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
    return seconds('used_cpu_user') + seconds('used_cpu_sys');
  };
}

/**
 * Own Redis prefix per bench, removed afterwards (an interrupted bench leaves keys that expire by
 * the end of the day). The connection is made up front, so a missing Redis fails in a second,
 * not after the other variants have run.
 */
async function withRedis<T>(needed: boolean, body: (prefix: string, redisCpu: RedisCpuSeconds | undefined) => Promise<T>): Promise<T> {
  const prefix = `egw-bench:${randomBytes(6).toString('hex')}:`;
  if (!needed) return body(prefix, undefined);
  const redis = await connectRedis();
  try {
    return await body(prefix, redisCpuReader(redis));
  } finally {
    // A failed clean-up is reported, but must not throw away the results measured above.
    await deletePrefix(redis, prefix).then(
      (deleted) => console.log(`Redis: deleted ${deleted} keys under ${prefix}`),
      (err: unknown) =>
        console.error(`Redis: could not delete the keys under ${prefix}: ${err instanceof Error ? err.message : String(err)}`),
    );
    await redis.quit().catch(() => redis.disconnect());
  }
}

async function main(): Promise<number> {
  if (process.argv.includes('--upstreams')) {
    // `--upstreams`: failover against a misbehaving explorer (bench/upstreams.ts).
    const { upstreamsBench } = await import('./upstreams.js');
    return upstreamsBench(process.argv.slice(2));
  }
  const opts = parseBenchArgs(process.argv.slice(2));
  if (opts.replay) {
    // `--replay`: finality-aware caching against fixed TTLs on a replayed workload (bench/replay.ts).
    const { replayBench } = await import('./replay.js');
    return replayBench(opts.replay);
  }
  const loadgen = pickLoadGenerator(opts.loadgen);
  const machine = describeMachine(loadgen, opts);
  const base = opts.base === undefined ? undefined : buildBase(opts.base);
  const code = codeVersion() + (base === undefined ? '' : `; gateway-hit-base is ${base}`);
  console.log(`Code ${code}. Load generator: ${machine.loadGenerator}; ${machine.pinning}.`);
  console.log(`${opts.rounds} rounds of ${opts.variants.join(', ')}; ${WARMUP_S} s warm-up + ${opts.durationS} s per run.\n`);

  const { runs, discarded } = await withRedis(
    opts.variants.some((v) => USES_REDIS.has(v)),
    (redisPrefix, redisCpu) => measureAll({ opts, loadgen, redisPrefix, redisCpu }),
  );
  const rows = summarise(runs, opts.variants);
  console.log(`\n${markdownTable(rows, machine)}\n`);
  // Side by side, paired by round: a change against its base revision, usage rows against none.
  // JSON-RPC hits against the v2 hit they are read beside. A webhook receiver that is down
  // against one that is up (the same events), and each against no events at all.
  for (const [a, b] of [
    ['gateway-hit', 'gateway-hit-base'],
    ['gateway-hit', 'gateway-hit-nousage'],
    ['gateway-rpc-hit', 'gateway-hit'],
    ['gateway-rpc-batch10', 'gateway-hit'],
    ['gateway-hit-webhook-down', 'gateway-hit-webhook-up'],
    ['gateway-hit-webhook-up', 'gateway-hit'],
    ['gateway-hit-webhook-down', 'gateway-hit'],
  ] as const) {
    const line = opts.variants.includes(a) && opts.variants.includes(b) ? pairedComparison(runs, a, b) : undefined;
    if (line) console.log(`${line}\n`);
  }
  for (const row of rows) {
    const calls = RPC_REQUESTS.get(row.variant)?.calls ?? 1;
    if (calls > 1) console.log(`${callsLine(row, calls, runs, 'gateway-hit')}\n`);
  }
  const callsPerRequest = Object.fromEntries([...RPC_REQUESTS].filter(([v]) => opts.variants.includes(v)).map(([v, r]) => [v, r.calls]));
  const settings = { durationS: opts.durationS, rounds: opts.rounds, connections: opts.connections, warmupS: WARMUP_S, callsPerRequest };
  await writeResults({ generatedAt: new Date().toISOString(), code, machine, settings, rows, runs, discarded });
  console.log(`Written to ${RESULTS_FILE}`);

  const failing = rows.filter((r) => r.non2xx > 0);
  for (const r of failing) console.error(`${r.variant}: ${r.non2xx} non-2xx responses: the bench measured errors.`);
  for (const r of rows.filter((x) => x.socketErrors > 0))
    console.error(`${r.variant}: ${r.socketErrors} socket errors (connect/read/write/timeout).`);
  if (rows.some((r) => (r.maxForeignCpu ?? 0) >= QUIET_SHARE)) {
    console.error('Other processes used the CPU during some runs (see "other CPU"): compare those numbers with care.');
  }
  return failing.length > 0 ? 1 : 0;
}

// Ctrl-C: end the server and load generator this bench started (by pid), then exit.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopAllStarted();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    stopAllStarted();
    process.exit(1);
  },
);
