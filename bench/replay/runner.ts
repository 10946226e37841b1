// One replay run: a fresh fixture explorer whose head advances every blockMs, a fresh in-process
// gateway in front of it listening on loopback, and the workload's events sent open-loop at
// their times over real HTTP (undici), at most `connections` at once. What it records of every
// request is what the report needs: its route and cache key, when it was sent and at which head,
// its status and x-cache, and how fresh its moving fields were. The fixture's recorded requests
// are the upstream calls, counted (head polls apart) and dropped as the run goes, so a ten-minute
// replay does not keep them all.
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { startFixtureExplorer, type FixtureExplorer, type RecordedRequest } from '../../fixture/explorer.js';
import { buildServer } from '../../src/app/server.js';
import { resolve } from '../../src/routes/resolve.js';
import { REPLAY_KEY, replayConfig, type GatewaySettings, type ReplayMode } from './config.js';
import { freshnessExcessMs, impliedHeads, isViolation } from './freshness.js';
import { isFinal, type StreamItem } from './ideal.js';
import { fixtureChain, REPLAY_CHAIN, RequestMaker, rpcMethodOf, type ReplayRequest } from './requests.js';
import type { ReplayEvent, Workload } from './workload.js';

/** The header the gateway's head polls carry (issue "Cache what can no longer change"). */
/** How long the run waits for answers still on their way after the last event was sent. */
const DRAIN_TIMEOUT_MS = 30_000;
/** A request that waits longer than this for its answer is abandoned (counted as an error). */
const REQUEST_TIMEOUT_MS = 15_000;
/** Violations kept as examples in the JSON. */
const EXAMPLES = 10;

export interface RunSettings extends GatewaySettings {
  blockMs: number;
  connections: number;
  seed: number;
  startBlock: number;
}

/** One request as sent and answered. */
export interface Sent extends StreamItem {
  kind: ReplayRequest['kind'];
  status: number;
  xCache: string | undefined;
  lateMs: number;
  /** How far past its route's TTL its stalest moving field was (freshness.ts); undefined: none old. */
  excessMs: number | undefined;
  checked: boolean;
}

export interface ViolationExample {
  route: string;
  path: string;
  atS: number;
  heads: number[];
  excessMs: number;
  xCache: string | undefined;
}

export interface UpstreamTally {
  calls: number;
  headPolls: number;
  byRoute: Record<string, number>;
}

export interface CacheMetrics {
  entries: number | undefined;
  bytes: number | undefined;
  lookups: Record<string, number>;
}

export interface RunResult {
  mode: ReplayMode;
  sent: Sent[];
  /** Events that made no request (no transaction found near the block asked for). */
  skipped: number;
  /** Requests that got no answer (socket error, timeout, cut off at the end). */
  errors: number;
  upstream: UpstreamTally;
  metrics: CacheMetrics;
  violations: ViolationExample[];
  elapsedS: number;
  headAtStart: number;
  headAtEnd: number;
}

/** The route an upstream request is for, by the gateway's own resolver (its path carries no chain). */
export function upstreamRoute(r: { url: string; path: string; body?: string | undefined }): string {
  if (r.path === '/api/eth-rpc' || r.path === '/api/v1/eth-rpc') return rpcMethodOf(r.body);
  const resolved = resolve(`/${REPLAY_CHAIN}${r.url}`, { has: () => true });
  return resolved.kind === 'route' ? resolved.route : 'unknown';
}

/**
 * Counts the fixture's recorded requests into `tally` and forgets them; a POST whose body has not
 * arrived yet waits for the next call. The gateway's head polls are not recorded: the fixture
 * counts them apart (headPolls()), since the start of the run (the fixture is the run's own).
 */
function drainUpstream(fixture: FixtureExplorer, tally: UpstreamTally, all: boolean): void {
  const waiting: RecordedRequest[] = [];
  tally.headPolls = fixture.headPolls();
  for (const r of fixture.requests) {
    if (r.method === 'POST' && r.body === undefined && !all) {
      waiting.push(r);
      continue;
    }
    tally.calls += 1;
    const route = upstreamRoute(r);
    tally.byRoute[route] = (tally.byRoute[route] ?? 0) + 1;
  }
  fixture.requests.length = 0;
  fixture.requests.push(...waiting);
}

