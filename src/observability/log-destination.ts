// Where the gateway's log lines are written (stdout, or a file): asynchronously, never blocking
// the event loop, never ending the process.
//
// pino's own destination (sonic-boom) was used before, and a full disk under the log took the
// gateway down (issue 42, item 2): a write that failed with ENOSPC or EFBIG was emitted as an
// 'error' that nothing handled (pino's listener, node_modules/pino/lib/tools.js
// filterBrokenPipe, handles only EPIPE and emits anything else again), the process started to
// exit, and pino's exit handler (autoEnd) called sonic-boom's flushSync, which retries a failed
// write(2) forever with Atomics.wait in between (node_modules/sonic-boom/index.js,
// flushBufferSync: any error that is not EAGAIN still falls through to sleep()). The process
// hung, answering nothing, with no exit a supervisor could see; the usage counted in the last
// second never reached the store.
//
// Here a failed write keeps what it held and is tried again RETRY_MS later, from a timer; lines
// keep arriving into a buffer of at most `maxBuffered` bytes, and what does not fit is dropped
// and counted (`droppedLines`, exported as egw_log_lines_dropped_total). A write that does not
// return (a pipe whose reader stopped, on a blocking descriptor) holds the buffer the same way.
// Once a write succeeds again, `recovered` is told how many lines were lost meanwhile. Nothing
// here throws, and no 'error' event exists to go unhandled.
import { openSync, write, writeSync } from 'node:fs';

/** How long after a failed write (ENOSPC, EFBIG, EPIPE, EIO ...) it is tried again. */
export const RETRY_MS = 1_000;
/** How long after EAGAIN (a non-blocking pipe that is full) the write is tried again. */
const BUSY_RETRY_MS = 100;
/** What may wait in memory for the destination, at most; lines beyond it are dropped. */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/**
 * At exit (flushSync), how long EAGAIN is waited out in all, and how long a write already under
 * way may have been waiting before the destination is taken for stuck (its lines then dropped,
 * not written behind it: a synchronous write would wait as long, with no event loop to end it).
 */
const EXIT_BUDGET_MS = 1_000;
const EXIT_BUSY_SLEEP_MS = 10;

const NEWLINE = 0x0a;

