// What a store holds, as strings: the "holds no secret" tests (test/contracts/store.test.ts and
// its PostgreSQL backend) look for secrets among them.

/** Strings, with JSON objects and arrays taken apart into their keys and leaves. */
export function leaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    out.push(value);
    if (value.startsWith('{') || value.startsWith('[')) {
      try {
        leaves(JSON.parse(value), out);
      } catch {
        // not JSON: the string itself is what is stored
      }
    }
  } else if (typeof value === 'number') {
    out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const v of value) leaves(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      leaves(v, out);
    }
  }
  return out;
}
