// Credit periods, in UTC: daily periods start at 00:00, monthly ones on the 1st at 00:00.
// Pure: the clock is passed in, so rollover is tested without waiting for midnight.
import type { PlanConfig } from '../config/schema.js';

export type Period = PlanConfig['period'];

export interface PeriodWindow {
  /** Names the period in store keys: `d20261122` or `m202611`. */
  id: string;
  /** First millisecond of the period (unix ms). */
  startMs: number;
  /** First millisecond of the next period (unix ms). */
  endMs: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The last window computed per kind: every request of a day asks for the same one. */
const last: Record<Period, PeriodWindow | undefined> = { daily: undefined, monthly: undefined };

export function periodWindow(period: Period, nowMs: number): PeriodWindow {
  const known = last[period];
  if (known && nowMs >= known.startMs && nowMs < known.endMs) return known;
  const computed = computeWindow(period, nowMs);
  last[period] = computed;
  return computed;
}

function computeWindow(period: Period, nowMs: number): PeriodWindow {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (period === 'monthly') return { id: `m${y}${pad(m + 1)}`, startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
  const day = d.getUTCDate();
  return { id: `d${y}${pad(m + 1)}${pad(day)}`, startMs: Date.UTC(y, m, day), endMs: Date.UTC(y, m, day + 1) };
}

/**
 * The period of the other kind that spending in `w` also counts in, so that a plan change between
 * a daily and a monthly plan keeps the new period's spend (types.ts): a day's month, or, for a
 * month, the day `atMs` falls in (kept within the month). Not cached: it is asked once per call
 * to a store, not per request.
 */
export function twinWindow(w: PeriodWindow, atMs: number): PeriodWindow {
  if (w.id.startsWith('d')) return computeWindow('monthly', w.startMs);
  return computeWindow('daily', Math.min(Math.max(atMs, w.startMs), w.endMs - 1));
}

/** The period a store key's id names (`d20261126`, `m202611`); undefined for anything else. */
export function windowOfId(id: string): PeriodWindow | undefined {
  const match = /^(?:d(\d{4})(\d{2})(\d{2})|m(\d{4})(\d{2}))$/.exec(id);
  if (match === null) return undefined;
  const [, dy, dm, dd, my, mm] = match;
  if (dy !== undefined) return computeWindow('daily', Date.UTC(Number(dy), Number(dm) - 1, Number(dd)));
  return computeWindow('monthly', Date.UTC(Number(my), Number(mm) - 1, 1));
}
