// Usage rows stay exact when a write's outcome is unknown (usage/recorder.ts, store/types.ts):
// a write whose reply is lost may still have run (a stalled Redis that resumes), and the
// recorder sends the same batch again; the store adds it once. Against a real Redis, with the
// reply's loss made on purpose around the real write.
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis.js';
import type { UsageRow } from '../../src/store/types.js';
import { utcDay } from '../../src/store/day.js';
import { UsageRecorder } from '../../src/usage/recorder.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';

const client = connect();
const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await deletePrefix(client, p);
  client.disconnect();
});
const silent = { warn: () => undefined };

function world(lose: (call: number) => 'ran' | 'not-sent' | 'ok') {
  const prefix = testPrefix('usage-exact');
  prefixes.push(prefix);
  const store = new RedisStore(client, prefix, () => client.duplicate());
  let calls = 0;
  const ids: string[] = [];
  const recorder = new UsageRecorder(
    async (rows: UsageRow[], batchId: string) => {
      ids.push(batchId);
      const outcome = lose(++calls);
      if (outcome === 'not-sent') throw new Error('Stream is not writeable');
      await store.addUsage(rows, batchId);
      if (outcome === 'ran') throw new Error('Command timed out'); // it ran; the reply was lost
    },
    silent,
    Date.now,
  );
  return { store, recorder, ids };
}

const NO_CAUSES = { rateLimited: 0, outOfCredits: 0, forbidden: 0, clientErrors: 0 };

describe('usage after writes whose outcome is unknown', () => {
  it('counts every request once when writes time out after running, while new requests keep coming', async () => {
    // The first three writes run but their replies are lost; then Redis answers again.
    const { store, recorder, ids } = world((call) => (call <= 3 ? 'ran' : 'ok'));
    const now = Date.now();
    const day = utcDay(now);
    let sent = 0;
    for (let flush = 0; flush < 6; flush++) {
      for (let i = 0; i < 10; i++, sent++) recorder.record(now, 'key_a', '', '1', 'stats', 200, 20, i % 2 === 0);
      await recorder.flush();
    }
    await recorder.close();
    expect(await store.listUsage({ from: day, to: day })).toEqual([
      {
        day,
        keyId: 'key_a',
        account: '',
        chain: '1',
        route: 'stats',
        requests: sent,
        credits: sent * 20,
        cacheHits: sent / 2,
        refused: 0,
        ...NO_CAUSES,
        errors: 0,
      },
    ]);
    // The lost batch was sent again under its own id, not merged into a new one.
    expect(ids.slice(0, 4)).toEqual([ids[0], ids[0], ids[0], ids[0]]);
    await store.close();
  });

  it('counts every request once when writes fail before reaching Redis', async () => {
    const { store, recorder } = world((call) => (call % 2 === 1 && call < 6 ? 'not-sent' : 'ok'));
    const now = Date.now();
    const day = utcDay(now);
    for (let flush = 0; flush < 5; flush++) {
      recorder.record(now, 'key_b', '', '10', 'stats', 402, 0, false);
      recorder.record(now, 'key_b', '', '10', 'stats', 200, 20, false);
      await recorder.flush();
    }
    await recorder.close();
    expect(await store.listUsage({ from: day, to: day })).toEqual([
      {
        day,
        keyId: 'key_b',
        account: '',
        chain: '10',
        route: 'stats',
        requests: 10,
        credits: 100,
        cacheHits: 0,
        refused: 5,
        ...NO_CAUSES,
        outOfCredits: 5,
        errors: 0,
      },
    ]);
    await store.close();
  });
});
