// Where log lines go on their way to pino's destination (sonic-boom, in its buffer mode).
//
// Access lines, one per request, are encoded straight into a batch buffer, piece by piece
// (begin, bytes, ascii, str, int, milli, end), and handed over a batch at a time: no string is
// built for them, so a line leaves no garbage and is not encoded twice. A line costs 1.1 us so,
// 1.4 us built as a string and encoded, 2.7 us through pino's general path
// (bench/results/2026-11-23-access-log.md). sonic-boom's string mode also measured the UTF-8
// length of its whole pending string on every write (node_modules/sonic-boom/index.js, write());
// in buffer mode it only adds lengths (writeBuffer()). Any other line (pino's) first sends the
// batch ahead of it, so lines keep their order; a warning or an error is then written at once
// (`urgent`), not with the next batch: an operator reading the log sees it when it happens.
export interface BufferSink {
  write(chunk: Buffer): unknown;
}

/**
 * sonic-boom in contentMode 'buffer' takes Buffers (its writeBuffer()); its type declarations
 * only know write(string).
 */
export const bufferSink = (dest: { write(s: string): boolean }): BufferSink => dest as unknown as BufferSink;

/** The most bytes one UTF-16 code unit takes in a JSON string: `\u001f` (six), or 3 in UTF-8. */
export const MAX_JSON_BYTES_PER_UNIT = 6;
/** The most bytes a number written by int() or milli() takes. */
export const MAX_NUMBER_BYTES = 24;

/** pino's level of warn; error is 50, fatal 60. */
export const WARN_LEVEL = 40;
/**
 * A stream with this property set to true gets the level of each line pino writes to it, in
 * `lastLevel`, before the line (pino's proto.js write(); its multistream reads it the same way).
 */
const PINO_METADATA = Symbol.for('pino.metadata');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
/** int() works on numbers below this in small-integer arithmetic. */
const SMALL = 1e9;

export class LogOutput {
  private batch: Buffer;
  private used = 0;
  /** Writers that hold lines back (app/access-log.ts keeps a turn's lines until its end). */
  private readonly holders: (() => void)[] = [];
  private releasing = false;
  /** The level of the pino line being written (set by pino: PINO_METADATA). */
  lastLevel = 0;

  /**
   * @param batchBytes a batch is handed over when the next line might not fit in it
   * @param eager hand every line over as soon as it ends (tests that read lines one by one)
   * @param urgent called once a pino line of level warn or above has been handed over, after
   *   what was batched ahead of it: the destination writes what it holds now
   */
  constructor(
    private readonly out: BufferSink,
    private readonly batchBytes: number,
    readonly eager = false,
    private readonly urgent?: () => void,
  ) {
    this.batch = Buffer.allocUnsafe(batchBytes);
    (this as unknown as Record<symbol, boolean>)[PINO_METADATA] = true;
  }

  /**
   * Starts a line of at most `maxBytes`: what is batched is handed over first if the line might
   * not fit after it. A line longer than a batch gets a buffer of its own.
   */
  begin(maxBytes: number): void {
    if (this.used + maxBytes <= this.batch.length) return;
    this.handOver();
    if (maxBytes > this.batch.length) this.batch = Buffer.allocUnsafe(maxBytes);
  }

  /** Ends a line begun with begin(). */
  end(): void {
    if (this.eager || this.batch.length > this.batchBytes) this.handOver();
  }

  /** `release` writes the lines a writer holds back; drain() calls it first, so none is left behind. */
  holdsLines(release: () => void): void {
    this.holders.push(release);
  }

  /** Text known to be printable ASCII with nothing to escape (the line's own names). */
  ascii(s: string): void {
    const b = this.batch;
    let p = this.used;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.used = p;
  }

  /** `s.slice(0, end)` as a JSON string, escaped as JSON.stringify escapes it. */
  str(s: string, end = s.length): void {
    const b = this.batch;
    const start = this.used;
    let p = start;
    b[p++] = QUOTE;
    for (let i = 0; i < end; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c === QUOTE || c === BACKSLASH || c > 0x7e) {
        // Rare (a quote, a control character, anything past ASCII): JSON.stringify's escaping.
        this.used = start + b.write(JSON.stringify(end === s.length ? s : s.slice(0, end)), start, 'utf8');
        return;
      }
      b[p++] = c;
    }
    b[p++] = QUOTE;
    this.used = p;
  }

  /** A non-negative integer below 2^53, as JSON writes it; anything else as String() writes it. */
  int(n: number): void {
    if (n >= 0 && n < SMALL) return this.digits(n, 1);
    if (!Number.isSafeInteger(n) || n < 0) return this.ascii(String(n));
    // A time in ms (13 digits): the digits above the last nine, then those nine, zero-padded.
    const high = Math.floor(n / SMALL);
    this.digits(high, 1);
    this.digits(n - high * SMALL, 9);
  }

  /** `n` (0 <= n < 1e9, small-integer arithmetic) in at least `width` digits. */
  private digits(n: number, width: number): void {
    let count = 1;
    for (let rest = n; rest >= 10; rest = (rest / 10) | 0) count++;
    if (count < width) count = width;
    const b = this.batch;
    let p = this.used + count;
    this.used = p;
    for (let i = 0; i < count; i++) {
      const q = (n / 10) | 0;
      b[--p] = ZERO + n - q * 10;
      n = q;
    }
  }

  /** Where the next byte goes in the line being written; copy() takes what was written since. */
  get position(): number {
    return this.used;
  }

  /** A copy of what the line being written holds from `from` on, to write again with bytes(). */
  copy(from: number): Uint8Array {
    return this.batch.slice(from, this.used);
  }

  /** Bytes already encoded (a line's constant parts). */
  bytes(encoded: Uint8Array): void {
    this.batch.set(encoded, this.used);
    this.used += encoded.length;
  }

  /**
   * A millisecond figure rounded to three decimals (`Math.round(x * 1000) / 1000`), as JSON
   * writes it: `12`, `0.5`, `1.234`. The nearest double to such a decimal prints as that
   * decimal (its shortest round-trip form), so the digits are those of the rounded integer.
   */
  milli(x: number): void {
    const k = Math.round(x * 1000);
    if (!(k / 1000 === x) || !Number.isSafeInteger(k) || k < 0) return this.ascii(String(x));
    const whole = Math.floor(k / 1000);
    let frac = k - whole * 1000;
    this.int(whole);
    if (frac === 0) return;
    const b = this.batch;
    let p = this.used;
    b[p++] = 0x2e; // '.'
    let scale = 100;
    while (frac > 0) {
      const d = Math.floor(frac / scale);
      b[p++] = ZERO + d;
      frac -= d * scale;
      scale /= 10;
    }
    this.used = p;
  }

  /** Any other line, from pino: after what is batched; a warning or an error written at once. */
  write(text: string): boolean {
    this.drain();
    this.out.write(Buffer.from(text, 'utf8'));
    if (this.lastLevel >= WARN_LEVEL) this.urgent?.();
    return true;
  }

  /** Has every line held back written, then hands what is batched to the destination. */
  drain(): void {
    if (!this.releasing) {
      this.releasing = true;
      try {
        for (const release of this.holders) release();
      } finally {
        this.releasing = false;
      }
    }
    this.handOver();
  }

  /** Hands what is batched to the destination, which keeps it until written: a new batch starts. */
  private handOver(): void {
    if (this.used === 0) return;
    const full = this.batch.subarray(0, this.used);
    this.batch = Buffer.allocUnsafe(this.batchBytes);
    this.used = 0;
    this.out.write(full);
  }
}
