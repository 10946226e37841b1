// The log's destination (observability/log-destination.ts) against real descriptors: a file, and
// /dev/full, where every write(2) fails with ENOSPC (null(4)), as on a full disk. A failing
// destination never throws, never blocks: it keeps a bounded buffer, drops and counts what does not
// fit, tries again from a timer, and its exit flush gives up at once.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogDestination, linesIn } from '../../src/observability/log-destination.js';
import { until } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'egw-log-dest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (i: number) => Buffer.from(`{"n":${i},"pad":"${'x'.repeat(80)}"}\n`);

describe('LogDestination', () => {
  it('writes every line, in order, merged into writes of at most maxWrite', async () => {
    const file = join(dir, 'ok.log');
    const out = new LogDestination({ file, minLength: 1024, maxWrite: 4096 });
    for (let i = 0; i < 1000; i++) out.write(line(i));
    out.flush();
    await out.settle(5_000);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect([out.droppedLines, out.failedWrites]).toEqual([0, 0]);
  });

  it('on a full disk keeps a bounded buffer, drops and counts the rest, retries from a timer, and never throws', async () => {
    const out = new LogDestination({ file: '/dev/full', minLength: 256, maxWrite: 4096, maxBuffered: 64 * 1024, retryMs: 20 });
    const started = Date.now();
    let accepted = 0;
    for (let i = 0; i < 5_000; i++) if (out.write(line(i))) accepted++;
    // Writing never waits on the disk: 5,000 lines take a few milliseconds, not retries.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(out.waitingBytes).toBeLessThanOrEqual(64 * 1024);
    expect(out.droppedLines).toBe(5_000 - accepted);
    expect(out.droppedLines).toBeGreaterThan(4_000);
    await until(() => out.failedWrites >= 3, 'failed writes tried again from the timer');
    expect(out.failure).toBe('ENOSPC');
    // settle() does not wait for a destination that fails.
    await out.settle(60_000);

    // The exit's synchronous flush: one attempt, then what waits is dropped and counted.
    const exitStarted = Date.now();
    out.flushSync();
    expect(Date.now() - exitStarted).toBeLessThan(500);
    // All of it, but for a write that may be under way (tried again by the timer) as it runs.
    // (at most maxWrite bytes, lines of 90 bytes and more).
    expect(out.waitingBytes).toBeLessThanOrEqual(4096);
    expect(out.droppedLines).toBeGreaterThanOrEqual(5_000 - Math.floor(out.waitingBytes / 90));
    expect(out.droppedLines).toBeLessThanOrEqual(5_000);
  });

  it('counts lines by their newlines', () => {
    expect(linesIn(Buffer.from('a\nb\nc\n'))).toBe(3);
    expect(linesIn(Buffer.from('no newline'))).toBe(1);
    expect(linesIn(Buffer.alloc(0))).toBe(0);
  });
});
