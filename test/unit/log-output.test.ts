// Log lines on their way to the destination (observability/log-output.ts): batched access lines
// and pino's own lines arrive in the order they were written, byte for byte in UTF-8, and a
// batch is handed over only when the next line could not fit, or when drained.
import { describe, expect, it } from 'vitest';
import { LogOutput } from '../../src/observability/log-output.js';

function sink() {
  const chunks: Buffer[] = [];
  return { chunks, write: (c: Buffer) => void chunks.push(Buffer.from(c)), text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('LogOutput', () => {
  it('keeps access lines until a batch would overflow, then hands the batch over whole', () => {
    const out = sink();
    const lines = new LogOutput(out, 80);
    lines.line('a'.repeat(20) + '\n'); // 21 units: up to 63 bytes, 21 taken
    expect(out.chunks).toHaveLength(0);
    lines.line('b'.repeat(20) + '\n'); // 21 + 63 > 80: the first is handed over first
    expect(out.chunks.map(String)).toEqual(['a'.repeat(20) + '\n']);
    lines.drain();
    expect(out.text()).toBe('a'.repeat(20) + '\n' + 'b'.repeat(20) + '\n');
    lines.drain(); // nothing waiting: nothing written
    expect(out.chunks).toHaveLength(2);
  });

  it('writes pino lines after the access lines before them', () => {
    const out = sink();
    const lines = new LogOutput(out, 1024);
    lines.line('1\n');
    lines.line('2\n');
    lines.write('pino\n');
    lines.line('3\n');
    lines.drain();
    expect(out.text()).toBe('1\n2\npino\n3\n');
  });

  it('encodes any text as UTF-8, including lines longer than a batch', () => {
    const out = sink();
    const lines = new LogOutput(out, 64);
    const texts = ['{"path":"/é/ü"}\n', '{"k":"\u2028 😀"}\n', `{"long":"${'x😀'.repeat(40)}"}\n`, 'plain\n'];
    for (const t of texts) lines.line(t);
    lines.drain();
    expect(out.text()).toBe(texts.join(''));
  });

  it('hands over a batch the destination may keep: the next batch does not overwrite it', () => {
    const kept: Buffer[] = [];
    const lines = new LogOutput({ write: (c) => void kept.push(c) }, 32);
    lines.line('first\n');
    lines.drain();
    lines.line('second\n');
    lines.drain();
    expect(kept.map(String)).toEqual(['first\n', 'second\n']);
  });
});
