// A process that writes to the webhook outbox of a SQLite store and is then killed
// (test/process/outbox-crash.test.ts): it opens the file, enqueues `count` deliveries created
// just before `now`, claims the `claim` oldest with a lease of `leaseMs`, settles the first of
// those as delivered, prints one JSON line of what it wrote once every write has resolved, and
// then waits, its store never closed, for the SIGKILL.
//
//   node --import tsx test/support/outbox-child.ts <file> <now> <count> <claim> <leaseMs>
import { SqliteStore } from '../../src/store/sqlite.js';

const [file, nowArg, countArg, claimArg, leaseArg] = process.argv.slice(2);
if (!file || !nowArg || !countArg || !claimArg || !leaseArg) {
  console.error('usage: outbox-child.ts <file> <now> <count> <claim> <leaseMs>');
  process.exit(2);
}
const now = Number(nowArg);
const count = Number(countArg);
const store = new SqliteStore(file);
const deliveries = Array.from({ length: count }, (_, i) => ({
  id: `crash:${i}|wh_crash`,
  eventId: `crash:${i}`,
  type: 'credits.threshold',
  webhook: 'wh_crash',
  keyId: '',
  body: JSON.stringify({ n: i }),
  createdAt: now - count + i,
}));
const enqueued = await store.outbox.enqueue(deliveries);
const claimed = await store.outbox.claim(now, Number(leaseArg), Number(claimArg));
const first = claimed[0];
const settled = first
  ? await store.outbox.settle(first.id, first.attempts, { status: 'delivered', at: now, lastStatus: 200, lastError: '' })
  : false;
process.stdout.write(`${JSON.stringify({ enqueued, claimed: claimed.map((d) => d.id), delivered: settled ? first?.id : null })}\n`);
// Kept alive until killed: the store stays open, as in a gateway that crashes mid-work.
setInterval(() => {}, 60_000);
