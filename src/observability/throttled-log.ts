// A warning that may fire once per request (a dead Redis) is logged at most once per interval,
// with the count of the ones it stood for.
import type { FastifyBaseLogger } from 'fastify';

export const THROTTLED_LOG_INTERVAL_MS = 10_000;

export class ThrottledWarning {
  private lastAt = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly message: string,
    private readonly now: () => number,
    private readonly intervalMs = THROTTLED_LOG_INTERVAL_MS,
  ) {}

  warn(err: unknown, fields: Record<string, unknown> = {}): void {
    const t = this.now();
    if (t - this.lastAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.log.warn({ ...fields, err: err instanceof Error ? err.message : String(err), suppressed: this.suppressed }, this.message);
    this.lastAt = t;
    this.suppressed = 0;
  }
}
