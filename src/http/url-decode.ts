// Percent-decoding (RFC 3986 section 2.1) that reports malformed input instead of throwing.

/** `%XX` sequences decoded; undefined when one is malformed or not UTF-8. */
export function percentDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** A name or value of an application/x-www-form-urlencoded query: `+` is a space, then percentDecode. */
export function formDecode(s: string): string | undefined {
  return percentDecode(s.includes('+') ? s.replaceAll('+', ' ') : s);
}
