// Concurrent identical misses share one upstream request: the first caller runs the work, the
// others wait on the same promise and get the same answer or the same error. The work is never
// tied to one caller's connection, so a waiter that goes away cancels nothing.
export class Coalescer<T> {
  private readonly inflight = new Map<string, Promise<T>>();

  get size(): number {
    return this.inflight.size;
  }

  has(key: string): boolean {
    return this.inflight.has(key);
  }

  /** Settles when no work is in flight, including work started while waiting. */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight.values()]);
  }

  /** `joined` is true when the call waited on work another caller started. */
  run(key: string, work: () => Promise<T>): { promise: Promise<T>; joined: boolean } {
    const existing = this.inflight.get(key);
    if (existing) return { promise: existing, joined: true };
    const promise = work().finally(() => {
      // Only remove our own entry: a later run may have replaced it.
      if (this.inflight.get(key) === promise) this.inflight.delete(key);
    });
    this.inflight.set(key, promise);
    return { promise, joined: false };
  }
}