/** Log lines in `chunk` (each ends with a newline; a piece without one counts as one). */
export function linesIn(chunk: Uint8Array): number {
  let n = 0;
  let i = chunk.indexOf(NEWLINE);
  while (i !== -1) {
    n++;
    i = chunk.indexOf(NEWLINE, i + 1);
  }
  return n === 0 && chunk.length > 0 ? 1 : n;
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

export interface LogDestinationOptions {
  /** A descriptor to write to (stdout: 1) ... */
  fd?: number;
  /** ... or a file, opened for appending. */
  file?: string;
  /** A write starts once this many bytes wait (flush() writes fewer). */
  minLength: number;
  /** The most bytes one write(2) takes (chunks are merged up to it; a longer chunk goes alone). */
  maxWrite: number;
  maxBuffered?: number;
  retryMs?: number;
  now?: () => number;
  /** Told, once a write succeeds again after failing, what failed and how many lines were dropped meanwhile. */
  recovered?: (info: { error: string; droppedLines: number }) => void;
}

export class LogDestination {
  private readonly fd: number;
  private readonly minLength: number;
  private readonly maxWrite: number;
  private readonly maxBuffered: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly recovered: LogDestinationOptions['recovered'];
  /** Chunks waiting, oldest first, and their bytes (`current` included). */
  private queue: Buffer[] = [];
  private queued = 0;
  /** What the write under way (or the failed one, until tried again) holds; its rest after a partial write. */
  private current: Buffer | undefined;
  private writing = false;
  private writeStarted = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** flush() was called while a write was under way: once it ends, everything waiting is written. */
  private flushPending = false;
  /** The code of the failure under way (undefined while writes succeed), and lines dropped since it began. */
  private failing: string | undefined;
  private droppedSinceFailure = 0;
  /** Waiting for everything to be written (settle()). */
  private idle: (() => void)[] = [];
  /** Log lines dropped since start (egw_log_lines_dropped_total). */
  droppedLines = 0;
  /** Writes that failed since start. */
  failedWrites = 0;

  constructor(options: LogDestinationOptions) {
    this.fd = options.file !== undefined ? openSync(options.file, 'a') : (options.fd ?? 1);
    this.minLength = options.minLength;
    this.maxWrite = options.maxWrite;
    this.maxBuffered = options.maxBuffered ?? MAX_BUFFERED_BYTES;
    this.retryMs = options.retryMs ?? RETRY_MS;
    this.now = options.now ?? Date.now;
    this.recovered = options.recovered;
  }

  /** Whether the last write failed (and is to be tried again). */
  get failure(): string | undefined {
    return this.failing;
  }

  /** Bytes waiting to be written. */
  get waitingBytes(): number {
    return this.queued;
  }

  /** Queues `data` (whole lines; pino's own writes are strings); dropped and counted when the buffer is full. Never throws. */
  write(data: Buffer | string): boolean {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (chunk.length === 0) return true;
    if (this.queued + chunk.length > this.maxBuffered) {
      this.drop(chunk);
      return false;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued >= this.minLength) this.writeNext();
    return true;
  }

  /** Writes everything waiting, asynchronously: now, or once the write under way ends. */
  flush(): void {
    if (this.queued === 0) return;
    if (this.writing || this.retryTimer) {
      this.flushPending = true;
      return;
    }
    this.flushPending = true;
    this.writeNext();
  }

  /**
   * Resolves once everything waiting is written, at once while writes fail, and after `timeoutMs`
   * at most (close(): the last lines go out with the event loop still running, flushSync after).
   */
  settle(timeoutMs: number): Promise<void> {
    this.flush();
    if ((!this.writing && this.queued === 0) || this.failing !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Writes what waits synchronously, for an exit (no event loop left to write it). Bounded: any
   * error but EAGAIN drops the rest at once; EAGAIN is waited out for EXIT_BUDGET_MS in all; a
   * write under way for longer than that means a stuck destination, and the rest is dropped.
   */
  flushSync(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.writing && this.now() - this.writeStarted > EXIT_BUDGET_MS) {
      this.dropAll();
      return;
    }
    const chunks = this.writing || !this.current ? this.queue : [this.current, ...this.queue];
    if (!this.writing) this.current = undefined;
    this.queue = [];
    let budget = EXIT_BUDGET_MS;
    for (let i = 0; i < chunks.length; i++) {
      let buf = chunks[i]!;
      while (buf.length > 0) {
        try {
          const n = writeSync(this.fd, buf);
          this.queued -= n;
          buf = buf.subarray(n);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
          if ((code === 'EAGAIN' || code === 'EBUSY') && budget > 0) {
            sleepSync(EXIT_BUSY_SLEEP_MS);
            budget -= EXIT_BUSY_SLEEP_MS;
            continue;
          }
          this.failedWrites++;
          this.failing ??= code;
          this.drop(buf);
          for (const rest of chunks.slice(i + 1)) this.drop(rest);
          this.queued = this.current?.length ?? 0;
          return;
        }
      }
    }
  }

  private drop(chunk: Buffer): void {
    const n = linesIn(chunk);
    this.droppedLines += n;
    this.droppedSinceFailure += n;
  }

  private dropAll(): void {
    for (const chunk of this.queue) this.drop(chunk);
    this.queue = [];
    this.queued = this.current?.length ?? 0;
  }

  /** Starts the next write(2) unless one is under way or a retry is scheduled. */
  private writeNext(): void {
    if (this.writing || this.retryTimer) return;
    if (!this.current) {
      if (this.queue.length === 0) return;
      // Merged up to maxWrite: with server.workers, PIPE_BUF, so a write to the shared pipe stays whole.
      let n = 0;
      let len = 0;
      while (n < this.queue.length && (n === 0 || len + this.queue[n]!.length <= this.maxWrite)) len += this.queue[n++]!.length;
      const parts = this.queue.splice(0, n);
      this.current = n === 1 ? parts[0]! : Buffer.concat(parts, len);
    }
    this.writing = true;
    this.writeStarted = this.now();
    write(this.fd, this.current, 0, this.current.length, null, (err, written) => this.written(err, written));
  }

  private written(err: NodeJS.ErrnoException | null, n: number): void {
    this.writing = false;
    if (err) {
      const busy = err.code === 'EAGAIN' || err.code === 'EBUSY';
      if (!busy) {
        this.failedWrites++;
        this.failing ??= err.code ?? 'unknown';
      }
      // Kept as it is, tried again later: from a timer, never in a loop.
      this.retryTimer = setTimeout(
        () => {
          this.retryTimer = undefined;
          this.writeNext();
        },
        busy ? BUSY_RETRY_MS : this.retryMs,
      );
      this.retryTimer.unref();
      if (!busy) this.wake();
      return;
    }
    const current = this.current!;
    this.queued -= n;
    this.current = n < current.length ? current.subarray(n) : undefined;
    if (this.failing !== undefined) {
      const info = { error: this.failing, droppedLines: this.droppedSinceFailure };
      this.failing = undefined;
      this.droppedSinceFailure = 0;
      this.recovered?.(info);
    }
    if (this.current || this.queued >= this.minLength || (this.flushPending && this.queued > 0)) {
      this.writeNext();
      return;
    }
    this.flushPending = false;
    if (this.queued === 0) this.wake();
  }

  private wake(): void {
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  }
}
