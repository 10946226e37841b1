// Where log lines go on their way to pino's destination (sonic-boom). Access lines, one per
// request, are gathered into batches of a few KiB first and handed over a batch at a time:
// sonic-boom 4 measures the UTF-8 length of its whole pending buffer on every write
// (node_modules/sonic-boom/index.js, write()), which made each line cost ~2 µs once a few KiB
// were pending. Any other line (pino's) first sends the batch ahead of it, so lines keep their order.
export interface LineSink {
  write(chunk: string): unknown;
}

export class LogOutput implements LineSink {
  private pending = '';

  constructor(
    private readonly out: LineSink,
    private readonly batchChars: number,
  ) {}

  /** An access line: batched. */
  readonly line = (text: string): void => {
    this.pending += text;
    if (this.pending.length >= this.batchChars) this.drain();
  };

  /** Any other line, from pino: after what is batched. */
  write(text: string): boolean {
    this.drain();
    this.out.write(text);
    return true;
  }

  /** Hands what is batched to the destination. */
  drain(): void {
    if (this.pending === '') return;
    const batch = this.pending;
    this.pending = '';
    this.out.write(batch);
  }
}
