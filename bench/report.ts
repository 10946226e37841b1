// From runs to the summary: medians per variant (single runs vary 10 % and more here), ratios
// and added latency against the median `bare` of the same bench, a Markdown table and JSON.
// Four ratios, because this machine drifts: of medians, paired by round, of best runs, and of
// server CPU per request (which does not depend on how fast the load generator parses answers).
import type { LoadResult } from './loadgen.js';
import type { Variant } from './shared.js';

export interface Run extends LoadResult {
  variant: Variant;
  round: number;
  /** Share of the machine other processes used just before the run (0..1; null off Linux). */
  quietBefore: number | null;
  /** Share of the machine other processes used during the run (Redis counts as the bench's). */
  foreignCpu: number | null;
  /** CPU time of the server process (not its origin, not Redis) per request answered, µs. */
  serverCpuUsPerReq: number | null;
}

export interface Row {
  variant: Variant;
  runs: number;
  medianRps: number;
  /** Median req/s over the median `bare` req/s; null without a bare variant. */
  ratioToBare: number | null;
  /**
   * Median over rounds of req/s over the same round's `bare` req/s: runs next to each other in
   * time share the machine's state, so this resists drift better than the ratio of medians.
   */
  pairedRatio: number | null;
  /**
   * The variant's best run over bare's best run: drift on this machine only ever slows a run,
   * so the fastest runs are the least disturbed ones.
   */
  bestRatio: number | null;
  /** Median server CPU per request, µs (null off Linux). */
  cpuUsPerReq: number | null;
  /** The bare median CPU per request over this one: the throughput ratio if both were CPU-bound. */
  cpuRatio: number | null;
  p50Ms: number;
  p99Ms: number;
  /** Median p50 minus the median bare p50, microseconds; null without a bare variant. */
  addedP50Us: number | null;
  non2xx: number;
  socketErrors: number;
  /** The worst share of the machine other processes took during one of the variant's runs. */
  maxForeignCpu: number | null;
}

