// The health of one upstream and the choices made from it (src/upstream/health.ts): pure logic
// on a clock the test moves.
import { describe, expect, it } from 'vitest';
import {
  choose,
  chooseTrial,
  DEFAULT_COOL_MS,
  HealthBook,
  HedgeBudget,
  hedgeDelayMs,
  MAX_COOL_MS,
  MAX_EJECT_MS,
  MIN_AUTO_HEDGE_MS,
  REFUSED_MS,
  UpstreamHealth,
} from '../../src/upstream/health.js';

const clock = () => {
  let t = 1_000_000;
  return { now: () => t, move: (ms: number) => (t += ms) };
};
const EJECT = { failures: 5, seconds: 30 };

describe('upstream health', () => {
  it('ejects after `failures` consecutive failures, not before, and a success in between resets the count', () => {
    const c = clock();
    const h = new UpstreamHealth(EJECT, c.now);
    for (let i = 0; i < 4; i++) expect(h.failed('5xx')).toBe(false);
    h.succeeded(5);
    for (let i = 0; i < 4; i++) expect(h.failed('timeout', { ms: 100 })).toBe(false);
    expect(h.inRotation()).toBe(true);
    expect(h.failed('invalid')).toBe(true);
    expect(h.inRotation()).toBe(false);
    expect(h.ejectedUntil).toBe(c.now() + 30_000);
  });

  it('needs a probe once the ejection is over; a failed probe ejects it again for twice as long, up to the cap', () => {
    const c = clock();
    const h = new UpstreamHealth({ failures: 1, seconds: 30 }, c.now);
    h.failed('reset');
    c.move(29_999);
    expect(h.dueForProbe()).toBe(false);
    c.move(1);
    expect(h.dueForProbe()).toBe(true);
    expect(h.inRotation()).toBe(false); // not before its probe says so
    h.probing = true;
    expect(h.dueForProbe()).toBe(false); // one probe at a time
    expect(h.probed(false)).toBe(true);
    expect(h.ejectedUntil - c.now()).toBe(60_000);
    c.move(60_000);
    h.probed(false);
    expect(h.ejectedUntil - c.now()).toBe(120_000);
    for (let i = 0; i < 10; i++) h.probed(false);
    expect(h.ejectedUntil - c.now()).toBe(MAX_EJECT_MS);
    c.move(MAX_EJECT_MS);
    expect(h.probed(true)).toBe(false);
    expect(h.inRotation()).toBe(true);
    // Back in the rotation and answering: the back-off starts again from the base.
    h.succeeded(3);
    h.failed('5xx');
    expect(h.ejectedUntil - c.now()).toBe(30_000);
  });

  it('a 429 cools the upstream for its Retry-After (capped), without counting toward an ejection', () => {
    const c = clock();
    const h = new UpstreamHealth({ failures: 1, seconds: 30 }, c.now);
    expect(h.failed('429', { retryAfterMs: 2_000 })).toBe(false);
    expect(h.inRotation()).toBe(false);
    expect(h.backAt()).toBe(c.now() + 2_000);
    c.move(2_000);
    expect(h.inRotation()).toBe(true);
    h.failed('429');
    expect(h.backAt()).toBe(c.now() + DEFAULT_COOL_MS);
    h.failed('429', { retryAfterMs: 10 * MAX_COOL_MS });
    expect(h.backAt()).toBe(c.now() + MAX_COOL_MS);
    expect(h.ejections).toBe(0);
  });

  it('a refused connection leaves the rotation for a few seconds and counts as a failure', () => {
    const c = clock();
    const h = new UpstreamHealth(EJECT, c.now);
    h.failed('refused');
    expect(h.reachable).toBe(false);
    expect(h.inRotation()).toBe(false);
    c.move(REFUSED_MS);
    expect(h.inRotation()).toBe(true);
    expect(h.consecutiveFailures).toBe(1);
  });

  it('p95 of recent latencies, only with enough samples; a timeout and an outpaced attempt are samples too', () => {
    const c = clock();
    const h = new UpstreamHealth(EJECT, c.now);
    for (let i = 0; i < 7; i++) h.succeeded(10);
    expect(h.p95()).toBeUndefined();
    h.outpaced(500);
    expect(h.p95()).toBe(500);
    for (let i = 0; i < 100; i++) h.succeeded(i + 1);
    expect(h.p95()).toBe(97); // the last 64 samples are 37..100: rank ceil(0.95 x 64) = 61
    h.failed('timeout', { ms: 2_000 });
    expect(h.ewmaMs).toBeGreaterThan(500);
  });
});

