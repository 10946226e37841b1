// API keys: normalisation from `Authorization: Bearer` or `?apikey=`, and lookup by sha256
// digest, so that a configuration may hold digests instead of keys and the clear key is
// never stored beyond the request that carried it.
import { createHash } from 'node:crypto';
import type { Config, KeyConfig, PlanConfig } from '../config/schema.js';

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export interface ApiKey {
  /** Label for logs and metrics. */
  readonly name: string;
  /** sha256 hex of the key: the identity quota stores use. */
  readonly digest: string;
  readonly planName: string;
  readonly plan: PlanConfig;
  /** The plan's rps as the x-ratelimit-limit header value. */
  readonly rpsHeader: string;
  readonly status: KeyConfig['status'];
  /** undefined = every chain. */
  readonly chains: ReadonlySet<string> | undefined;
}

export type KeySource =
  | { kind: 'none' }
  | { kind: 'conflict' }
  | { kind: 'bad-scheme' }
  | { kind: 'key'; key: string };

/** The credential of `Bearer <token>` (scheme case-insensitive, RFC 9110 11.1), or undefined. */
function bearerToken(header: string): string | undefined {
  // The usual spelling first: no lower-cased copy of the scheme per request.
  if (!header.startsWith('Bearer ') && (header.length < 8 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== 'bearer')) {
    return /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1]; // unusual spacing: the careful path
  }
  const token = header.slice(7).trim();
  return token === '' || /\s/.test(token) ? undefined : token;
}

/**
 * The client's key, from the Authorization header (RFC 6750 section 2.1) and/or the `apikey`
 * query parameter (`apikeys`: every value the query gave). Both given and different is a
 * conflict: guessing which one the client meant could bill the wrong account. An Authorization
 * header of another scheme (Basic, ...) is refused rather than ignored, for the same reason.
 */
export function extractKey(authorization: string | undefined, apikeys: readonly string[]): KeySource {
  let key: string | undefined;
  if (authorization !== undefined && authorization !== '') {
    const token = bearerToken(authorization);
    if (token === undefined) return { kind: 'bad-scheme' };
    key = token;
  }
  for (const k of apikeys) {
    if (k === '') continue;
    if (key !== undefined && key !== k) return { kind: 'conflict' };
    key = k;
  }
  return key === undefined ? { kind: 'none' } : { kind: 'key', key };
}

export class KeyRing {
  private readonly byDigest = new Map<string, ApiKey>();
  /** Clear keys already seen and found, so a repeated key is not hashed again. Bounded by the configured keys. */
  private readonly byClear = new Map<string, ApiKey>();

  constructor(config: Pick<Config, 'keys' | 'plans'>) {
    for (const k of config.keys) {
      const plan = config.plans[k.plan];
      if (!plan) throw new Error(`key ${k.name}: unknown plan ${k.plan}`);
      const digest = k.sha256?.toLowerCase() ?? hashKey(k.key ?? '');
      this.byDigest.set(digest, {
        name: k.name,
        digest,
        planName: k.plan,
        plan,
        rpsHeader: String(plan.rps),
        status: k.status,
        chains: k.chains ? new Set(k.chains) : undefined,
      });
    }
  }

  get size(): number {
    return this.byDigest.size;
  }

  find(key: string): ApiKey | undefined {
    const known = this.byClear.get(key);
    if (known) return known;
    const found = this.byDigest.get(hashKey(key));
    if (found && this.byClear.size < this.byDigest.size * 2) this.byClear.set(key, found);
    return found;
  }
}
