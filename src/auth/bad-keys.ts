// Key guessing costs the guesser (`security.badKeys`): wrong keys (the key step's BAD_KEY),
// counted per client address over a sliding window; `failures` of them within `windowSeconds`
// block the address for `blockSeconds`, whatever key it sends meanwhile (the pipeline answers
// 429 TOO_MANY_BAD_KEYS with Retry-After, RFC 6585 section 4:
// https://www.rfc-editor.org/rfc/rfc6585#section-4).
//
// Off the hot path of known keys: the pipeline asks `blocking` (a Map's size) on every request,
// and only while some address is blocked looks the request's address up (one Map lookup); the
// counters are read and written only for a wrong key. Expired blocks are swept from the front
// as time passes, so once an attack's blocks end, requests pay the size check alone again.
//
// Bounded: counters of at most `maxAddresses` addresses (an LRU, lru-cache's `max`:
// https://github.com/isaacs/node-lru-cache#max), each `failures` times; blocks of at most
// `maxAddresses` addresses, the oldest (first to end) dropped first. A flood from more addresses
// than that pushes the oldest counters out, never past the bound.
import { LRUCache } from 'lru-cache';

/** The `security.badKeys` settings (config/schema.ts), in a type of auth/'s own. */
export interface BadKeysSettings {
  /** Wrong keys within the window that block an address; 0: off. */
  readonly failures: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
  /** Most addresses counted at once, and most blocked at once. */
  readonly maxAddresses: number;
}

/** An address's latest wrong keys: their times (ms), a ring of `failures` slots, `next` the oldest once full. */
interface Failures {
  readonly times: number[];
  next: number;
  count: number;
}

export class BadKeys {
  private settings: BadKeysSettings;
  private counters: LRUCache<string, Failures>;
  /** Blocked address -> end of its block (ms); in the order the blocks were made. */
  private readonly blocks = new Map<string, number>();
  /** When the first block of `blocks` ends (ms), to sweep ended blocks from the front; Infinity without blocks. */
  private firstEnd = Infinity;

  constructor(settings: BadKeysSettings) {
    this.settings = settings;
    this.counters = new LRUCache({ max: settings.maxAddresses });
  }

  /**
   * Whether any address may be blocked: false (the usual case), the pipeline reads no address
   * and looks nothing up.
   */
  get blocking(): boolean {
    return this.blocks.size !== 0;
  }

  /** Addresses with wrong keys counted (at most maxAddresses). */
  get counted(): number {
    return this.counters.size;
  }

  /** Blocks held, ended ones not yet swept included (at most maxAddresses). */
  get blocked(): number {
    return this.blocks.size;
  }

  /** How long `address` stays blocked, ms; 0 when it is not. */
  blockedMs(address: string | undefined, nowMs: number): number {
    if (nowMs >= this.firstEnd) this.sweep(nowMs);
    if (address === undefined) return 0;
    const end = this.blocks.get(address);
    if (end === undefined) return 0;
    if (end > nowMs) return end - nowMs;
    this.blocks.delete(address);
    return 0;
  }

  /**
   * Counts a wrong key from `address` (undefined: the connection is gone, nothing to count).
   * True when it blocked the address: the `failures`-th within the window.
   */
  failed(address: string | undefined, nowMs: number): boolean {
    const { failures, windowSeconds, blockSeconds } = this.settings;
    if (failures === 0 || address === undefined) return false;
    let f = this.counters.get(address);
    if (f === undefined) {
      f = { times: new Array<number>(failures).fill(0), next: 0, count: 0 };
      this.counters.set(address, f);
    }
    f.times[f.next] = nowMs;
    f.next = f.next + 1 === failures ? 0 : f.next + 1;
    if (f.count < failures) f.count++;
    // Full, the slot `next` holds the oldest of the latest `failures`: within the window, block.
    if (f.count < failures || nowMs - f.times[f.next]! >= windowSeconds * 1000) return false;
    this.counters.delete(address);
    this.block(address, nowMs, nowMs + blockSeconds * 1000);
    return true;
  }

  /**
   * New settings (a reload). Blocks already made stay to their end unless `failures` is now 0;
   * counters are started afresh when their shape (`failures`, `maxAddresses`) changed.
   */
  configure(next: BadKeysSettings): void {
    const was = this.settings;
    this.settings = next;
    if (next.failures === 0) {
      this.counters.clear();
      this.blocks.clear();
      this.firstEnd = Infinity;
      return;
    }
    if (next.failures !== was.failures || next.maxAddresses !== was.maxAddresses) {
      this.counters = new LRUCache({ max: next.maxAddresses });
    }
    while (this.blocks.size > next.maxAddresses) this.dropFirst();
  }

  private block(address: string, nowMs: number, end: number): void {
    this.blocks.delete(address);
    if (this.blocks.size >= this.settings.maxAddresses) this.sweep(nowMs);
    while (this.blocks.size >= this.settings.maxAddresses) this.dropFirst();
    if (this.blocks.size === 0) this.firstEnd = end;
    this.blocks.set(address, end);
  }

  /** Drops the blocks that ended, from the front, up to the first that has not. */
  private sweep(nowMs: number): void {
    for (const [address, end] of this.blocks) {
      if (end > nowMs) {
        this.firstEnd = end;
        return;
      }
      this.blocks.delete(address);
    }
    this.firstEnd = Infinity;
  }

  /** Drops the oldest block (at the bound). */
  private dropFirst(): void {
    const first = this.blocks.keys().next();
    if (first.done === true) return;
    this.blocks.delete(first.value);
    this.firstEnd = this.blocks.size === 0 ? Infinity : this.blocks.values().next().value!;
  }
}
