// A long fuzzing run of the gateway: test/fuzz/gateway.fuzz.test.ts with many more generated
// requests than CI runs, and a seed of its own unless one is given.
//
//   npm run fuzz -- --runs 100000 [--seed N]
//
// It runs `npx vitest run test/fuzz` with FUZZ_RUNS and FUZZ_SEED set, prints the seed first and
// last, and exits with vitest's status. A failure is replayed with the same seed and runs; to go
// straight to the failing case, pass the path fast-check printed and the test's name:
//   npm run fuzz -- --seed N --path '12:3:0' -t 'legacy actions'
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';

const USAGE = 'usage: npm run fuzz -- [--runs N] [--seed N] [--path P] [-t PATTERN]';

function integerArg(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    console.error(`--${name} takes a non-negative integer, got ${text}\n${USAGE}`);
    process.exit(2);
  }
  return Number(text);
}

let values: { runs?: string; seed?: string; path?: string; t?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      runs: { type: 'string' },
      seed: { type: 'string' },
      path: { type: 'string' },
      t: { type: 'string', short: 't' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (err) {
  console.error(`${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const runs = integerArg('runs', values.runs, 100_000);
if (runs === 0) {
  console.error(`--runs must be at least 1\n${USAGE}`);
  process.exit(2);
}
// fast-check takes a 32-bit seed.
const seed = integerArg('seed', values.seed, randomInt(2 ** 31));

const env: NodeJS.ProcessEnv = { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed) };
if (values.path !== undefined) env.FUZZ_PATH = values.path;
const args = ['vitest', 'run', 'test/fuzz', ...(values.t === undefined ? [] : ['-t', values.t])];

console.log(`fuzz: seed ${seed}, ${runs} generated requests`);
const started = Date.now();
const child = spawn('npx', args, { env, stdio: 'inherit' });
const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
process.on('SIGINT', forward('SIGINT'));
process.on('SIGTERM', forward('SIGTERM'));
child.on('error', (err) => {
  console.error(`fuzz: could not start vitest: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const outcome = code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`;
  console.log(
    `fuzz: seed ${seed}, ${runs} generated requests, ${outcome} in ${minutes} min; replay with npm run fuzz -- --runs ${runs} --seed ${seed}`,
  );
  process.exit(code ?? 1);
});