export interface Machine {
  nproc: number;
  cpu: string;
  node: string;
  loadGenerator: string;
  pinning: string;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

function maxOrNull(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? Math.max(...known) : null;
}

function medianOrNull(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? median(known) : null;
}

/** One row per variant, in the order given; medians are taken of each metric separately. */
export function summarise(runs: readonly Run[], variants: readonly Variant[]): Row[] {
  const base = runs.filter((r) => r.variant === 'bare');
  const baseRps = base.length > 0 ? median(base.map((r) => r.rps)) : null;
  const baseP50 = base.length > 0 ? median(base.map((r) => r.p50Ms)) : null;
  const baseCpu = medianOrNull(base.map((r) => r.serverCpuUsPerReq));
  const baseByRound = new Map(base.map((r) => [r.round, r.rps]));
  return variants.map((variant) => {
    const own = runs.filter((r) => r.variant === variant);
    const medianRps = median(own.map((r) => r.rps));
    const p50Ms = median(own.map((r) => r.p50Ms));
    const paired = own.flatMap((r) => {
      const b = baseByRound.get(r.round);
      return b ? [r.rps / b] : [];
    });
    const cpuUsPerReq = medianOrNull(own.map((r) => r.serverCpuUsPerReq));
    return {
      variant,
      runs: own.length,
      medianRps,
      ratioToBare: baseRps === null ? null : medianRps / baseRps,
      pairedRatio: paired.length > 0 ? median(paired) : null,
      bestRatio: base.length > 0 && own.length > 0 ? Math.max(...own.map((r) => r.rps)) / Math.max(...base.map((r) => r.rps)) : null,
      cpuUsPerReq,
      cpuRatio: baseCpu === null || cpuUsPerReq === null ? null : baseCpu / cpuUsPerReq,
      p50Ms,
      p99Ms: median(own.map((r) => r.p99Ms)),
      addedP50Us: baseP50 === null ? null : (p50Ms - baseP50) * 1000,
      non2xx: sum(own.map((r) => r.non2xx)),
      socketErrors: sum(own.map((r) => r.socketErrors)),
      maxForeignCpu: maxOrNull(own.map((r) => r.foreignCpu)),
    };
  });
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const orNa = (n: number | null, format: (n: number) => string) => (n === null ? 'n/a' : format(n));
const percent = (share: number) => `${Math.round(share * 100)} %`;

export function markdownTable(rows: readonly Row[], machine: Machine): string {
  const lines = [
    '| variant | runs | median req/s | ratio to bare | paired ratio | best-run ratio | server CPU µs/req | CPU ratio | p50 ms | p99 ms | added p50 vs bare (µs) | non-2xx | socket errors | other CPU (max) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.variant} | ${r.runs} | ${int(r.medianRps)} | ${orNa(r.ratioToBare, (n) => n.toFixed(2))} | ` +
        `${orNa(r.pairedRatio, (n) => n.toFixed(2))} | ${orNa(r.bestRatio, (n) => n.toFixed(2))} | ${orNa(r.cpuUsPerReq, (n) => n.toFixed(1))} | ${orNa(r.cpuRatio, (n) => n.toFixed(2))} | ` +
        `${r.p50Ms.toFixed(3)} | ${r.p99Ms.toFixed(3)} | ${orNa(r.addedP50Us, (n) => (n >= 0 ? '+' : '') + int(n))} | ` +
        `${r.non2xx} | ${r.socketErrors} | ${orNa(r.maxForeignCpu, percent)} |`,
    ),
  ];
  const about = `Machine: ${machine.nproc} CPUs (${machine.cpu}), Node ${machine.node}, load generator ${machine.loadGenerator}, ${machine.pinning}.`;
  return `${lines.join('\n')}\n\n${about}`;
}

/** One progress line per run, so a long bench shows where it is and what each run gave. */
export function runLine(run: Run, rounds: number): string {
  const errors = run.non2xx + run.socketErrors > 0 ? `, ${run.non2xx} non-2xx, ${run.socketErrors} socket errors` : '';
  const others = run.foreignCpu === null ? '' : `  other CPU ${percent(run.foreignCpu)}`;
  return `round ${run.round}/${rounds} ${run.variant.padEnd(12)} ${int(run.rps).padStart(7)} req/s  p50 ${run.p50Ms.toFixed(3)} ms  p99 ${run.p99Ms.toFixed(3)} ms${others}${errors}`;
}

/**
 * `a` against `b`, paired by round (the same drift hits both): the median and quartiles of a's
 * req/s over b's, of b's server CPU per request over a's (above 1: a is cheaper), and of a's
 * p99 latency over b's (above 1: a's slowest requests are slower).
 */
export function pairedComparison(runs: readonly Run[], a: Variant, b: Variant): string | undefined {
  const rounds = new Map<number, Partial<Record<Variant, Run>>>();
  for (const r of runs) rounds.set(r.round, { ...rounds.get(r.round), [r.variant]: r });
  const rps: number[] = [];
  const cpu: number[] = [];
  const p99: number[] = [];
  for (const round of rounds.values()) {
    const x = round[a];
    const y = round[b];
    if (!x || !y) continue;
    rps.push(x.rps / y.rps);
    if (x.serverCpuUsPerReq && y.serverCpuUsPerReq) cpu.push(y.serverCpuUsPerReq / x.serverCpuUsPerReq);
    if (x.p99Ms > 0 && y.p99Ms > 0) p99.push(x.p99Ms / y.p99Ms);
  }
  if (rps.length === 0) return undefined;
  const cpuPart = `CPU per request (${b} / ${a}) ${cpu.length > 0 ? quartiles(cpu) : 'n/a'}`;
  return `${a} against ${b}, paired by round: req/s ${quartiles(rps)}; ${cpuPart}; p99 (${a} / ${b}) ${p99.length > 0 ? quartiles(p99) : 'n/a'}`;
}

/** The median of ratios with their quartiles, and how many there are. */
function quartiles(values: readonly number[]): string {
  const s = [...values].sort((p, q) => p - q);
  const at = (p: number) => s[Math.floor(p * (s.length - 1))]!.toFixed(2);
  return `${median(s).toFixed(3)} (quartiles ${at(0.25)} to ${at(0.75)}, ${s.length} rounds)`;
}

/**
 * A variant whose requests carry `calls` JSON-RPC calls each (a batch): its median in calls per
 * second and server CPU per call, and its calls/s over `against`'s req/s, paired by round.
 */
export function callsLine(row: Row, calls: number, runs: readonly Run[], against: Variant): string {
  const perCall = row.cpuUsPerReq === null ? 'n/a' : `${(row.cpuUsPerReq / calls).toFixed(2)} µs`;
  const theirs = new Map(runs.filter((r) => r.variant === against).map((r) => [r.round, r.rps]));
  const ratios = runs.flatMap((r) => {
    const b = r.variant === row.variant ? theirs.get(r.round) : undefined;
    return b ? [(r.rps * calls) / b] : [];
  });
  const paired = ratios.length > 0 ? `; calls/s over ${against}'s req/s, paired by round: ${quartiles(ratios)}` : '';
  return `${row.variant}: ${calls} calls a request, ${int(row.medianRps * calls)} calls/s (median ${int(row.medianRps)} req/s), server CPU ${perCall} a call${paired}`;
}
