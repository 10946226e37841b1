// Command-line flags of `npm run bench`.
import { parseArgs } from 'node:util';
import type { LoadGeneratorChoice } from './loadgen.js';
import { hasNginx } from './server-process.js';
import { isVariant, VARIANTS, type Variant } from './shared.js';

export interface BenchOptions {
  /** Seconds per measured run (each run is preceded by a 1 s warm-up). */
  durationS: number;
  /** How many times the whole list of variants is measured, alternating. */
  rounds: number;
  connections: number;
  variants: Variant[];
  loadgen: LoadGeneratorChoice;
  /** A git revision whose gateway-hit is measured too, as `gateway-hit-base`. */
  base: string | undefined;
}

export const USAGE = `usage: npm run bench -- [--duration SECONDS] [--rounds N] [--connections N] [--only ${VARIANTS.join(',')}] [--loadgen auto|wrk|autocannon] [--base GIT_REF]`;

function positiveInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${flag}: expected a positive integer, got ${value}\n${USAGE}`);
  return n;
}

function variantList(value: string | undefined, base: string | undefined): Variant[] {
  // Without nginx installed, its variant is left out unless asked for by name; the base
  // revision's gateway is measured only when --base names one.
  if (value === undefined) return VARIANTS.filter((v) => (v !== 'nginx-cache' || hasNginx) && (v !== 'gateway-hit-base' || base));
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !isVariant(n));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`--only: unknown variant(s) ${unknown.join(', ')}; known: ${VARIANTS.join(', ')}`);
  if (names.includes('gateway-hit-base') && !base) throw new Error('--only gateway-hit-base needs --base GIT_REF');
  // Keep the canonical order whatever order was given, so alternation is always bare first.
  return VARIANTS.filter((v) => names.includes(v));
}

function loadgenChoice(value: string): LoadGeneratorChoice {
  if (value === 'auto' || value === 'wrk' || value === 'autocannon') return value;
  throw new Error(`--loadgen: expected auto, wrk or autocannon, got ${value}`);
}

export function parseBenchArgs(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '64' },
      only: { type: 'string' },
      loadgen: { type: 'string', default: 'auto' },
      base: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    durationS: positiveInt('duration', values.duration),
    rounds: positiveInt('rounds', values.rounds),
    connections: positiveInt('connections', values.connections),
    variants: variantList(values.only, values.base),
    loadgen: loadgenChoice(values.loadgen),
    base: values.base,
  };
}
