// A warning that may fire once per request (a dead Redis) is logged at most once per interval,
// with the count of the ones it stood for.
import type { Logger } from 'pino';

export const THROTTLED_LOG_INTERVAL_MS = 10_000;

export class ThrottledWarning {
  private lastAt = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
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

/**
 * One ThrottledWarning per subject (a chain and a failure kind, say): a dead explorer under
 * load writes one line per interval, and a failure of another kind or chain is still heard.
 */
export class ThrottledWarnings {
  private readonly bySubject = new Map<string, ThrottledWarning>();

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly message: string,
    private readonly now: () => number,
    private readonly intervalMs = THROTTLED_LOG_INTERVAL_MS,
  ) {}

  warn(subject: string, err: unknown, fields: Record<string, unknown> = {}): void {
    let one = this.bySubject.get(subject);
    if (!one) {
      // Subjects come from the configuration and small fixed sets; the bound is a safeguard.
      if (this.bySubject.size >= 1_000) this.bySubject.clear();
      one = new ThrottledWarning(this.log, this.message, this.now, this.intervalMs);
      this.bySubject.set(subject, one);
    }
    one.warn(err, fields);
  }
}
