// `npx tsx bench/compression.ts`: does deflating entries for the shared (Redis) cache tier pay
// off? For real-shaped explorer answers (the fixture explorer's), prints the stored size raw and
// deflated, and what encoding and decoding cost, so the claim of docs/performance.md stays measured.
import { performance } from 'node:perf_hooks';
import { startFixtureExplorer } from '../fixture/explorer.js';
import { toEntry } from '../src/cache/policy.js';
import { decodeEntry, encodeEntry } from '../src/cache/redis-tier.js';

const ADDRESS = '0x3887e82dbdbe8ec6db44e6298a2d48af572a3b78';
const PATHS = [
  `/api/v2/addresses/${ADDRESS}/token-balances`,
  `/api/v2/addresses/${ADDRESS}/transactions?items_count=50`,
  '/api?module=token&action=getTokenHolders&contractaddress=0xb7d311e2eb55f2f68a9440da38e7989210b9a05e&page=1&offset=100',
];
const ROUNDS = 2_000;

async function timeUs(f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i++) await f();
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) await f();
  return ((performance.now() - start) * 1000) / ROUNDS;
}

const explorer = await startFixtureExplorer();
try {
  console.log('| answer | body bytes | stored bytes | stored / body | encode µs | decode µs |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const path of PATHS) {
    const res = await fetch(explorer.url + path);
    const body = Buffer.from(await res.arrayBuffer());
    const entry = toEntry({ status: 200, headers: { 'content-type': 'application/json' }, body, upstream: '', ms: 0 }, Date.now(), 15, 60);
    const stored = await encodeEntry(entry);
    const encodeUs = await timeUs(() => encodeEntry(entry));
    const decodeUs = await timeUs(() => decodeEntry(stored));
    const name = path.split('?')[0]!.split('/').pop() === 'api' ? 'legacy getTokenHolders (100)' : path.split('/')[5]!.split('?')[0]!;
    console.log(
      `| ${name} | ${body.length} | ${stored.length} | ${(stored.length / body.length).toFixed(2)} | ${encodeUs.toFixed(1)} | ${decodeUs.toFixed(1)} |`,
    );
  }
} finally {
  await explorer.close();
}
