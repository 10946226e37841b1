// Where log lines go on their way to pino's destination (sonic-boom, in its buffer mode).
// Access lines, one per request, are encoded straight into a batch buffer and handed over a
// batch at a time. sonic-boom 4's string mode measures the UTF-8 length of its whole pending
// string on every write (node_modules/sonic-boom/index.js, write()), which flattened and
// scanned up to its maxWrite bytes per call: 3 % of a logged hit's CPU in a profile. In buffer
// mode it only adds lengths (writeBuffer()). Any other line (pino's) first sends the batch
// ahead of it, so lines keep their order.
export interface BufferSink {
  write(chunk: Buffer): unknown;
}

/**
 * sonic-boom in contentMode 'buffer' takes Buffers (its writeBuffer()); its type declarations
 * only know write(string).
 */
export const bufferSink = (dest: { write(s: string): boolean }): BufferSink => dest as unknown as BufferSink;

/** The most UTF-8 bytes one UTF-16 code unit can take (a surrogate pair takes 4 for 2 units). */
const MAX_BYTES_PER_UNIT = 3;

export class LogOutput {
  private batch: Buffer;
  private used = 0;

  constructor(
    private readonly out: BufferSink,
    private readonly batchBytes: number,
  ) {
    this.batch = Buffer.allocUnsafe(batchBytes);
  }

  /** An access line: batched. */
  readonly line = (text: string): void => {
    const worst = text.length * MAX_BYTES_PER_UNIT;
    if (this.used + worst > this.batchBytes) {
      this.drain();
      if (worst > this.batchBytes) {
        this.out.write(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.used += this.batch.write(text, this.used, 'utf8');
  };

  /** Any other line, from pino: after what is batched. */
  write(text: string): boolean {
    this.drain();
    this.out.write(Buffer.from(text, 'utf8'));
    return true;
  }

  /** Hands what is batched to the destination, which keeps it until written: a new batch starts. */
  drain(): void {
    if (this.used === 0) return;
    const full = this.batch.subarray(0, this.used);
    this.batch = Buffer.allocUnsafe(this.batchBytes);
    this.used = 0;
    this.out.write(full);
  }
}
