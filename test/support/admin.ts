// Calls to a gateway's admin API in tests.
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface AdminAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export function adminClient(baseUrl: () => string, token = ADMIN_TOKEN) {
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<AdminAnswer<T>> => {
    const res = await fetch(baseUrl() + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // CSV or empty
    }
    return { status: res.status, body: parsed as T };
  };
  return {
    call,
    get: <T = Record<string, unknown>>(path: string) => call<T>('GET', path),
    post: <T = Record<string, unknown>>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
    patch: <T = Record<string, unknown>>(path: string, body: unknown) => call<T>('PATCH', path, body),
    delete: <T = Record<string, unknown>>(path: string) => call<T>('DELETE', path),
  };
}
