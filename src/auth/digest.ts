// The identity of an API key: the sha256 digest of its text, which is all a configuration (the
// `sha256` form) or a store ever needs to hold. Pure: the one place the rule is written.
import { createHash } from 'node:crypto';

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A configured key's digest: its `sha256` as given (in lower case), or the digest of its `key`. */
export function configuredDigest(k: { key?: string | undefined; sha256?: string | undefined }): string {
  return k.sha256?.toLowerCase() ?? hashKey(k.key ?? '');
}
