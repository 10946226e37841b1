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

/**
 * A decoded path value that is a dot-segment (RFC 3986 section 3.3): `.` or `..`, however the
 * client spelled it (`%2e`, `%2E%2e`, ...). Forwarded in a path, it is resolved by the server that
 * receives it (section 5.2.4), so it names another resource than the route that was checked.
 */
export function isDotSegment(decoded: string): boolean {
  return decoded === '.' || decoded === '..';
}

export const DOT_SEGMENT_DETAIL = 'a path segment may not be . or .. (a dot-segment)';
