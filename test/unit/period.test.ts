import { describe, expect, it } from 'vitest';
import { periodWindow } from '../../src/quota/period.js';

describe('periodWindow', () => {
  it('daily periods run from 00:00 UTC to the next 00:00 UTC', () => {
    expect(periodWindow('daily', Date.UTC(2026, 10, 22, 23, 59, 59, 999))).toEqual({
      id: 'd20261122',
      startMs: Date.UTC(2026, 10, 22),
      endMs: Date.UTC(2026, 10, 23),
    });
    expect(periodWindow('daily', Date.UTC(2026, 10, 23))).toEqual({
      id: 'd20261123',
      startMs: Date.UTC(2026, 10, 23),
      endMs: Date.UTC(2026, 10, 24),
    });
    // Going back in time (an injected clock) is answered right too, not from the memo.
    expect(periodWindow('daily', Date.UTC(2026, 10, 22, 1)).id).toBe('d20261122');
  });

  it('monthly periods run from the 1st to the next 1st, across years', () => {
    expect(periodWindow('monthly', Date.UTC(2026, 11, 31, 23, 0))).toEqual({
      id: 'm202612',
      startMs: Date.UTC(2026, 11, 1),
      endMs: Date.UTC(2027, 0, 1),
    });
    expect(periodWindow('monthly', Date.UTC(2027, 1, 28))).toEqual({
      id: 'm202702',
      startMs: Date.UTC(2027, 1, 1),
      endMs: Date.UTC(2027, 2, 1),
    });
  });

  it('the last day of a month rolls into the next month', () => {
    expect(periodWindow('daily', Date.UTC(2026, 1, 28, 12)).endMs).toBe(Date.UTC(2026, 2, 1));
  });
});