/** A Prometheus text exposition's unlabelled samples, and egw_cache_lookups_total by outcome. */
export function readCacheMetrics(text: string): CacheMetrics {
  const value = (name: string): number | undefined => {
    const m = new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const lookups: Record<string, number> = {};
  for (const m of text.matchAll(/^egw_cache_lookups_total\{outcome="([a-z]+)"\} ([0-9.eE+-]+)$/gm)) lookups[m[1] ?? ''] = Number(m[2]);
  return { entries: value('egw_cache_entries'), bytes: value('egw_cache_bytes'), lookups };
}

/** Whether an answer is one a cache keeps: a 200, and for JSON-RPC a result rather than an error. */
function storable(req: ReplayRequest, status: number, body: string): boolean {
  if (status !== 200) return false;
  if (req.method !== 'POST') return true;
  try {
    const parsed = JSON.parse(body) as { result?: unknown; error?: unknown } | null;
    return parsed !== null && parsed.error === undefined && parsed.result !== undefined && parsed.result !== null;
  } catch {
    return false;
  }
}

export async function runReplay(
  mode: ReplayMode,
  workload: Workload,
  s: RunSettings,
  progress: (line: string) => void,
): Promise<RunResult> {
  const fixture = await startFixtureExplorer({ startBlock: s.startBlock, blockMs: s.blockMs });
  const app = buildServer(replayConfig(fixture.url, mode, s));
  let pool: Pool | undefined;
  const abort = new AbortController();
  // Every request in flight listens on this one signal: up to `connections` of them at once.
  setMaxListeners(0, abort.signal);
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    pool = new Pool(`http://127.0.0.1:${port}`, {
      connections: s.connections,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    const client = pool;
    const maker = new RequestMaker(fixtureChain(), app.gateway.state().config.cache, workload.addresses, s.seed);
    const tally: UpstreamTally = { calls: 0, headPolls: 0, byRoute: {} };
    const sent: Sent[] = [];
    const violations: ViolationExample[] = [];
    let skipped = 0;
    let errors = 0;
    const events = workload.events;
    const headAtStart = fixture.head();
    const t0 = performance.now();
    const wallStart = Date.now();
    const sinceStart = () => performance.now() - t0;

    const send = async (event: ReplayEvent): Promise<void> => {
      const head = fixture.head();
      const req = maker.make(event, head);
      if (req === undefined) {
        skipped += 1;
        return;
      }
      const lateMs = Math.max(0, sinceStart() - event.atMs);
      const sentAt = Date.now();
      const headers: Record<string, string> = { authorization: `Bearer ${REPLAY_KEY}` };
      if (req.body !== undefined) headers['content-type'] = 'application/json';
      let status = 0;
      let xCache: string | undefined;
      let text = '';
      try {
        const res = await client.request({ path: req.path, method: req.method, headers, body: req.body ?? null, signal: abort.signal });
        status = res.statusCode;
        const cache = res.headers['x-cache'];
        xCache = Array.isArray(cache) ? cache[0] : cache;
        text = await res.body.text();
      } catch {
        errors += 1;
        if (req.indexer !== undefined) maker.indexerAnswered(req.indexer, 0, '');
        return;
      }
      if (req.indexer !== undefined) maker.indexerAnswered(req.indexer, status, text);
      const heads = status === 200 ? impliedHeads(req.heads, text) : [];
      const excessMs = freshnessExcessMs(heads, sentAt, req.ttlSeconds, (n) => fixture.headChangedAt(n));
      if (isViolation(excessMs) && violations.length < EXAMPLES) {
        violations.push({
          route: req.route,
          path: req.path,
          atS: (sentAt - wallStart) / 1000,
          heads: [...new Set(heads)],
          excessMs: excessMs ?? 0,
          xCache,
        });
      }
      sent.push({
        key: req.key,
        atMs: sentAt,
        ttlSeconds: req.ttlSeconds,
        final: isFinal(req.finalBlock, head, s.depth),
        storable: storable(req, status, text),
        label: req.route,
        kind: req.kind,
        status,
        xCache,
        lateMs,
        excessMs,
        checked: heads.length > 0,
      });
    };

    // An indexer sends its next page only once it has the previous answer (it needs its cursor).
    const indexerChains = new Map<number, Promise<void>>();
    let inFlight = 0;
    const launch = (event: ReplayEvent): void => {
      inFlight += 1;
      let run: Promise<void>;
      if (event.kind === 'indexer-page') {
        run = (indexerChains.get(event.indexer) ?? Promise.resolve()).then(() => send(event));
        indexerChains.set(event.indexer, run);
      } else run = send(event);
      run
        .catch(() => {
          errors += 1;
        })
        .finally(() => {
          inFlight -= 1;
        });
    };

    let next = 0;
    let lastReport = 0;
    while (next < events.length) {
      const now = sinceStart();
      while (next < events.length && (events[next]?.atMs ?? Infinity) <= now && inFlight < s.connections) launch(events[next++]!);
      if (now - lastReport >= 10_000) {
        lastReport = now;
        drainUpstream(fixture, tally, false);
        progress(`  ${mode}: ${Math.round(now / 1000)} s, ${next} of ${events.length} requests sent, head ${fixture.head()}`);
      }
      const due = events[next]?.atMs ?? now;
      // Asleep until the next event is due; a full pipe is looked at again every millisecond.
      await sleep(inFlight >= s.connections ? 1 : Math.max(0, Math.min(due - now, 50)));
    }
    const drainUntil = performance.now() + DRAIN_TIMEOUT_MS;
    while (inFlight > 0 && performance.now() < drainUntil) await sleep(5);
    if (inFlight > 0) abort.abort();
    while (inFlight > 0) await sleep(5);
    const elapsedS = sinceStart() / 1000;
    const headAtEnd = fixture.head();

    const opsUrl = app.gateway.opsUrl();
    const metrics =
      opsUrl === undefined
        ? { entries: undefined, bytes: undefined, lookups: {} }
        : readCacheMetrics(await (await fetch(`${opsUrl}/metrics`)).text());
    // Let the last background refreshes reach the fixture before counting it.
    await sleep(100);
    drainUpstream(fixture, tally, true);
    return { mode, sent, skipped, errors, upstream: tally, metrics, violations, elapsedS, headAtStart, headAtEnd };
  } finally {
    abort.abort();
    await pool?.close().catch(() => undefined);
    await app.close();
    await fixture.close();
  }
}
