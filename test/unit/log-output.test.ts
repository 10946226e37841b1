// Log lines on their way to the destination (observability/log-output.ts): access lines written
// piece by piece are the bytes JSON would give, pino's own lines keep their place among them,
// and a batch is handed over only when the next line might not fit, or when drained; a warning
// or an error has the destination write at once.
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LogOutput } from '../../src/observability/log-output.js';

function sink() {
  const chunks: Buffer[] = [];
  return { chunks, write: (c: Buffer) => void chunks.push(Buffer.from(c)), text: () => Buffer.concat(chunks).toString('utf8') };
}

/** One value written alone, as text. */
function written(write: (out: LogOutput) => void): string {
  const out = sink();
  const lines = new LogOutput(out, 64);
  lines.begin(60_000);
  write(lines);
  lines.end();
  lines.drain();
  return out.text();
}

describe('LogOutput', () => {
  it('writes strings as JSON.stringify does, whatever they hold', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(written((o) => o.str(s))).toBe(JSON.stringify(s));
      }),
      { numRuns: 2000 },
    );
    expect(written((o) => o.str('/1/api?apikey=k', 6))).toBe('"/1/api"');
    expect(written((o) => o.str('/é/x?q', 4))).toBe('"/é/x"');
  });

  it('writes integers and millisecond figures as JSON does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(written((o) => o.int(n))).toBe(JSON.stringify(n));
      }),
    );
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (x) => {
        const ms = Math.round(x * 1000) / 1000;
        expect(written((o) => o.milli(ms))).toBe(JSON.stringify(ms));
      }),
      { numRuns: 5000 },
    );
    for (const ms of [0, 0.001, 0.05, 0.5, 1, 12.345, 1000.1, 86_400_000.999]) expect(written((o) => o.milli(ms))).toBe(JSON.stringify(ms));
    // Not rounded to three decimals, negative, not finite: still what String() gives.
    for (const x of [0.0001, 1 / 3, -1, Infinity]) expect(written((o) => o.milli(x))).toBe(String(x));
    expect(written((o) => o.int(-5))).toBe('-5');
  });

  it('keeps lines until the next might not fit, then hands the batch over whole', () => {
    const out = sink();
    const lines = new LogOutput(out, 100);
    const line = (text: string) => {
      lines.begin(text.length);
      lines.ascii(text);
      lines.end();
    };
    line('a'.repeat(59) + '\n');
    expect(out.chunks).toHaveLength(0);
    line('b'.repeat(39) + '\n'); // 60 + 40 fits exactly
    expect(out.chunks).toHaveLength(0);
    line('c\n'); // does not: the first two are handed over first
    expect(out.chunks.map(String)).toEqual(['a'.repeat(59) + '\n' + 'b'.repeat(39) + '\n']);
    lines.drain();
    expect(out.chunks.map(String)[1]).toBe('c\n');
    lines.drain(); // nothing waiting: nothing written
    expect(out.chunks).toHaveLength(2);
  });

  it('gives a line longer than a batch a buffer of its own, and goes back to batches after it', () => {
    const out = sink();
    const lines = new LogOutput(out, 16);
    lines.begin(8);
    lines.ascii('short\n');
    lines.end();
    lines.begin(1000);
    lines.str('x'.repeat(500));
    lines.ascii('\n');
    lines.end();
    expect(out.chunks.map(String)).toEqual(['short\n', `"${'x'.repeat(500)}"\n`]);
    lines.begin(8);
    lines.ascii('after\n');
    lines.end();
    expect(out.chunks).toHaveLength(2);
    lines.drain();
    expect(out.text()).toBe(`short\n"${'x'.repeat(500)}"\nafter\n`);
  });

  it('writes pino lines after the access lines before them', () => {
    const out = sink();
    const lines = new LogOutput(out, 1024);
    const line = (text: string) => {
      lines.begin(text.length);
      lines.ascii(text);
      lines.end();
    };
    line('1\n');
    line('2\n');
    lines.write('pino é\n');
    line('3\n');
    lines.drain();
    expect(out.text()).toBe('1\n2\npino é\n3\n');
  });

  it('hands over batches the destination may keep: the next batch does not overwrite them', () => {
    const kept: Buffer[] = [];
    const lines = new LogOutput({ write: (c) => void kept.push(c) }, 32);
    for (const text of ['first\n', 'second\n']) {
      lines.begin(text.length);
      lines.ascii(text);
      lines.end();
      lines.drain();
    }
    expect(kept.map(String)).toEqual(['first\n', 'second\n']);
  });

  it("has a warning or an error written at once, after what was batched ahead of it; pino's other lines wait", () => {
    const out = sink();
    const events: string[] = [];
    const lines = new LogOutput({ write: (c) => void events.push(`write ${String(c).trim()}`) }, 1024, false, () => events.push('urgent'));
    const log = pino({ level: 'debug', base: null, timestamp: false }, lines);
    const access = (text: string) => {
      lines.begin(text.length);
      lines.ascii(text);
      lines.end();
    };
    access('request 1\n');
    log.info('info');
    expect(events).toEqual(['write request 1', 'write {"level":30,"msg":"info"}']);
    access('request 2\n');
    log.warn('warn');
    access('request 3\n');
    log.error('error');
    log.debug('debug');
    expect(events.slice(2)).toEqual([
      'write request 2',
      'write {"level":40,"msg":"warn"}',
      'urgent',
      'write request 3',
      'write {"level":50,"msg":"error"}',
      'urgent',
      'write {"level":20,"msg":"debug"}',
    ]);
    expect(out.chunks).toHaveLength(0);
  });

  it('hands every line over at once when eager', () => {
    const out = sink();
    const lines = new LogOutput(out, 1024, true);
    lines.begin(3);
    lines.ascii('1\n');
    lines.end();
    expect(out.chunks.map(String)).toEqual(['1\n']);
  });
});
