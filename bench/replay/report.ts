// From two replay runs to the side-by-side summary: upstream calls per 1,000 client requests for
// each run and for the least possible (bench/replay/ideal.ts over the run's own request stream),
// hit ratio, answers per MiB of cache, freshness violations, and a breakdown by route. Pure.
import { MODE_TITLES, type ReplayMode } from './config.js';
import { FRESHNESS_GRACE_MS, isViolation } from './freshness.js';
import { leastUpstreamCalls, type LeastCalls } from './ideal.js';
import type { CacheMetrics, Sent, UpstreamTally, ViolationExample } from './runner.js';

/** The within-10 % goal of issue "Cache what can no longer change", head polls aside. */
export const GOAL_OVER_LEAST = 0.1;
/** A send this far behind its scheduled time counts as late (the machine did not keep up with the rate). */
export const LATE_MS = 100;
const DAY_S = 86_400;

export interface RunFacts {
  mode: ReplayMode;
  sent: readonly Sent[];
  skipped: number;
  errors: number;
  upstream: UpstreamTally;
  metrics: CacheMetrics;
  violations: readonly ViolationExample[];
  elapsedS: number;
  headAtStart: number;
  headAtEnd: number;
}

export interface RouteRow {
  requests: number;
  upstream: number;
  least: number;
  /** Freshness violations among its answers. */
  violations: number;
}

export interface RunSummary {
  mode: ReplayMode;
  title: string;
  requests: number;
  upstreamCalls: number;
  headPolls: number;
  upstreamPer1000: number;
  least: LeastCalls & { per1000: number };
  /** upstreamCalls / least.calls - 1. */
  overLeast: number | null;
  /** Answers served from the cache (x-cache HIT or STALE) over requests answered. */
  hitRatio: number;
  xCache: Record<string, number>;
  cacheEntries: number | undefined;
  cacheMiB: number | undefined;
  answersPerMiB: number | undefined;
  freshness: { checked: number; violations: number; worstExcessMs: number | undefined; byCache: Record<string, number> };
  statuses: Record<string, number>;
  non2xx: number;
  errors: number;
  skipped: number;
  late: { count: number; worstMs: number };
  elapsedS: number;
  heads: { start: number; end: number };
  byRoute: Record<string, RouteRow>;
  violationExamples: readonly ViolationExample[];
}

const per1000 = (calls: number, requests: number): number => (requests === 0 ? 0 : (calls * 1000) / requests);

export function summarise(run: RunFacts): RunSummary {
  const { sent } = run;
  const least = leastUpstreamCalls(sent);
  const xCache: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const byCache: Record<string, number> = {};
  const byRoute: Record<string, RouteRow> = {};
  let checked = 0;
  let violations = 0;
  let worstExcessMs: number | undefined;
  let late = 0;
  let worstLate = 0;
  for (const s of sent) {
    const outcome = s.xCache ?? 'none';
    xCache[outcome] = (xCache[outcome] ?? 0) + 1;
    statuses[String(s.status)] = (statuses[String(s.status)] ?? 0) + 1;
    const row = (byRoute[s.label] ??= { requests: 0, upstream: 0, least: 0, violations: 0 });
    row.requests += 1;
    if (s.checked) checked += 1;
    if (s.excessMs !== undefined && (worstExcessMs === undefined || s.excessMs > worstExcessMs)) worstExcessMs = s.excessMs;
    if (isViolation(s.excessMs)) {
      violations += 1;
      row.violations += 1;
      byCache[outcome] = (byCache[outcome] ?? 0) + 1;
    }
    if (s.lateMs > LATE_MS) late += 1;
    worstLate = Math.max(worstLate, s.lateMs);
  }
  for (const [route, n] of Object.entries(run.upstream.byRoute))
    (byRoute[route] ??= { requests: 0, upstream: 0, least: 0, violations: 0 }).upstream = n;
  for (const [route, n] of Object.entries(least.byLabel))
    (byRoute[route] ??= { requests: 0, upstream: 0, least: 0, violations: 0 }).least = n;
  const requests = sent.length;
  const { entries, bytes } = run.metrics;
  const cacheMiB = bytes === undefined ? undefined : bytes / 2 ** 20;
  return {
    mode: run.mode,
    title: MODE_TITLES[run.mode],
    requests,
    upstreamCalls: run.upstream.calls,
    headPolls: run.upstream.headPolls,
    upstreamPer1000: per1000(run.upstream.calls, requests),
    least: { ...least, per1000: per1000(least.calls, requests) },
    overLeast: least.calls === 0 ? null : run.upstream.calls / least.calls - 1,
    hitRatio: requests === 0 ? 0 : ((xCache.HIT ?? 0) + (xCache.STALE ?? 0)) / requests,
    xCache,
    cacheEntries: entries,
    cacheMiB,
    answersPerMiB: entries === undefined || cacheMiB === undefined || cacheMiB === 0 ? undefined : entries / cacheMiB,
    freshness: { checked, violations, worstExcessMs, byCache },
    statuses,
    non2xx: sent.filter((s) => s.status < 200 || s.status > 299).length,
    errors: run.errors,
    skipped: run.skipped,
    late: { count: late, worstMs: worstLate },
    elapsedS: run.elapsedS,
    heads: { start: run.headAtStart, end: run.headAtEnd },
    byRoute,
    violationExamples: run.violations,
  };
}

