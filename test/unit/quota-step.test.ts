import { describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import type { ApiKey } from '../../src/auth/keys.js';
import { THROTTLED_LOG_INTERVAL_MS } from '../../src/observability/throttled-log.js';
import { QuotaStep, STORE_BACKOFF_MS } from '../../src/quota/step.js';
import type { QuotaDecision, QuotaStore } from '../../src/quota/types.js';

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
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function recordingLog(): { log: FastifyBaseLogger; warnings: unknown[] } {
  const warnings: unknown[] = [];
  const log = { warn: (obj: unknown) => warnings.push(obj) } as unknown as FastifyBaseLogger;
  return { log, warnings };
}

const key: ApiKey = {
  name: 'k',
  digest: 'd',
  planName: 'p',
  plan: { rps: 1, credits: 1, period: 'daily' },
  rpsHeader: '1',
  status: 'active',
  chains: undefined,
};

describe('QuotaStep', () => {
  it('reports a failed store and logs it at most once per interval', async () => {
    let now = 0;
    const { log, warnings } = recordingLog();
    const step = new QuotaStep(new FailingStore('Connection is closed.'), log, () => now);
    for (let i = 0; i < 100; i++) expect(await step.decide(key, 20)).toBeUndefined();
    expect(warnings).toHaveLength(1);
    now += THROTTLED_LOG_INTERVAL_MS;
    await step.decide(key, 20);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatchObject({ suppressed: 99 });
  });

  it('after a timeout, skips the store for a while instead of waiting on it again', async () => {
    let now = 0;
    const store = new FailingStore('Command timed out');
    const step = new QuotaStep(store, recordingLog().log, () => now);
    await step.decide(key, 20);
    await step.decide(key, 20);
    expect(store.calls).toBe(1);
    now += STORE_BACKOFF_MS;
    await step.decide(key, 20);
    expect(store.calls).toBe(2);
  });
});
