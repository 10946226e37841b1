import { describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import type { ApiKey } from '../../src/keys/ring.js';
import { THROTTLED_LOG_INTERVAL_MS } from '../../src/observability/throttled-log.js';
import { QuotaStep, STORE_BACKOFF_MS } from '../../src/quota/step.js';
import type { Balance, QuotaDecision, QuotaStore } from '../../src/quota/types.js';

/** A store that fails the way a dead or stuck Redis does. */
class FailingStore implements QuotaStore {
  readonly kind = 'redis' as const;
  calls = 0;
  constructor(private readonly message: string) {}
  decide(): Promise<QuotaDecision> {
    this.calls++;
    return Promise.reject(new Error(this.message));
  }
  refund(): Promise<void> {
    return Promise.resolve();
  }
  topUp(): Promise<number> {
    return Promise.reject(new Error(this.message));
  }
  adjustTopUp(): Promise<{ before: number; after: number }> {
    return Promise.reject(new Error(this.message));
  }
  setTopUp(): Promise<{ before: number; after: number }> {
    return Promise.reject(new Error(this.message));
  }
  balance(): Promise<Balance> {
    return Promise.reject(new Error(this.message));
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function recordingLog(): { log: Logger; warnings: unknown[] } {
  const warnings: unknown[] = [];
  const log = { warn: (obj: unknown) => warnings.push(obj) } as unknown as Logger;
  return { log, warnings };
}

const key: ApiKey = {
  id: 'key_d',
  name: 'k',
  account: 'd',
  usageAccount: '',
  expiresAt: undefined,
  owner: undefined,
  source: 'runtime',
  planName: 'p',
  plan: { rps: 1, credits: 1, period: 'daily' },
  rpsHeader: '1',
  status: 'active',
  chains: undefined,
  costs: undefined,
  routes: undefined,
  ips: undefined,
  origins: undefined,
};

/** As the pipeline takes a decision: a rejected store promise goes to storeFailed. */
const decide = (step: QuotaStep) => {
  const d = step.decide(key, 20);
  return d instanceof Promise ? d.catch((err: unknown) => step.storeFailed(err)) : d;
};

describe('QuotaStep', () => {
  it('reports a failed store and logs it at most once per interval', async () => {
    let now = 0;
    const { log, warnings } = recordingLog();
    const step = new QuotaStep(new FailingStore('Connection is closed.'), log, () => now);
    for (let i = 0; i < 100; i++) expect(await decide(step)).toBeUndefined();
    expect(warnings).toHaveLength(1);
    now += THROTTLED_LOG_INTERVAL_MS;
    await decide(step);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatchObject({ suppressed: 99 });
  });

  it('after a timeout, skips the store for a while instead of waiting on it again', async () => {
    let now = 0;
    const store = new FailingStore('Command timed out');
    const step = new QuotaStep(store, recordingLog().log, () => now);
    await decide(step);
    await decide(step);
    expect(store.calls).toBe(1);
    now += STORE_BACKOFF_MS;
    await decide(step);
    expect(store.calls).toBe(2);
  });
});
