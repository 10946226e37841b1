// `key.expiring`: 7 days and 1 day before a key's `expiresAt`, told once each (the event id names
// the key, its expiry and the notice, so a new expiry is told again). Every process looks at its
// keys once a minute; the outbox keeps one delivery however many did. A key that first comes
// within a day of its expiry is told the 1-day notice only.
import type { ApiKey } from '../keys/ring.js';
import type { WebhookEmitter } from './emitter.js';
import { EXPIRY_NOTICES, expiringEvent } from './events.js';
import { eventKey } from './credits.js';

export const EXPIRY_SCAN_MS = 60_000;

export class ExpiryAlerts {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emitter: WebhookEmitter,
    /** The keys of the current configuration and the run-time ones. */
    private readonly keys: () => Iterable<ApiKey>,
    private readonly now: () => number,
  ) {
    this.timer = setInterval(() => this.scan(), EXPIRY_SCAN_MS);
    this.timer.unref();
  }

  scan(): void {
    const now = this.now();
    for (const key of this.keys()) this.check(key, now);
  }

  /** One key, at once (one whose expiry was just set need not wait for the next scan). */
  check(key: ApiKey, now = this.now()): void {
    const at = key.expiresAt;
    if (at === undefined || at <= now) return;
    // The nearest notice the key is within (EXPIRY_NOTICES is longest first).
    let notice: (typeof EXPIRY_NOTICES)[number] | undefined;
    for (const n of EXPIRY_NOTICES) if (at - now <= n.beforeMs) notice = n;
    if (notice) this.emitter.emit(expiringEvent(eventKey(key), at, notice.name, now));
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