describe('selection', () => {
  const make = (c: ReturnType<typeof clock>, ms: number | undefined, name: string) => {
    const health = new UpstreamHealth(EJECT, c.now);
    if (ms !== undefined) health.succeeded(ms);
    return { name, health };
  };

  it('keeps the YAML order between equals, prefers one clearly faster, and weighs outstanding requests', () => {
    const c = clock();
    const a = make(c, 100, 'a');
    const b = make(c, 90, 'b');
    expect(choose([a, b]).map((t) => t.name)).toEqual(['a', 'b']); // 10 % apart: a tie
    const fast = make(c, 20, 'fast');
    expect(choose([a, fast]).map((t) => t.name)).toEqual(['fast', 'a']);
    fast.health.inflight = 20; // 20 ms x (1 + 20 / 4) = 120 > 100
    expect(choose([a, fast]).map((t) => t.name)).toEqual(['a', 'fast']);
    const fresh = make(c, undefined, 'fresh');
    expect(choose([a, fresh])[0]?.name).toBe('fresh'); // never measured: tried
  });

  it('when every upstream is out, one trial at a time, on the one due back first', () => {
    const c = clock();
    const a = make(c, 10, 'a');
    const b = make(c, 10, 'b');
    a.health.failed('429', { retryAfterMs: 20_000 });
    b.health.failed('429', { retryAfterMs: 5_000 });
    expect(chooseTrial([a, b])?.name).toBe('b');
    b.health.probing = true;
    expect(chooseTrial([a, b])).toBeUndefined();
  });
});

describe('hedging', () => {
  it('hedges after a fixed delay, never with 0, and with auto after the p95 once there are enough samples', () => {
    const c = clock();
    const h = new UpstreamHealth(EJECT, c.now);
    expect(hedgeDelayMs(0, h)).toBeUndefined();
    expect(hedgeDelayMs(150, h)).toBe(150);
    expect(hedgeDelayMs('auto', h)).toBeUndefined();
    for (let i = 0; i < 20; i++) h.succeeded(200);
    expect(hedgeDelayMs('auto', h)).toBe(200);
    const quick = new UpstreamHealth(EJECT, c.now);
    for (let i = 0; i < 20; i++) quick.succeeded(1);
    expect(hedgeDelayMs('auto', quick)).toBe(MIN_AUTO_HEDGE_MS);
  });

  it('allows at most hedgeMaxPercent of requests after the burst', () => {
    const budget = new HedgeBudget(10);
    let hedges = 0;
    for (let i = 0; i < 1_000; i++) {
      budget.request();
      if (budget.take()) hedges++;
    }
    expect(hedges).toBeLessThanOrEqual(100 + HedgeBudget.BURST);
    expect(hedges).toBeGreaterThanOrEqual(100);
    const none = new HedgeBudget(0);
    none.request();
    expect(none.take()).toBe(false);
  });
});

describe('the health book', () => {
  it('gives the same health to the same owner and URL across reloads, and forgets the URLs no longer listed', () => {
    const c = clock();
    const book = new HealthBook();
    const h = book.healthOf('1', 'http://a', EJECT, c.now);
    h.failed('5xx');
    expect(book.healthOf('1', 'http://a', { failures: 2, seconds: 5 }, c.now)).toBe(h);
    expect(h.eject).toEqual({ failures: 2, seconds: 5 });
    expect(book.healthOf('10', 'http://a', EJECT, c.now)).not.toBe(h);
    book.retain([['1', 'http://b']]);
    expect(book.healthOf('1', 'http://a', EJECT, c.now)).not.toBe(h);
  });
});
