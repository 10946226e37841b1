// Seeded randomness for the replay's workload: the same seed gives the same request stream on
// every machine. FNV-1a of a label seeds mulberry32, as fixture/data.ts does for its data; each
// part of the workload draws from its own labelled stream, so adding a kind of request does not
// shift what the others draw.

import { rngFor } from '../../fixture/data.js';

export type Rng = () => number;

/** A generator for `label`: the fixture's own (FNV-1a 32-bit over its UTF-16 code units, then mulberry32). */
export const seeded = (label: string): Rng => rngFor(label);

/** One uniform number in [0, 1) for `label`: a stable attribute of a thing (a rank's block, a hash). */
export const uniformOf = (label: string): number => seeded(label)();

/** An exponential draw of the given mean (inverse transform). */
export const exponential = (rng: Rng, mean: number): number => -Math.log(1 - rng()) * mean;

/**
 * Zipf's law over ranks 1..n: P(rank k) proportional to 1 / k^s, drawn by inverse transform over
 * the cumulative weights (a binary search: n up to a few hundred thousand is cheap).
 */
export class Zipf {
  private readonly cumulative: Float64Array;

  constructor(
    readonly n: number,
    readonly s: number,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`Zipf: n must be a positive integer, got ${n}`);
    this.cumulative = new Float64Array(n);
    let sum = 0;
    for (let k = 1; k <= n; k++) {
      sum += 1 / k ** s;
      this.cumulative[k - 1] = sum;
    }
  }

  /** P(rank k). */
  probability(k: number): number {
    if (k < 1 || k > this.n) return 0;
    const total = this.cumulative[this.n - 1] ?? 1;
    return 1 / k ** this.s / total;
  }

  /** A rank in 1..n. */
  draw(rng: Rng): number {
    const target = rng() * (this.cumulative[this.n - 1] ?? 0);
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.cumulative[mid] ?? 0) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo + 1;
  }
}
