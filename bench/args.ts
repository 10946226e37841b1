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
  /** `--replay`: the finality-aware caching replay (bench/replay.ts) instead of the variants. */
  replay: ReplayOptions | undefined;
}

/** `npm run bench -- --replay`: one replayed workload against fixed TTLs and finality-aware caching. */
export interface ReplayOptions {
  /** Seconds of requests per run (`--duration S` or `--minutes M`; default 60). */
  durationS: number;
  /** The fixture's head advances one block every blockMs (default 200). */
  blockMs: number;
  /** Client requests per second, open-loop (default 390). */
  rate: number;
  /** The workload's seed (default 1). */
  seed: number;
  /** Requests in flight at most, and connections to the gateway (`--connections`, default 64). */
  connections: number;
  /** `cache.maxBytes` of both gateways in MiB (`--cache-mb`; default: the gateway's own, 128). */
  cacheMb: number | undefined;
}

export const REPLAY_DEFAULTS: Readonly<ReplayOptions> = {
  durationS: 60,
  blockMs: 200,
  rate: 390,
  seed: 1,
  connections: 64,
  cacheMb: undefined,
};

export const USAGE = `usage: npm run bench -- [--duration SECONDS] [--rounds N] [--connections N] [--only ${VARIANTS.join(',')}] [--loadgen auto|wrk|autocannon] [--base GIT_REF]
       npm run bench -- --replay [--minutes M | --duration SECONDS] [--block-ms MS] [--rate N] [--seed N] [--connections N] [--cache-mb N]`;

function positiveNumber(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || value.trim() === '')
    throw new Error(`--${flag}: expected a positive number, got ${value}\n${USAGE}`);
  return n;
}

function nonNegativeInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0 || value.trim() === '')
    throw new Error(`--${flag}: expected a non-negative integer, got ${value}\n${USAGE}`);
  return n;
}

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

/** Flags of the variants' bench that mean nothing to the replay, and the replay's own. */
const VARIANT_ONLY = ['rounds', 'only', 'loadgen', 'base'] as const;
const REPLAY_ONLY = ['minutes', 'block-ms', 'rate', 'seed', 'cache-mb'] as const;

export function parseBenchArgs(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string', default: '64' },
      only: { type: 'string' },
      loadgen: { type: 'string' },
      base: { type: 'string' },
      replay: { type: 'boolean', default: false },
      minutes: { type: 'string' },
      'block-ms': { type: 'string' },
      rate: { type: 'string' },
      seed: { type: 'string' },
      'cache-mb': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const given = (names: readonly (keyof typeof values)[]) => names.filter((n) => values[n] !== undefined);
  if (values.replay) {
    const stray = given(VARIANT_ONLY);
    if (stray.length > 0) throw new Error(`--replay does not take --${stray.join(', --')}\n${USAGE}`);
    if (values.minutes !== undefined && values.duration !== undefined)
      throw new Error(`--replay takes --minutes or --duration, not both\n${USAGE}`);
    const durationS =
      values.minutes !== undefined
        ? positiveNumber('minutes', values.minutes) * 60
        : values.duration !== undefined
          ? positiveNumber('duration', values.duration)
          : REPLAY_DEFAULTS.durationS;
    return {
      durationS,
      rounds: 1,
      connections: positiveInt('connections', values.connections),
      variants: [],
      loadgen: 'auto',
      base: undefined,
      replay: {
        durationS,
        blockMs: values['block-ms'] === undefined ? REPLAY_DEFAULTS.blockMs : positiveInt('block-ms', values['block-ms']),
        rate: values.rate === undefined ? REPLAY_DEFAULTS.rate : positiveNumber('rate', values.rate),
        seed: values.seed === undefined ? REPLAY_DEFAULTS.seed : nonNegativeInt('seed', values.seed),
        connections: positiveInt('connections', values.connections),
        cacheMb: values['cache-mb'] === undefined ? undefined : positiveInt('cache-mb', values['cache-mb']),
      },
    };
  }
  const stray = given(REPLAY_ONLY);
  if (stray.length > 0) throw new Error(`--${stray.join(', --')}: only with --replay\n${USAGE}`);
  return {
    durationS: positiveInt('duration', values.duration ?? '5'),
    rounds: positiveInt('rounds', values.rounds ?? '3'),
    connections: positiveInt('connections', values.connections),
    variants: variantList(values.only, values.base),
    loadgen: loadgenChoice(values.loadgen ?? 'auto'),
    base: values.base,
    replay: undefined,
  };
}
