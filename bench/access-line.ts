// What one access line costs (app/access-log.ts), against pino's general path for the same
// fields, both into pino's buffered destination on /dev/null as the gateway writes them:
// `npx tsx bench/access-line.ts`. Alternated rounds, medians.
import pino from 'pino';
import { accessLog } from '../src/app/access-log.js';
import { bufferSink, LogOutput } from '../src/observability/log-output.js';
import type { ApiKey } from '../src/keys/ring.js';
import { RequestContext } from '../src/request/context.js';

// As app/resources.ts sets them up: pino's general path writes through the same LogOutput.
const out = pino.destination({ dest: '/dev/null', sync: false, contentMode: 'buffer', minLength: 16 * 1024, maxWrite: 128 * 1024 });
const ctx = Object.assign(new RequestContext('3f9c2a7d41b0e8c5-1', performance.now()), {
  chainId: '1',
  route: 'token-balances' as const,
  key: { name: 'demo' } as ApiKey,
  status: 200,
  cache: 'HIT' as const,
});
const url = '/1/api/v2/addresses/0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045/token-balances';
const lines = new LogOutput(bufferSink(out), 32 * 1024);
const log = pino({ level: 'info' }, lines);
const built = accessLog(log, lines);
const viaPino = () => {
  const q = url.indexOf('?');
  log.info(
    {
      reqId: ctx.id,
      method: 'GET',
      path: q === -1 ? url : url.slice(0, q),
      status: ctx.status,
      chain: ctx.chainId,
      route: ctx.route,
      key: ctx.key?.name,
      cache: ctx.cache,
      upstream: ctx.upstream,
      upstreamMs: ctx.upstreamMs,
      ms: Math.round((performance.now() - ctx.startedAt) * 1000) / 1000,
    },
    'request',
  );
};
// As in a server: a few lines per event-loop turn, the destination's writes between them.
// A turn is timed to the end of its setImmediate phase, where access-log.ts writes the lines it
// held: `nothing` (the same turns, no line) is the floor to subtract.
const TURNS = 2_000;
const PER_TURN = 50;
const time = async (f: () => void) => {
  let ns = 0n;
  for (let turn = 0; turn < TURNS; turn++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < PER_TURN; i++) f();
    await new Promise((r) => setImmediate(r));
    ns += process.hrtime.bigint() - t;
  }
  return Number(ns) / (TURNS * PER_TURN) / 1000;
};
const nothing = () => undefined;
await new Promise((r) => out.once('ready', r));
const results: Record<string, number[]> = { built: [], pino: [], nothing: [] };
for (let round = 0; round < 11; round++) {
  results.built!.push(await time(() => built(ctx, 'GET', url)));
  results.pino!.push(await time(viaPino));
  results.nothing!.push(await time(nothing));
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
for (const [name, xs] of Object.entries(results)) {
  const s = sorted(xs);
  console.log(`${name}: median ${s[5]!.toFixed(2)} µs/line (quartiles ${s[2]!.toFixed(2)} to ${s[8]!.toFixed(2)}, 11 rounds)`);
}
out.flushSync();
