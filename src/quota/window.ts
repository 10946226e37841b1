// The requests-per-second window, one algorithm for both quota stores (the Redis script in
// redis-scripts.ts is this function in Lua): a fixed window per key that opens with the key's first
// request and lasts RATE_WINDOW_MS, the algorithm of rate-limiter-flexible's limiters. Every
// instant comes from the decision's clock, never from a store's own, so a test moves time
// instead of waiting for it, and two stores given the same instants give the same answers.

/** The rate-limit window: requests per second are counted in fixed one-second windows. */
export const RATE_WINDOW_MS = 1_000;

export interface RateWindow {
  /** When the window opened (the decision clock's ms). */
  startMs: number;
  /** Requests counted in it, refused ones included. */
  count: number;
}

/** Whether `window` still holds at `nowMs` (windowHoldsFrom). */
export function windowHolds(window: RateWindow | undefined, nowMs: number): window is RateWindow {
  return window !== undefined && windowHoldsFrom(window.startMs, nowMs);
}

/**
 * Whether a window that opened at `startMs` still holds at `nowMs`. A window is over once
 * RATE_WINDOW_MS have passed since it opened. An instant more than a window *before* its start (a
 * clock set back, or a gateway host whose clock is behind another's) also ends it, so that a
 * window can never last more than twice its length.
 */
export function windowHoldsFrom(startMs: number, nowMs: number): boolean {
  return nowMs < startMs + RATE_WINDOW_MS && nowMs > startMs - RATE_WINDOW_MS;
}

/** Milliseconds until the window ends, 1 to RATE_WINDOW_MS. */
export function resetMs(window: RateWindow, nowMs: number): number {
  return resetMsFrom(window.startMs, nowMs);
}

/** resetMs of a window that opened at `startMs`. */
export function resetMsFrom(startMs: number, nowMs: number): number {
  return Math.min(Math.max(startMs + RATE_WINDOW_MS - nowMs, 1), RATE_WINDOW_MS);
}
