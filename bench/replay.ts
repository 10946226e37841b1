// `npm run bench -- --replay`: the benchmark of issue "Cache what can no longer change". One
// seeded workload that looks like an explorer's traffic (bench/replay/workload.ts) is replayed
// twice, each time against a fresh fixture explorer whose head advances every --block-ms and a
// fresh in-process gateway: once with fixed TTLs (`cache.finalTtlSeconds: 0`), once
// finality-aware (the default). The report puts side by side the upstream calls per 1,000 client
// requests of both runs and the least any cache could make on that replay (bench/replay/ideal.ts),
// the hit ratio, answers per MiB of cache and freshness violations; it is printed and written to
// bench/results/<date>-replay.md, with the JSON beside it. docs/performance.md says how to read it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SEED_ACCOUNTS, indexAddress } from '../fixture/chain.js';
import { HEAD_BLOCK } from '../fixture/data.js';
import { ttlSecondsFor } from '../src/routes/settings.js';
import type { ReplayOptions } from './args.js';
import { REPLAY_MODES, replayConfig, type GatewaySettings } from './replay/config.js';
import { goalMet, markdownReport, summarise, type ReplayDescription, type RunSummary } from './replay/report.js';
import { runReplay, type RunResult } from './replay/runner.js';
import { countByKind, generateWorkload } from './replay/workload.js';

/** `chains.1.finality.depth` and `head.pollSeconds` of both runs (the issue's example figures). */
export const REPLAY_GATEWAY: GatewaySettings = { depth: 12, pollSeconds: 5 };

/** Seconds of the workload replayed first and discarded. */
const WARMUP_S = 3;
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

function codeVersion(): string {
  const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8' }).stdout?.trim() ?? '';
  const head = git('rev-parse', '--short', 'HEAD') || 'unknown';
  const dirty = git('status', '--porcelain', '--', 'src', 'fixture') !== '';
  return dirty ? `${head} + uncommitted changes in src/ or fixture/` : head;
}

/** bench/results/<date>-replay.md, or -2, -3, ... when a replay of that day is there already. */
function resultsStem(date: string): string {
  for (let n = 1; ; n++) {
    const stem = `${RESULTS_DIR}${date}-replay${n === 1 ? '' : `-${n}`}`;
    if (!existsSync(`${stem}.md`) && !existsSync(`${stem}.json`)) return stem;
  }
}

export async function replayBench(opts: ReplayOptions): Promise<number> {
  const settings = {
    ...REPLAY_GATEWAY,
    maxBytes: opts.cacheMb === undefined ? undefined : opts.cacheMb * 1024 * 1024,
    blockMs: opts.blockMs,
    connections: opts.connections,
    seed: opts.seed,
    startBlock: HEAD_BLOCK,
  };
  // Every address the workload pages is on the fixture's chain before the first request, so what a
  // block holds (and so each transaction hash the workload asks for) is the same in both runs.
  const workload = generateWorkload({ durationS: opts.durationS, rate: opts.rate, seed: opts.seed, startBlock: HEAD_BLOCK }, SEED_ACCOUNTS);
  for (const address of workload.addresses) indexAddress(address);
  const code = codeVersion();
  console.log(
    `Replay: ${workload.events.length} requests over ${opts.durationS} s (${opts.rate}/s, seed ${opts.seed}), a block every ${opts.blockMs} ms, ` +
      `finality depth ${settings.depth}, head poll ${settings.pollSeconds} s, cache ${opts.cacheMb ?? 128} MiB; code ${code}.`,
  );
  // The first seconds of the same workload against a throwaway fixture and gateway, discarded: the
  // first measured run would otherwise pay alone for compiling the code paths (late sends).
  const warmup = { ...workload, events: workload.events.filter((e) => e.atMs < WARMUP_S * 1000) };
  console.log(`Warm-up: ${warmup.events.length} requests over ${WARMUP_S} s, discarded`);
  await runReplay('finality', warmup, settings, () => undefined);
  const runs: RunResult[] = [];
  for (const mode of REPLAY_MODES) {
    console.log(`Run ${runs.length + 1} of ${REPLAY_MODES.length}: ${mode}`);
    runs.push(await runReplay(mode, workload, settings, (line) => console.log(line)));
  }
  const [fixedRun, awareRun] = runs;
  if (fixedRun === undefined || awareRun === undefined) throw new Error('replay: a run is missing');
  const [fixed, aware]: RunSummary[] = [summarise(fixedRun), summarise(awareRun)];
  if (fixed === undefined || aware === undefined) throw new Error('replay: a summary is missing');

  // The TTLs the report's arithmetic uses, from the finality-aware run's own configuration.
  const config = replayConfig('http://127.0.0.1:1', 'finality', REPLAY_GATEWAY);
  const now = new Date();
  const date = now.toISOString().slice(0, 10);
  const description: ReplayDescription = {
    date,
    code,
    durationS: opts.durationS,
    rate: opts.rate,
    seed: opts.seed,
    blockMs: opts.blockMs,
    depth: settings.depth,
    pollSeconds: settings.pollSeconds,
    connections: opts.connections,
    cacheMb: opts.cacheMb,
    blockTtlSeconds: ttlSecondsFor(config.cache, 'blocks/{block_hash_or_number_param}'),
    finalTtlSeconds: config.cache.finalTtlSeconds,
  };
  const markdown = markdownReport(description, fixed, aware, awareRun.sent);
  console.log(`\n${markdown}`);

  await mkdir(RESULTS_DIR, { recursive: true });
  const stem = resultsStem(date);
  const json = {
    generatedAt: now.toISOString(),
    description,
    machine: { nproc: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', node: process.version },
    workload: { events: workload.events.length, byKind: countByKind(workload.events) },
    // The least possible of the fixed run's own stream too: the two streams differ only in timing.
    runs: [fixed, aware].map((s) => ({
      ...s,
      least: { calls: s.least.calls, per1000: s.least.per1000, finalFetches: s.least.finalFetches },
    })),
  };
  await writeFile(`${stem}.md`, markdown);
  await writeFile(`${stem}.json`, `${JSON.stringify(json, null, 2)}\n`);
  console.log(`Written to ${stem}.md and ${stem}.json`);

  const failing = [fixed, aware].filter((s) => s.non2xx > 0 || s.errors > 0);
  for (const s of failing)
    console.error(`${s.title}: ${s.non2xx} non-2xx answers, ${s.errors} requests without an answer: the replay measured errors.`);
  if (!goalMet(aware)) console.error('The finality-aware run did not meet the goal (see the table).');
  return failing.length > 0 ? 1 : 0;
}
