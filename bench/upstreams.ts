// `npm run bench -- --upstreams [--seconds N]`: what a customer gets from a chain with two
// explorers when the first misbehaves (issue 37), against the same load with both healthy, in
// the same process tree. Each scenario: a gateway (built from src/, cache off so every request
// is a miss) in front of two fixture explorers, a steady closed-loop load of distinct misses
// (16 at a time) for N seconds; reported: success rate, p50 and p99 latency, and attempts per
// request over the second half of the run (from egw_upstream_attempts_total, after the gateway
// has learnt the bad upstream). Written to bench/results/<date>-upstreams.md.
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { startFixtureExplorer, type ExplorerBehaviour, type FixtureExplorer } from '../fixture/explorer.js';
import { buildServer } from '../src/app/server.js';
import { configSchema } from '../src/config/schema.js';

const KEY = 'bench-upstreams-key';
const CONCURRENCY = 16;

interface Scenario {
  name: string;
  first: Partial<ExplorerBehaviour>;
}

const SCENARIOS: Scenario[] = [
  { name: 'both healthy (baseline)', first: {} },
  { name: 'first hangs', first: { hang: true } },
  { name: 'first resets connections', first: { destroySocket: true } },
  { name: 'first answers 503', first: { failStatus: 503 } },
  { name: 'first answers 429, Retry-After: 1', first: { failStatus: 429, extraHeaders: { 'retry-after': '1' } } },
  { name: 'first answers in 800 ms', first: { delayMs: 800 } },
  { name: 'first answers HTML with 200', first: { garbage: true } },
];

interface Row {
  name: string;
  requests: number;
  ok: number;
  p50: number;
  p99: number;
  attemptsPerRequest: number;
  maxMs: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;

async function attempts(opsUrl: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('egw_upstream_attempts_total{') && !line.includes('outcome="cancelled"')) sum += Number(line.split(' ').at(-1));
  return sum;
}

async function runScenario(s: Scenario, seconds: number, flapping = false): Promise<Row> {
  const bad: FixtureExplorer = await startFixtureExplorer();
  const good: FixtureExplorer = await startFixtureExplorer();
  bad.set(s.first);
  const config = configSchema.parse({
    server: { host: '127.0.0.1', port: 0 },
    chains: { '1': { name: 'Ethereum', upstreams: [bad.url, good.url], timeoutMs: 2_000 } },
    plans: { bench: { rps: 1_000_000, credits: 1_000_000_000, period: 'monthly' } },
    keys: [{ name: 'bench', key: KEY, plan: 'bench' }],
    log: { level: 'silent', requests: false },
    storage: { path: ':memory:' },
    metrics: { port: 0, host: '127.0.0.1' },
    cache: { maxBytes: 0 },
  });
  const app = buildServer(config, {});
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const opsUrl = app.gateway.opsUrl()!;
  const latencies: number[] = [];
  let ok = 0;
  let serial = 0;
  const endAt = performance.now() + seconds * 1000;
  const halfAt = performance.now() + (seconds * 1000) / 2;
  let secondHalfRequests = 0;
  let attemptsAtHalf: number | undefined;
  const flap = flapping ? setInterval(() => bad.set(serial % 2 === 0 ? s.first : {}), 1_000) : undefined;
  const worker = async () => {
    while (performance.now() < endAt) {
      if (attemptsAtHalf === undefined && performance.now() >= halfAt) attemptsAtHalf = await attempts(opsUrl);
      const address = `0x${(++serial).toString(16).padStart(40, '0')}`;
      const started = performance.now();
      const res = await fetch(`${url}/1/api/v2/addresses/${address}/token-balances`, { headers: { authorization: `Bearer ${KEY}` } });
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      if (res.status === 200) ok++;
      if (attemptsAtHalf !== undefined) secondHalfRequests++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (flap) clearInterval(flap);
  const total = await attempts(opsUrl);
  await app.close();
  await bad.close();
  await good.close();
  latencies.sort((a, b) => a - b);
  return {
    name: flapping ? `${s.name}, flapping every second` : s.name,
    requests: latencies.length,
    ok,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? 0,
    attemptsPerRequest: secondHalfRequests === 0 ? 0 : (total - (attemptsAtHalf ?? 0)) / secondHalfRequests,
  };
}

export async function upstreamsBench(argv: readonly string[]): Promise<number> {
  const i = argv.indexOf('--seconds');
  const seconds = i >= 0 ? Number(argv[i + 1]) : 20;
  if (!Number.isFinite(seconds) || seconds < 2) throw new Error('--seconds takes a number of seconds, at least 2');
  const rows: Row[] = [];
  // A discarded warm-up (JIT, pools), then the baseline both first and last: the spread between
  // the two says how much the machine moved during the run.
  await runScenario(SCENARIOS[0]!, Math.min(seconds, 5));
  for (const s of [...SCENARIOS, SCENARIOS[0]!]) {
    rows.push(await runScenario(s, seconds));
    console.log(JSON.stringify(rows.at(-1)));
  }
  rows.push(await runScenario(SCENARIOS[3]!, seconds, true));
  console.log(JSON.stringify(rows.at(-1)));
  const base = rows[0]!;
  rows[SCENARIOS.length]!.name = 'both healthy (baseline, again after the others)';
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const table = [
    '| the first upstream | requests | answered 200 | p50 ms | p99 ms | p50 / baseline | attempts per request (2nd half) |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.requests} | ${((100 * r.ok) / r.requests).toFixed(2)} % | ${fmt(r.p50)} | ${fmt(r.p99)} | ${(r.p50 / base.p50).toFixed(2)} | ${r.attemptsPerRequest.toFixed(3)} |`,
    ),
  ].join('\n');
  const date = new Date().toISOString().slice(0, 10);
  const out = `bench/results/${date}-upstreams.md`;
  writeFileSync(
    out,
    `# Upstream failover (issue 37): \`npm run bench -- --upstreams --seconds ${seconds}\`\n\n` +
      `Two fixture explorers behind one gateway (in process, cache off, timeoutMs 2000, failover defaults), ` +
      `${CONCURRENCY} concurrent clients asking distinct misses for ${seconds} s per row; the baseline row has both explorers healthy, ` +
      `in the same process tree. Node ${process.version}, ${new Date().toISOString()}.\n\n${table}\n`,
  );
  console.log(`\n${table}\n\nwritten to ${out}`);
  return 0;
}
