// Tests wait for the event they expect, not for a fixed delay: `until` asks again until the
// answer comes. Its deadline only turns a hang into a clear failure; it is not a timing claim.
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what = 'the condition',
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