export interface ReplayDescription {
  date: string;
  code: string;
  durationS: number;
  rate: number;
  seed: number;
  blockMs: number;
  depth: number;
  pollSeconds: number;
  connections: number;
  /** `--cache-mb`: the in-process tier's budget, MiB; undefined: the gateway's default (128). */
  cacheMb?: number | undefined;
  /** The route TTL of an old block by number and cache.finalTtlSeconds, for the day's arithmetic. */
  blockTtlSeconds: number;
  finalTtlSeconds: number;
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const pct = (r: number, digits = 1): string => `${(r * 100).toFixed(digits)} %`;
const signedPct = (r: number | null): string => (r === null ? '–' : `${r >= 0 ? '+' : '−'}${Math.abs(r * 100).toFixed(1)} %`);
const orDash = (v: number | undefined, f: (n: number) => string): string => (v === undefined ? '–' : f(v));

/** A request target cut to a readable length (indexers' cursors are long). */
const shortPath = (path: string): string => (path.length <= 110 ? path : `${path.slice(0, 109)}…`);

/** The most requested key that was final in the run, and how often it was asked for. */
function topFinalKey(sent: readonly Sent[]): { key: string; requests: number } | undefined {
  const counts = new Map<string, number>();
  for (const s of sent) if (s.final && s.label === 'blocks/{block_hash_or_number_param}') counts.set(s.key, (counts.get(s.key) ?? 0) + 1);
  let top: { key: string; requests: number } | undefined;
  for (const [key, requests] of counts) if (top === undefined || requests > top.requests) top = { key, requests };
  return top;
}

/** Whether the finality-aware run met the issue's goal. */
export function goalMet(aware: RunSummary): boolean {
  return aware.overLeast !== null && aware.overLeast <= GOAL_OVER_LEAST && aware.freshness.violations === 0;
}

export function markdownReport(d: ReplayDescription, fixed: RunSummary, aware: RunSummary, awareSent: readonly Sent[]): string {
  const cols = [fixed, aware];
  const row = (label: string, cells: string[], least = ''): string => `| ${label} | ${cells.join(' | ')} | ${least} |`;
  const lines = [
    `# Replay: finality-aware caching against fixed TTLs (${d.date})`,
    '',
    `Code ${d.code}. \`npm run bench -- --replay --duration ${d.durationS} --rate ${d.rate} --block-ms ${d.blockMs} --seed ${d.seed}` +
      `${d.cacheMb === undefined ? '' : ` --cache-mb ${d.cacheMb}`}\`: ` +
      `${int(d.durationS)} s of requests at ${d.rate} a second, a block every ${d.blockMs} ms, finality depth ${d.depth}, ` +
      `head poll every ${d.pollSeconds} s, at most ${d.connections} requests in flight, an in-process cache of ${d.cacheMb ?? 128} MiB. The least possible is computed from each ` +
      "run's own request stream (the finality-aware run's in the last column).",
    '',
    `| | ${fixed.title} | ${aware.title} | least possible |`,
    '|---|---:|---:|---:|',
    row(
      'client requests',
      cols.map((c) => int(c.requests)),
      int(aware.requests),
    ),
    row(
      'upstream calls (head polls aside)',
      cols.map((c) => int(c.upstreamCalls)),
      int(aware.least.calls),
    ),
    row(
      '**upstream calls per 1,000 requests**',
      cols.map((c) => `**${c.upstreamPer1000.toFixed(0)}**`),
      `**${aware.least.per1000.toFixed(0)}**`,
    ),
    row(
      'over the least possible of its own stream',
      cols.map((c) => signedPct(c.overLeast)),
    ),
    row(
      'head polls',
      cols.map((c) => int(c.headPolls)),
    ),
    row(
      'hit ratio (x-cache HIT or STALE; least possible: 1 − calls / requests)',
      cols.map((c) => pct(c.hitRatio)),
      pct(aware.requests === 0 ? 0 : 1 - aware.least.calls / aware.requests),
    ),
    row(
      'answers per MiB of cache (entries / MiB)',
      cols.map((c) => `${orDash(c.answersPerMiB, int)} (${orDash(c.cacheEntries, int)} / ${orDash(c.cacheMiB, (m) => m.toFixed(1))})`),
    ),
    row(
      'freshness violations (answers checked)',
      cols.map((c) => `${int(c.freshness.violations)} (${int(c.freshness.checked)})`),
      '0',
    ),
    row(
      'stalest moving field, past its TTL',
      cols.map((c) => orDash(c.freshness.worstExcessMs, (ms) => `${(ms / 1000).toFixed(2)} s`)),
    ),
    row(
      'non-2xx / no answer / late sends (> 100 ms)',
      cols.map((c) => `${int(c.non2xx)} / ${int(c.errors)} / ${int(c.late.count)}`),
    ),
    '',
    `Violations count answers whose stalest moving field (the tip's height, eth_blockNumber, block_number + confirmations - 1) ` +
      `had been passed by the fixture's head more than the route's TTL (+ ${FRESHNESS_GRACE_MS} ms) before the request was sent.`,
    '',
  ];
  const top = topFinalKey(awareSent);
  if (top !== undefined && d.blockTtlSeconds > 0) {
    const perDay = (top.requests * DAY_S) / d.durationS;
    lines.push(
      `**A day of traffic.** The most requested old block (\`${top.key.replace(/^GET /, '')}\`) was asked for ${int(top.requests)} ` +
        `times in ${int(d.durationS)} s, about ${int(perDay)} times a day at this rate. With fixed TTLs the gateway fetches it once ` +
        `per ${d.blockTtlSeconds} s TTL while it is asked for: up to ${int(Math.ceil(DAY_S / d.blockTtlSeconds))} times a day. ` +
        (d.finalTtlSeconds > 0
          ? `Finality-aware, it is fetched once per cache.finalTtlSeconds (${int(d.finalTtlSeconds)} s): ${int(Math.ceil(DAY_S / d.finalTtlSeconds))} a day.`
          : 'cache.finalTtlSeconds is 0 here: finality-aware caching was off in both runs.'),
      '',
    );
  }
  lines.push(
    goalMet(aware)
      ? `Goal met: finality-aware within ${pct(GOAL_OVER_LEAST, 0)} of the least possible (${signedPct(aware.overLeast)}), no freshness violations.`
      : `Goal not met: finality-aware at ${signedPct(aware.overLeast)} of the least possible (goal: within ${pct(GOAL_OVER_LEAST, 0)}), ${int(aware.freshness.violations)} freshness violations (goal: 0).`,
    '',
    '## Upstream calls by route',
    '',
    `| route | requests | ${fixed.title} | ${aware.title} | least possible | freshness violations (${fixed.title} / ${aware.title}) |`,
    '|---|---:|---:|---:|---:|---:|',
  );
  const routes = [...new Set([...Object.keys(fixed.byRoute), ...Object.keys(aware.byRoute)])].sort(
    (a, b) => (aware.byRoute[b]?.requests ?? 0) - (aware.byRoute[a]?.requests ?? 0) || a.localeCompare(b),
  );
  for (const r of routes) {
    const f = fixed.byRoute[r];
    const a = aware.byRoute[r];
    lines.push(
      `| \`${r}\` | ${int(a?.requests ?? 0)} | ${int(f?.upstream ?? 0)} | ${int(a?.upstream ?? 0)} | ${int(a?.least ?? 0)} | ${int(f?.violations ?? 0)} / ${int(a?.violations ?? 0)} |`,
    );
  }
  const violating = cols.filter((c) => c.freshness.violations > 0);
  for (const c of violating) {
    lines.push(
      '',
      `Violations of the ${c.title} run by x-cache: ${Object.entries(c.freshness.byCache)
        .map(([k, n]) => `${k} ${int(n)}`)
        .join(', ')}; first ones:`,
      '',
    );
    for (const v of c.violationExamples)
      lines.push(
        `- ${v.atS.toFixed(1)} s \`${shortPath(v.path)}\` (${v.xCache ?? 'no x-cache'}): heads ${v.heads.join(', ')}, ${(v.excessMs / 1000).toFixed(2)} s past the TTL`,
      );
  }
  return `${lines.join('\n')}\n`;
}
