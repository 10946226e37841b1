// Types for the in-process store rate-limiter-flexible's RateLimiterMemory keeps its windows in.
// The package ships no types for this module (it is not named in its index), so the part the
// gateway uses is declared here; test/contracts/quota-store.test.ts checks its behaviour.
declare module 'rate-limiter-flexible/lib/component/MemoryStorage/MemoryStorage.js' {
  import type { RateLimiterRes } from 'rate-limiter-flexible';

  export default class MemoryStorage {
    /** Adds `value` to the key's count, starting a window of `durationSec` if none is open. */
    incrby(key: string, value: number, durationSec: number): RateLimiterRes;
  }
}
