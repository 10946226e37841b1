// The webhook outbox of the embedded store across a crash: a process (test/support/outbox-child.ts)
// enqueues deliveries, claims some, settles one, and is killed with SIGKILL, its store never
// closed. Reopened, the file has every delivery it enqueued; the one it settled stays delivered;
// the ones it claimed and never settled are leased until their lease ends, and claimable again
// then, at their second attempt: at least once, never lost.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'egw-outbox-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Written {
  enqueued: string[];
  claimed: string[];
  delivered: string | null;
}

/** Runs the child until it has printed what it wrote, then kills it with SIGKILL. */
async function writeAndCrash(file: string, now: number, count: number, claim: number, leaseMs: number): Promise<Written> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/support/outbox-child.ts'), file, String(now), String(count), String(claim), String(leaseMs)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before writing:\n${err}`)));
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return JSON.parse(line) as Written;
}

describe('the outbox across a crash (SIGKILL) on SQLite', () => {
  it('keeps every delivery enqueued; a claimed one never settled is claimable again when its lease ends, at attempt 2', async () => {
    const file = join(dir, 'crash', 'store.db');
    const now = Date.now();
    const lease = 30_000;
    const written = await writeAndCrash(file, now, 20, 5, lease);
    expect(written.enqueued).toHaveLength(20);
    expect(written.claimed).toHaveLength(5);
    expect(written.delivered).toBe(written.claimed[0]);

    const store = new SqliteStore(file);
    try {
      const listed = (await store.outbox.listDeliveries({ limit: 100 })).deliveries;
      expect(listed.map((d) => d.id).sort()).toEqual([...written.enqueued].sort());
      expect(await store.outbox.getDelivery(written.delivered!)).toMatchObject({ status: 'delivered', attempts: 1, deliveredAt: now });
      const leased = written.claimed.slice(1);
      for (const id of leased) {
        expect(await store.outbox.getDelivery(id)).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: now + lease });
      }
      // Before the lease ends: the 15 never claimed, and none of the leased ones.
      const fresh = await store.outbox.claim(now + lease - 1, lease, 100);
      expect(fresh.map((d) => d.id).sort()).toEqual(written.enqueued.filter((id) => !written.claimed.includes(id)).sort());
      expect(fresh.every((d) => d.attempts === 1)).toBe(true);
      // When it ends: the leased ones, at their second attempt; never the delivered one.
      const again = await store.outbox.claim(now + lease, lease, 100);
      expect(again.map((d) => [d.id, d.attempts])).toEqual(leased.map((id) => [id, 2]));
    } finally {
      await store.close();
    }
  });
});
